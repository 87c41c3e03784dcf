/**
 * The pause of a bulk run while a gateway says the service is not there (src/bulk/outage.ts):
 * probes at growing intervals, the last at the deadline, then the run gives up. The clock is the
 * test's: its timers can fire early, as Node's do when the event loop's cached time lags.
 */
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/bulk/clock.js';
import { Outage } from '../../src/bulk/outage.js';
import { RequestGate } from '../../src/bulk/pacing.js';
import { NetworkError } from '../../src/errors.js';

/** A clock whose sleeps end `early` ms before their time (never below 1 ms, as a timer). */
function earlyClock(early: number): Clock & { probesAt: number[] } {
  let now = 0;
  return {
    probesAt: [],
    now: () => now,
    sleep: async (ms) => {
      now += ms > early ? ms - early : Math.max(ms, 1);
    },
  };
}

/** Runs an outage that never ends (every probe fails) until the run gives up. */
async function probesUntilGivenUp(clock: ReturnType<typeof earlyClock>, limitMs: number) {
  let resolve: (probes: number) => void = () => {};
  const givenUp = new Promise<number>((done) => {
    resolve = done;
  });
  const outage = new Outage({
    gate: new RequestGate(undefined),
    clock,
    streak: 1,
    deadline: (since) => since + limitMs,
    probe: async () => {
      clock.probesAt.push(clock.now());
      return false;
    },
    began: () => {},
    ended: () => {},
    gaveUp: (info) => resolve(info.probes),
  });
  outage.gatewayAnswer(new NetworkError('HTTP 504'));
  return { probes: await givenUp, at: clock.probesAt };
}

describe('a service that stays unavailable', () => {
  it('is probed at 1, 3 and 7 s and at the deadline, then given up', async () => {
    const { probes, at } = await probesUntilGivenUp(earlyClock(0), 10_000);
    expect(probes).toBe(4);
    expect(at).toEqual([1000, 3000, 7000, 10_000]);
  });

  it.each([1, 30])(
    'with timers that fire %i ms early: still one probe at the deadline, not a second just after',
    async (early) => {
      const { probes, at } = await probesUntilGivenUp(earlyClock(early), 3000);
      expect(probes).toBe(2);
      expect(at).toEqual([1000 - early, 3000 - early]);
    },
  );
});
