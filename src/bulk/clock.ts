/**
 * The time of a bulk run: monotonic for durations and waits, wall-clock for the times records
 * carry. Tests pass their own.
 */
export interface Clock {
  /** Monotonic ms, for durations. */
  now(): number;
  /**
   * Wall-clock ms since the epoch (Date.now), for the time records carry and for comparing it
   * with the time an earlier run wrote. Absent: Date.now.
   */
  epochMs?(): number;
  /** Resolves after `ms`, or at once when the signal aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const realClock: Clock = {
  now: () => performance.now(),
  epochMs: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    }),
};

/** Wall-clock ms since the epoch, by the run's clock (Date.now when it has none). */
export function epochMs(clock: Clock): number {
  return clock.epochMs?.() ?? Date.now();
}
