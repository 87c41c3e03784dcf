/**
 * Stopped clocks instead of wall-clock upper bounds. "Ends quickly" is shown as "ends while no
 * timer can fire": a step that waited on a timer (a close() grace, a drain() limit, a lock's
 * wait) would never end, whatever the machine's load, and work that needs no timer ends as usual.
 */
import { vi } from 'vitest';

// Taken before any test fakes the timers: the one deadline that still runs while they are stopped.
const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;

/** Far beyond what timer-free work takes on any machine, and within the test's own timeout. */
const STOPPED_DEADLINE_MS = 15_000;

export type StoppedTimer = 'setTimeout' | 'setInterval' | 'Date';

/**
 * Runs `work` with `setTimeout`/`clearTimeout` faked and never advanced (and `Date` frozen
 * when `also` names it). Fails, naming `what`, if `work` has not ended after 15 s of real time:
 * by then it is waiting on a timer that cannot fire. `node:timers/promises` is not faked.
 */
export async function withTimersStopped<T>(
  what: string,
  work: () => Promise<T>,
  also: readonly StoppedTimer[] = [],
): Promise<T> {
  const toFake = new Set<'setTimeout' | 'clearTimeout' | 'setInterval' | 'clearInterval' | 'Date'>([
    'setTimeout',
    'clearTimeout',
  ]);
  if (also.includes('setInterval')) {
    toFake.add('setInterval');
    toFake.add('clearInterval');
  }
  if (also.includes('Date')) toFake.add('Date');
  vi.useFakeTimers({ toFake: [...toFake] });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      work(),
      new Promise<never>((_, reject) => {
        timer = realSetTimeout(
          () => reject(new Error(`${what} waits on a timer (none can fire here)`)),
          STOPPED_DEADLINE_MS,
        );
      }),
    ]);
  } finally {
    realClearTimeout(timer);
    vi.useRealTimers();
  }
}
