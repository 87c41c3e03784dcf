/**
 * Pacing the requests of a bulk run: the `--rate` schedule (Pacer), and the gate every request
 * passes before it starts (its slot, the end of an outage, never after a stop).
 */
import { pacedIntervalMs, pacedWindowMs, type Rate } from '../service/rate.js';
import { type Clock, realClock } from './clock.js';

/** How a run keeps to the service's rate limit. */
export interface Pacing {
  /** `--rate` (or the dialect's default); undefined: as fast as --concurrency allows. */
  pacer: Pacer | undefined;
  /** What every request passes before it starts (its slot, an outage, a stop). */
  gate: RequestGate;
  /** The pause after a 429 that names no Retry-After (60 s with explo); undefined: the back-off. */
  throttleWaitMs: number | undefined;
}

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
