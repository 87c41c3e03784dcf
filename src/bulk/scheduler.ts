import { MAX_RETRY_AFTER_MS } from '../transport/http.js';
import { type Clock, realClock } from './clock.js';
import type { Pacer } from './pacing.js';

export {
  DEFAULT_CONCURRENCY,
  DEFAULT_GIVE_UP_AFTER_MS,
  MAX_CONCURRENCY,
  parseConcurrency,
} from '../input/bulk-options.js';
export { type Clock, realClock } from './clock.js';
export { Pacer, RequestGate, RequestNotSent } from './pacing.js';
export { MAX_RETRY_AFTER_MS };

/**
 * The longest wait a bulk run honours from a Retry-After: longer than a single request's (30 s),
 * since a rate limit's window is often a minute (the vendor's is) and a run that comes back
 * before the window ends is only refused again.
 */
export const BULK_MAX_RETRY_AFTER_MS = 120_000;

/** When a throttled answer names no (valid) Retry-After. */
const DEFAULT_RETRY_AFTER_MS = 1_000;
export const GROW_EVERY = 50;

/** A function, not an inline test: TypeScript would keep an earlier narrowing across awaits. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** What one try of a task came to. */
export type Attempt<R> =
  | { kind: 'done'; result: R }
  /** Not carried out; try again after the wait. `retryAfterMs` is already capped or undefined. */
  | { kind: 'throttled'; retryAfterMs: number | undefined };

export interface SchedulerOptions {
  /** The most tasks in flight (1-64). */
  concurrency: number;
  /** `--rate`: a 429's pause also holds the requests already waiting for their slot. */
  pacer?: Pacer | undefined;
  /** Abort: start nothing more, let tasks in flight finish. */
  signal?: AbortSignal;
  clock?: Clock;
  /**
   * While it returns a promise (the service is unavailable), no task starts, retries included,
   * until that promise resolves; tasks in flight go on. Absent: never held.
   */
  held?: () => Promise<void> | undefined;
}

/** What the scheduler is doing now, for the progress line. */
export interface SchedulerState {
  limit: number;
  inFlight: number;
  /** ms left of a Retry-After wait, 0 when not waiting. */
  waitingMs: number;
  throttledTimes: number;
}

export class Scheduler<I, R> {
  private limit: number;
  private readonly max: number;
  private inFlight = 0;
  private successesSinceChange = 0;
  private epoch = 0;
  private pausedUntil = 0;
  private throttledTimes = 0;
  private readonly clock: Clock;

  constructor(
    /** `attempt` counts from 1; the task decides when a row has been tried often enough. */
    private readonly work: (item: I, attempt: number) => Promise<Attempt<R>>,
    private readonly options: SchedulerOptions,
  ) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${options.concurrency}`);
    }
    this.limit = options.concurrency;
    this.max = options.concurrency;
    this.clock = options.clock ?? realClock;
  }

  state(): SchedulerState {
    return {
      limit: this.limit,
      inFlight: this.inFlight,
      waitingMs: Math.max(0, this.pausedUntil - this.clock.now()),
      throttledTimes: this.throttledTimes,
    };
  }

  /**
   * Results in completion order. Ends when every item is done, or after an abort once the
   * tasks in flight are done. A task that throws stops the run the same way, then rethrows.
   */
  async *run(items: Iterable<I> | AsyncIterable<I>): AsyncGenerator<R> {
    for await (const results of this.runBatches(oneByOne(items))) yield* results;
  }

  /**
   * `run` for items that come in batches, yielding results in batches: what finished since the
   * last batch was taken. A bulk run moves thousands of rows; one promise per batch instead of
   * a few per row is a measurable part of its time.
   */
  async *runBatches(
    batches: Iterable<readonly I[]> | AsyncIterable<readonly I[]>,
  ): AsyncGenerator<R[]> {
    const iterator =
      Symbol.asyncIterator in batches
        ? (batches as AsyncIterable<readonly I[]>)[Symbol.asyncIterator]()
        : (batches as Iterable<readonly I[]>)[Symbol.iterator]();
    const signal = this.options.signal;
    const retries: { item: I; attempt: number }[] = [];
    let results: R[] = [];
    /** Items read and not started yet. */
    let batch: readonly I[] = [];
    let taken = 0;
    let exhausted = false;
    let failure: { error: unknown } | undefined;
    let wake: (() => void) | undefined;
    const notify = () => {
      const resume = wake;
      wake = undefined;
      resume?.();
    };
    const nextEvent = () => new Promise<void>((resolve) => (wake = resolve));
    const onAbort = () => notify();
    signal?.addEventListener('abort', onAbort);

    const start = (item: I, attempt: number) => {
      const epoch = this.epoch;
      this.inFlight++;
      this.work(item, attempt).then(
        (outcome) => {
          this.inFlight--;
          if (outcome.kind === 'done') {
            this.succeeded();
            results.push(outcome.result);
          } else {
            retries.push({ item, attempt: attempt + 1 });
            this.throttled(outcome.retryAfterMs, epoch);
          }
          notify();
        },
        (error: unknown) => {
          this.inFlight--;
          failure ??= { error };
          notify();
        },
      );
    };

    const canStartNow = () =>
      failure === undefined &&
      signal?.aborted !== true &&
      this.inFlight < this.limit &&
      this.pausedUntil <= this.clock.now() &&
      this.options.held?.() === undefined &&
      (retries.length > 0 || taken < batch.length);

    try {
      for (;;) {
        // A task that can start now starts before the results go to the consumer (records,
        // history, stdout): its request is on the wire while they are written, and the service
        // is not left waiting for the next row.
        if (results.length > 0 && !canStartNow()) {
          const finished = results;
          results = [];
          yield finished;
        }
        const stopping = failure !== undefined || signal?.aborted === true;
        if (stopping || (exhausted && retries.length === 0)) {
          if (this.inFlight === 0) {
            if (results.length > 0) continue;
            if (failure) throw failure.error;
            return;
          }
          await nextEvent();
          continue;
        }
        const waitMs = this.pausedUntil - this.clock.now();
        if (waitMs > 0) {
          // Results that arrive meanwhile are still yielded; the wait then goes on.
          const cut = new AbortController();
          const both = signal ? AbortSignal.any([signal, cut.signal]) : cut.signal;
          const event = nextEvent();
          await Promise.race([this.clock.sleep(waitMs, both), event]);
          cut.abort();
          continue;
        }
        if (this.inFlight >= this.limit) {
          await nextEvent();
          continue;
        }
        // The service is unavailable: results still come in and are yielded; nothing starts.
        const held = this.options.held?.();
        if (held !== undefined) {
          await Promise.race([held, nextEvent()]);
          continue;
        }
        const retry = retries.shift();
        if (retry) {
          start(retry.item, retry.attempt);
          continue;
        }
        if (taken < batch.length) {
          start(batch[taken++] as I, 1);
          continue;
        }
        const next = await iterator.next();
        if (next.done) exhausted = true;
        // Reading the rows may take a while (a journal fsync); a stop meanwhile still holds.
        else if (failure === undefined && !isAborted(signal)) {
          batch = next.value;
          taken = 0;
        }
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (!exhausted) await iterator.return?.();
    }
  }

  private succeeded(): void {
    this.successesSinceChange++;
    if (this.successesSinceChange >= GROW_EVERY && this.limit < this.max) {
      this.limit++;
      this.successesSinceChange = 0;
    }
  }

  private throttled(retryAfterMs: number | undefined, epoch: number): void {
    this.throttledTimes++;
    const wait = Math.min(retryAfterMs ?? DEFAULT_RETRY_AFTER_MS, BULK_MAX_RETRY_AFTER_MS);
    this.pausedUntil = Math.max(this.pausedUntil, this.clock.now() + wait);
    this.options.pacer?.holdUntil(this.pausedUntil);
    if (epoch === this.epoch) {
      this.limit = Math.max(1, Math.floor(this.limit / 2));
      this.epoch++;
      this.successesSinceChange = 0;
    }
  }
}

async function* oneByOne<I>(items: Iterable<I> | AsyncIterable<I>): AsyncGenerator<readonly I[]> {
  for await (const item of items) yield [item];
}
