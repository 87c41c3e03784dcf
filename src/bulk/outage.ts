/**
 * Telling an outage from a blip. A gateway in front of the service answers 502/503/504 (or an
 * HTML error page) when the service is not there, and also when one request took too long: with
 * 25% of requests delayed past nginx's proxy timeout, 6 such answers in a row come within one
 * 3-second stall of 8 connections. So a run of them does not stop a bulk run: it pauses it.
 * Nothing new starts (rows in flight finish), and ONE request that changes nothing probes the
 * service at growing intervals (1, 2, 4, 8 ... s); the run carries on as soon as a probe or any
 * other request gets through, and stops (exit 4) only when the service stayed unavailable until
 * the deadline (2 minutes, or `--give-up-after` if that ends sooner).
 */
import type { UgsError } from '../errors.js';
import type { Clock } from './clock.js';
import { type RequestGate, RequestNotSent } from './pacing.js';

/** The longest pause for a service that does not come back: then the run stops (exit 4). */
export const OUTAGE_LIMIT_MS = 120_000;
/** The first probe's wait; each next one waits twice as long. */
export const FIRST_PROBE_MS = 1000;

export interface OutageOptions {
  gate: RequestGate;
  clock: Clock;
  /** Gateway answers in a row, with no success between, that pause the run. */
  streak: number;
  /** When an outage whose first gateway answer came at `since` (clock.now()) is given up. */
  deadline(since: number): number;
  /** One request that changes nothing: true when the service answered it (not a gateway). */
  probe(): Promise<boolean>;
  began(outage: OutageInfo): void;
  ended(outage: OutageInfo): void;
  gaveUp(outage: OutageInfo): void;
}

export interface OutageInfo {
  /** clock.now() at the first gateway answer of the run of them. */
  since: number;
  /** The same moment as wall-clock ms since the epoch, to show as a time of day. */
  sinceEpochMs: number;
  /** Probes sent so far. */
  probes: number;
  /** The last gateway answer. */
  last: UgsError;
}

interface Current extends OutageInfo {
  /** clock.now() of the next probe; undefined while one is on its way. */
  nextProbeAt: number | undefined;
  over: AbortController;
}

export class Outage {
  private streak = 0;
  private streakSince: { since: number; sinceEpochMs: number } | undefined;
  private current: Current | undefined;

  constructor(private readonly options: OutageOptions) {}

  /** A request got through: a run of gateway answers is over, and so is an outage. */
  succeeded(): void {
    this.streak = 0;
    this.streakSince = undefined;
    if (this.current !== undefined) this.end(this.current);
  }

  /** A gateway said the service is not there (after the request's own retries). */
  gatewayAnswer(error: UgsError): void {
    if (this.current !== undefined) {
      this.current.last = error;
      return;
    }
    if (this.streakSince === undefined) {
      const { clock } = this.options;
      this.streakSince = { since: clock.now(), sinceEpochMs: clock.epochMs?.() ?? Date.now() };
    }
    this.streak++;
    if (this.streak < this.options.streak) return;
    const current: Current = {
      ...this.streakSince,
      probes: 0,
      last: error,
      nextProbeAt: undefined,
      over: new AbortController(),
    };
    this.current = current;
    this.options.gate.close();
    this.options.began(current);
    void this.probeUntilBack(current);
  }

  /** For the progress line: since when, and ms to the next probe (0 while one is on its way). */
  state(): { sinceEpochMs: number; nextProbeInMs: number } | undefined {
    const current = this.current;
    if (current === undefined) return undefined;
    const next = current.nextProbeAt;
    return {
      sinceEpochMs: current.sinceEpochMs,
      nextProbeInMs: next === undefined ? 0 : Math.max(0, next - this.options.clock.now()),
    };
  }

  /** The run ends or stops: no probe is sent any more, and no timer keeps the process alive. */
  stop(): void {
    this.current?.over.abort();
  }

  private end(current: Current): void {
    if (this.current !== current) return;
    this.current = undefined;
    this.streak = 0;
    this.streakSince = undefined;
    current.over.abort();
    this.options.gate.open();
    this.options.ended(current);
  }

  private async probeUntilBack(current: Current): Promise<void> {
    const { clock, gate } = this.options;
    let interval = FIRST_PROBE_MS;
    // Each probe is due `interval` after the previous one was due (or ended, if it ended later),
    // and the last one at the deadline. Counted from when it was due, not from when the timer
    // fired: a timer can fire some milliseconds before its time by the monotonic clock (Node
    // measures timers from the event loop's cached time), and counting from then made the
    // deadline's probe a few milliseconds early, then a second one at the deadline itself.
    let base = clock.now();
    for (;;) {
      const deadline = this.options.deadline(current.since);
      const now = clock.now();
      const due = Math.min(Math.max(base, now) + interval, deadline);
      const wait = Math.max(0, due - now);
      current.nextProbeAt = now + wait;
      await clock.sleep(wait, current.over.signal);
      if (current.over.signal.aborted) return;
      current.nextProbeAt = undefined;
      let back = false;
      try {
        await gate.probeSlot();
        if (current.over.signal.aborted) return;
        current.probes++;
        back = await this.options.probe();
      } catch (error) {
        // The run stopped while the probe waited for its slot: nothing was sent.
        if (error instanceof RequestNotSent) return;
        // A transport failure (refused, timed out): the service is still not there.
        back = false;
      }
      // Another request got through meanwhile (it ended the outage), or the run stopped.
      if (current.over.signal.aborted) return;
      if (back) {
        this.end(current);
        return;
      }
      if (due >= deadline || clock.now() >= deadline) {
        current.over.abort();
        this.options.gaveUp(current);
        return;
      }
      base = Math.max(due, clock.now());
      interval *= 2;
    }
  }
}
