/**
 * Bulk runs paced to a rate. `--rate <n>/<s|min>` (default 180/min with the
 * explo dialect, none with interface): every request starts on one schedule, one every
 * window / n, across all connections; a 429 pauses the whole run (Retry-After honoured up to
 * 120 s; without it 60 s with explo); the eta accounts for the rate. Fake clocks throughout.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatProgress, formatProgressLog } from '../../src/bulk/progress.js';
import { type BulkOptions, runBulk } from '../../src/bulk/run.js';
import { type Clock, Pacer, RequestNotSent } from '../../src/bulk/scheduler.js';
import type { Settings } from '../../src/context/settings.js';
import { SlidingWindowThrottle } from '../../src/emulator/throttle.js';
import { ApiError, AuthError, type UgsError, UsageError } from '../../src/errors.js';
import { InFlight } from '../../src/platform/io.js';
import { pacedIntervalMs, parseRate } from '../../src/service/rate.js';
import { bulkOptions } from '../kit/bulk.js';
import { FakeService, groupResult, makeDeps, makeIO, rejection } from '../kit/fakes.js';
import { describeRun, runMain, tempDir } from '../kit/index.js';

/**
 * Virtual time: a sleep ends at the time it was asked for (never later), in order; the clock
 * moves to the earliest pending wake-up whenever nothing else can run.
 */
class VirtualClock implements Clock {
  t = 0;
  private sleepers: { at: number; resolve: () => void }[] = [];
  private ticking = false;
  now(): number {
    return this.t;
  }
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const sleeper = { at: this.t + ms, resolve };
      this.sleepers.push(sleeper);
      signal.addEventListener('abort', () => resolve(), { once: true });
      this.tick();
    });
  }
  private tick(): void {
    if (this.ticking) return;
    this.ticking = true;
    setImmediate(() => {
      this.ticking = false;
      const next = this.sleepers.sort((a, b) => a.at - b.at).shift();
      if (next === undefined) return;
      this.t = Math.max(this.t, next.at);
      next.resolve();
      if (this.sleepers.length > 0) this.tick();
    });
  }
}

const noTimer = { every: () => () => undefined };

function rowsFile(count: number): string {
  const path = join(tempDir('bulk-rate'), 'rows.ndjson');
  writeFileSync(
    path,
    Array.from({ length: count }, (_, i) =>
      JSON.stringify({ user_group_id: `g-${i}`, name: `G ${i}` }),
    ).join('\n'),
  );
  return path;
}

/** A service that records the (virtual) time of every Get User. */
function timedService(clock: VirtualClock, answer?: (n: number) => ApiError | undefined) {
  const times: number[] = [];
  const service = new FakeService({
    get: (request) => {
      times.push(clock.t);
      const refusal = answer?.(times.length);
      if (refusal) throw refusal;
      return groupResult({ provided_id: request.user_group_id, name: request.name });
    },
  });
  return { service, times };
}

function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((t, i) => t - (times[i] as number));
}

const explo = { dialect: 'explo' as const, dialectSource: 'flag' as const };

async function run(
  rows: number,
  settings: Partial<Settings>,
  extra: Partial<BulkOptions> = {},
  answer?: (n: number) => ApiError | undefined,
) {
  const clock = new VirtualClock();
  const { service, times } = timedService(clock, answer);
  const deps = makeDeps({ service, settings });
  const opts = bulkOptions('get', rowsFile(rows), undefined, { concurrency: 8, ...extra });
  await runBulk(opts, deps, { ...noTimer, clock });
  return { times, clock, deps };
}

describe('pacedIntervalMs: window / n with a margin for the jitter of arrivals', () => {
  it.each([
    [{ count: 180, windowMs: 60_000 }, 60_600 / 180],
    [{ count: 600, windowMs: 60_000 }, 101],
    [{ count: 50, windowMs: 1000 }, 21],
  ])('%j -> %d ms', (rate, ms) => {
    expect(pacedIntervalMs(rate)).toBeCloseTo(ms, 9);
  });
});

describe('parseRate', () => {
  it.each([
    ['180/min', 180, 60_000],
    ['3/s', 3, 1000],
    [' 600/min ', 600, 60_000],
  ])('%j', (text, count, windowMs) => {
    expect(parseRate(text, '--rate')).toEqual({ count, windowMs });
  });
  it.each(['0/min', '-1/s', '1.5/s', '180', '180/h', '180/minute', '/min', 'fast', '180 /min'])(
    'refuses %j',
    (text) => {
      expect(() => parseRate(text, '--rate')).toThrow(UsageError);
      expect(() => parseRate(text, '--rate')).toThrow(
        /--rate must be <positive integer>\/s or <positive integer>\/min/,
      );
    },
  );
});

describe('Pacer: one start every window / n, shared by every caller', () => {
  it('gives slots in order, evenly spaced, and a pause holds every slot not yet reached', async () => {
    const clock = new VirtualClock();
    // 10/s: one start every 105 ms (1 s plus its 50 ms margin, over 10).
    const pacer = new Pacer({ count: 10, windowMs: 1000 }, clock);
    const started: number[] = [];
    const take = async () => {
      await pacer.slot();
      started.push(clock.t);
    };
    await Promise.all([take(), take(), take()]);
    expect(started).toEqual([0, 105, 210]);
    const late = take();
    pacer.holdUntil(5000);
    await Promise.all([late, take()]);
    expect(started.slice(3)).toEqual([5000, 5105]);
  });

  it('a start that came late (this process paused) delays the next ones: no burst follows', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer({ count: 2, windowMs: 1000 }, clock);
    const started: number[] = [];
    await pacer.slot();
    started.push(clock.t);
    // The process stalls: the second slot (due at 525 ms) is taken only at 900 ms.
    clock.t = 900;
    await pacer.slot();
    started.push(clock.t);
    // The schedule goes on from the late start (900 + 525), and the start after that must leave
    // the one at 900 a paced window (1050 ms) behind: 1950, however early it was asked for.
    await pacer.slot();
    started.push(clock.t);
    await pacer.slot();
    started.push(clock.t);
    expect(started).toEqual([0, 900, 1425, 1950]);
  });

  it('once released (the run is stopping), nobody waits and no slot is given', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer({ count: 1, windowMs: 60_000 }, clock);
    await pacer.slot();
    // One caller waiting for its slot when the run stops, one asking after.
    const waiting = pacer.slot();
    pacer.release();
    await expect(waiting).rejects.toBeInstanceOf(RequestNotSent);
    await expect(pacer.slot()).rejects.toBeInstanceOf(RequestNotSent);
    expect(clock.t).toBe(0);
  });
});

describe('paced starts against a DRF sliding window, arrivals jittered', () => {
  /** Refusals when requests starting at `starts` reach the throttle up to `jitterMs` late. */
  function refusals(starts: readonly number[], jitterMs: number): number {
    let seed = 7;
    const random = () => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    const arrivals = starts.map((start) => start + random() * jitterMs).sort((a, b) => a - b);
    let now = 0;
    const throttle = new SlidingWindowThrottle({ count: 50, windowMs: 1000 }, () => now);
    return arrivals.filter((arrival) => {
      now = arrival;
      return !throttle.check('client').allowed;
    }).length;
  }

  it('the paced schedule is never refused with up to 45 ms of jitter; exact window/n is', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer({ count: 50, windowMs: 1000 }, clock);
    const starts: number[] = [];
    for (let i = 0; i < 500; i++) {
      await pacer.slot();
      starts.push(clock.t);
    }
    expect(refusals(starts, 45)).toBe(0);
    // The same run with starts exactly 20 ms apart: arrivals that come a little early relative
    // to the one 50 before them are refused.
    const exact = starts.map((_, i) => i * 20);
    expect(refusals(exact, 45)).toBeGreaterThan(0);
    // And the paced run ends within 10% of rows / rate.
    expect(starts.at(-1)).toBeLessThanOrEqual(500 * 20 * 1.1);
  });
});

describe('bulk get --from paced', () => {
  it('explo: 180/min by default, one request every 333 ms across 8 connections', async () => {
    const { times } = await run(30, explo);
    expect(times).toHaveLength(30);
    for (const gap of gaps(times)) expect(gap).toBeCloseTo(60_600 / 180, 6);
  });

  it('interface: no pacing unless --rate is given; --rate 600/min spaces them 100 ms', async () => {
    const free = await run(20, {});
    expect(free.times.every((t) => t === 0)).toBe(true);
    const paced = await run(20, {}, { rate: { count: 600, windowMs: 60_000 } });
    for (const gap of gaps(paced.times)) expect(gap).toBeCloseTo(101, 6);
  });

  it('--rate beats the explo default', async () => {
    const { times } = await run(10, explo, { rate: { count: 10, windowMs: 1000 } });
    for (const gap of gaps(times)) expect(gap).toBeCloseTo(105, 6);
  });

  it('explo: a 429 without Retry-After pauses the whole run 60 s', async () => {
    const tooMany = new ApiError('the service answered HTTP 429', { status: 429 });
    const { times } = await run(6, explo, { concurrency: 1 }, (n) =>
      n === 2 ? tooMany : undefined,
    );
    expect(times).toHaveLength(7);
    const [, throttledAt = 0, retriedAt = 0] = times;
    expect(retriedAt - throttledAt).toBeGreaterThanOrEqual(60_000);
    expect(retriedAt - throttledAt).toBeLessThan(61_000);
  });

  it('interface: a 429 without Retry-After keeps the short back-off', async () => {
    const tooMany = new ApiError('the service answered HTTP 429', { status: 429 });
    const { times } = await run(3, {}, { concurrency: 1 }, (n) => (n === 1 ? tooMany : undefined));
    expect((times[1] as number) - (times[0] as number)).toBeLessThan(5000);
  });

  it.each([
    ['100', 100_000],
    ['600', 120_000],
  ])('Retry-After: %s pauses the run %d ms (honoured up to 120 s)', async (header, waited) => {
    const tooMany = new ApiError('the service answered HTTP 429', {
      status: 429,
      retryAfter: header,
    });
    const { times } = await run(2, {}, { concurrency: 1 }, (n) => (n === 1 ? tooMany : undefined));
    expect((times[1] as number) - (times[0] as number)).toBe(waited);
  });
});

describe('a paced run that stops sends nothing more, however many rows wait for their slot', () => {
  /**
   * A run of 12 rows at 1/s with 8 in flight: 7 rows wait for their slot when the third request
   * goes out, and the run stops then (Ctrl+C, the API token refused, or --give-up-after).
   */
  async function stoppedRun(
    kind: 'get' | 'rotate',
    stop: 'interrupt' | 'auth' | 'give-up',
  ): Promise<{
    sent: number[];
    error: unknown;
    records: { row: number; status: string; error: string | null }[];
  }> {
    const clock = new VirtualClock();
    const io = makeIO({ inFlight: new InFlight() });
    const sent: number[] = [];
    const answer = (): void => {
      sent.push(clock.t);
      if (stop === 'give-up') {
        // Every answer throttled: with --give-up-after 2.5s, the first one after it stops the run.
        throw new ApiError('the service answered HTTP 429', { status: 429, retryAfter: '1' });
      }
      if (sent.length < 3) return;
      if (stop === 'auth') throw new AuthError('the service answered HTTP 401', { status: 401 });
      if (sent.length === 3) io.inFlight?.takeSignal('SIGINT');
    };
    const service = new FakeService({
      get: (request) => {
        answer();
        return groupResult({ provided_id: request.user_group_id, name: request.name });
      },
      rotate: (token) => {
        answer();
        const id = token.replace(/^t-/, '');
        return groupResult({ provided_id: id, name: id, token: `new-${id}` });
      },
    });
    const dir = tempDir('bulk-rate-stop');
    const from = join(dir, 'rows.ndjson');
    writeFileSync(
      from,
      Array.from({ length: 12 }, (_, i) =>
        JSON.stringify(
          kind === 'get'
            ? { user_group_id: `g-${i}`, name: `G ${i}` }
            : { current_token: `t-g-${i}`, user_group_id: `g-${i}`, name: `g-${i}` },
        ),
      ).join('\n'),
    );
    const output = join(dir, 'out.ndjson');
    const opts = bulkOptions(kind, from, output, {
      concurrency: 8,
      rate: { count: 1, windowMs: 1000 },
      ...(stop === 'give-up' && { giveUpAfterMs: 2500 }),
    });
    const error = await rejection(runBulk(opts, makeDeps({ io, service }), { ...noTimer, clock }));
    const records = readFileSync(output, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { row: number; status: string; error: string | null });
    return { sent, error, records };
  }

  it.each([
    ['get', 'interrupt', 130, 'not sent: the run was interrupted'],
    ['rotate', 'interrupt', 130, 'not sent: the run was interrupted'],
    ['get', 'auth', 3, 'not sent: the run stopped (the service answered HTTP 401)'],
    ['rotate', 'auth', 3, 'not sent: the run stopped (the service answered HTTP 401)'],
  ] as const)(
    '%s, stopped by %s: the rows waiting for their slot are skipped, not sent',
    async (kind, stop, exitCode, why) => {
      const { sent, error, records } = await stoppedRun(kind, stop);
      expect((error as UgsError | undefined)?.exitCode).toBe(exitCode);
      // The three requests before the stop, and not one after it.
      expect(sent).toEqual([0, 1050, 2100]);
      const last = new Map(records.map((rec) => [rec.row, rec]));
      expect(last.size).toBe(12);
      const skipped = [...last.values()].filter((rec) => rec.status === 'skipped');
      expect(skipped).toHaveLength(9);
      for (const rec of skipped) expect(rec.error).toBe(why);
      // A rotation's journal: every row that was marked `sending` and never sent says so.
      expect([...last.values()].filter((rec) => rec.status === 'sending')).toEqual([]);
    },
  );

  it('stopped by --give-up-after: no request after the answer that gave up', async () => {
    const { sent, error, records } = await stoppedRun('get', 'give-up');
    expect((error as UgsError | undefined)?.exitCode).toBe(4);
    expect((error as Error).message).toMatch(/^gave up: no request has succeeded for 2\.5s/);
    // The answer that gave up is the first one at or after 2.5 s, and it is the last request.
    const late = sent.filter((t) => t >= 2500);
    expect(late).toHaveLength(1);
    expect(sent.at(-1)).toBe(late[0]);
    const last = new Map(records.map((rec) => [rec.row, rec.status]));
    expect([...last.values()].filter((status) => status === 'skipped').length).toBeGreaterThan(5);
  });
});

describe('the eta accounts for the rate', () => {
  it('never shorter than the rows left times window / n', () => {
    // 10 rows done in 1 s looks like 10 rows/s; at 180/min the 170 left take 56.7 s.
    const state = { done: 10, total: 180, counts: {}, elapsedMs: 1000, minMsPerRow: 60_000 / 180 };
    // (the run passes its paced interval; the exact window / n keeps this arithmetic plain)
    expect(formatProgressLog(state)).toContain('eta 56.6s');
    expect(formatProgress(state, 120)).toContain('eta 56.6s');
    const { minMsPerRow: _, ...unpaced } = state;
    expect(formatProgressLog(unpaced)).toContain('eta 17.0s');
  });
});

describe('--rate on the command line', () => {
  it('is a usage error without --from, or with a value that is not n/s or n/min', async () => {
    const alone = await runMain(['get', '--id', 'a', '--name', 'A', '--rate', '180/min']);
    expect(alone.code, describeRun(alone)).toBe(2);
    expect(alone.stderr).toContain('--rate works only with --from');
    const bad = await runMain(['get', '--from', rowsFile(1), '--rate', '180/hour']);
    expect(bad.code, describeRun(bad)).toBe(2);
    expect(bad.stderr).toContain('--rate must be <positive integer>/s or <positive integer>/min');
  });
});
