import { pacedIntervalMs, pacedWindowMs, type Rate } from '../service/rate.js';
import { MAX_RETRY_AFTER_MS } from '../transport/http.js';

export {
  DEFAULT_CONCURRENCY,
  DEFAULT_GIVE_UP_AFTER_MS,
  MAX_CONCURRENCY,
  parseConcurrency,
} from '../input/bulk-options.js';
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

/**
 * A request that a stopping run did not start (its slot in the schedule had not come, or the run
 * was waiting for the service to come back): nothing went out. Never reaches `main`: the run
 * records the row as `skipped` ("not sent"), or, for a rotation in doubt, as still to settle.
 */
export class RequestNotSent extends Error {
  constructor() {
    super('not sent: the run stopped before this request went out');
    this.name = 'RequestNotSent';
  }
}

/** A function, not an inline test: TypeScript would keep an earlier narrowing across awaits. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

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

/** What one try of a task came to. */
export type Attempt<R> =
  | { kind: 'done'; result: R }
  /** Not carried out; try again after the wait. `retryAfterMs` is already capped or undefined. */
  | { kind: 'throttled'; retryAfterMs: number | undefined };

/**
 * `--rate`: one schedule of request start times shared by every request of a run, whatever
 * connection or row it belongs to (settling reads and transport retries included): one start
 * every `intervalMs`, never two closer, so no window of any length sees more than its share. A
 * plain "next start time", not a token bucket: a bucket would let a burst through after a pause,
 * and the vendor does not say how it counts. The actual start times of the last `count` requests
 * are kept too, and a start waits until the oldest is a whole window ago: a pause of this
 * process (a timer fired late, a slow disk) then delays the requests after it instead of letting
 * them follow in a burst that a sliding window would refuse.
 */
export class Pacer {
  readonly intervalMs: number;
  private readonly windowMs: number;
  private next = Number.NEGATIVE_INFINITY;
  private heldUntil = Number.NEGATIVE_INFINITY;
  /** The last `count` actual start times, as a ring; `at` is the oldest once full. */
  private readonly starts: number[] = [];
  private oldest = 0;
  private readonly released = new AbortController();

  constructor(
    private readonly rate: Rate,
    private readonly clock: Clock = realClock,
  ) {
    if (!(Number.isSafeInteger(rate.count) && rate.count > 0 && rate.windowMs > 0)) {
      throw new RangeError(`a rate needs a positive count and window, got ${JSON.stringify(rate)}`);
    }
    this.intervalMs = pacedIntervalMs(rate);
    this.windowMs = pacedWindowMs(rate);
  }

  /**
   * Resolves when the caller may start its request. Slots are given in the order they are asked
   * for; a pause (`holdUntil`) moves every slot not yet reached to after it. Once released (the
   * run is stopping), it rejects with RequestNotSent, at once for a caller still waiting: a stop
   * must not let every row that was waiting for its slot go out together (a Ctrl+C at 180/min
   * once sent 8 rotations within 20 ms of the signal).
   */
  async slot(): Promise<void> {
    for (;;) {
      if (this.released.signal.aborted) throw new RequestNotSent();
      const now = this.clock.now();
      const at = Math.max(now, this.next, this.heldUntil, this.windowFree());
      this.next = at + this.intervalMs;
      if (at > now) await this.clock.sleep(at - now, this.released.signal);
      if (this.released.signal.aborted) throw new RequestNotSent();
      // A pause that began while this slot waited, or starts that came late: wait again.
      const started = this.clock.now();
      if (this.heldUntil > started || this.windowFree() > started) continue;
      this.record(started);
      return;
    }
  }

  /** No request starts before `until` (a 429 paused the run). */
  holdUntil(until: number): void {
    if (until > this.heldUntil) this.heldUntil = until;
  }

  /** The run is stopping: nobody waits for a slot any more, and no slot is given. */
  release(): void {
    this.released.abort();
  }

  /** When one more start keeps the last `count` starts within no less than a window. */
  private windowFree(): number {
    if (this.starts.length < this.rate.count) return Number.NEGATIVE_INFINITY;
    return (this.starts[this.oldest] as number) + this.windowMs;
  }

  private record(time: number): void {
    if (this.starts.length < this.rate.count) {
      this.starts.push(time);
      return;
    }
    this.starts[this.oldest] = time;
    this.oldest = (this.oldest + 1) % this.rate.count;
  }
}

/**
 * What every request of a bulk run passes before it starts (a row's try, a transport retry, a
 * settling read): its slot in the `--rate` schedule, and while the service is unavailable the
 * end of that outage (outage.ts). Once the run stops, nothing passes: a request not started by
 * then is never started (RequestNotSent), whatever it was waiting for.
 */
export class RequestGate {
  private stopped = false;
  private closed: { opened: Promise<void>; open: () => void } | undefined;

  constructor(readonly pacer: Pacer | undefined) {}

  /** A request may start at once: no schedule to keep, no outage, no stop. */
  get passable(): boolean {
    return !this.stopped && this.closed === undefined && this.pacer === undefined;
  }

  /** Resolves when a request may start; rejects with RequestNotSent once the run stops. */
  async admit(): Promise<void> {
    for (;;) {
      if (this.stopped) throw new RequestNotSent();
      const closed = this.closed;
      if (closed !== undefined) {
        await closed.opened;
        continue;
      }
      await this.pacer?.slot();
      // Stopped, or the service found unavailable, while this request waited for its slot.
      if (this.stopped) throw new RequestNotSent();
      if (this.closed === undefined) return;
    }
  }

  /** The outage's probe: its slot in the schedule only, through a closed gate. */
  async probeSlot(): Promise<void> {
    if (this.stopped) throw new RequestNotSent();
    await this.pacer?.slot();
    if (this.stopped) throw new RequestNotSent();
  }

  /** The service is unavailable: requests wait until `open` (or a stop). */
  close(): void {
    if (this.closed !== undefined || this.stopped) return;
    let open = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.closed = { opened, open };
  }

  open(): void {
    const closed = this.closed;
    this.closed = undefined;
    closed?.open();
  }

  /** While closed: resolves when it opens (or the run stops). The scheduler starts no row meanwhile. */
  whenOpen(): Promise<void> | undefined {
    return this.closed?.opened;
  }

  /** The run is stopping: no request starts any more, and those waiting learn it at once. */
  stop(): void {
    this.stopped = true;
    this.pacer?.release();
    this.open();
  }
}

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
