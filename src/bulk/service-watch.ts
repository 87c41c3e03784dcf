/**
 * Watching the service during a bulk run: every request passes the gate and is noted, a request
 * that succeeded (for `--give-up-after`) and a gateway's answer saying the service is not there
 * (a run of them pauses the run, and the outage's probe finds out when the service is back).
 */
import { ApiError, NetworkError, UgsError } from '../errors.js';
import { printNote } from '../output/messages.js';
import type { Output } from '../output/output.js';
import type { ServiceClient } from '../service/client.js';
import type { Clock } from './clock.js';
import { type BulkOptions, resumeHint } from './options.js';
import { FIRST_PROBE_MS, Outage, type OutageInfo } from './outage.js';
import type { RequestGate } from './pacing.js';
import { formatDuration } from './progress.js';
import type { ProgressLine } from './progress-line.js';
import { DEFAULT_GIVE_UP_AFTER_MS } from './scheduler.js';
import type { RunStop } from './stop.js';

/**
 * Requests in a row answered by a gateway saying the service is not there (502, 503 or 504, or an
 * HTML error page), with no success between, before the run pauses and probes the service
 * (outage.ts), stopping as for a service that is down (exit 4) only if it does not come back.
 * Each is counted after its own retries (a Get User tries 3 times), so at most 18 HTTP answers
 * before the pause: a down service costs a few dozen requests and a few probes, not three per
 * row. A 503 with Retry-After is the service pacing the run, as a 429 is: the run waits instead
 * (and `--give-up-after` ends it).
 */
export const UNAVAILABLE_STREAK = 6;
/**
 * Gateway answers one row may get before it is `failed` as before: a row is tried again after
 * one (the run may be pausing for an outage meanwhile), so a blip costs no row, but a row that a
 * gateway refuses every time while the others go through does not hold the run forever.
 */
export const MAX_GATEWAY_ANSWERS_PER_ROW = UNAVAILABLE_STREAK;

/** What a watch is told and tells. */
export interface WatchParts {
  opts: BulkOptions;
  output: Output;
  /** What every request passes before it starts. */
  gate: RequestGate;
  clock: Clock;
  stopper: RunStop;
  progress: ProgressLine;
  /** How long an unavailable service is waited for before the run stops (exit 4). */
  outageLimitMs: number;
  /** clock.now() when the run started: `--give-up-after` counts from here until a success. */
  started: number;
}

export class ServiceWatch {
  /** `--give-up-after`: the run stops once no request has succeeded for this long. */
  readonly giveUpAfterMs: number;
  /** Runs of gateway answers saying the service is not there: the pause and its probes. */
  private readonly outage: Outage;
  /** The client as connected, for the outage's probe (which is no row's success). */
  private client: ServiceClient | undefined;
  /** When a request last succeeded (or the run started): `--give-up-after` counts from here. */
  private lastSuccess: number;
  private readonly opts: BulkOptions;
  private readonly output: Output;
  private readonly gate: RequestGate;
  private readonly clock: Clock;
  private readonly stopper: RunStop;
  private readonly progress: ProgressLine;
  private readonly outageLimitMs: number;

  constructor(parts: WatchParts) {
    this.opts = parts.opts;
    this.output = parts.output;
    this.gate = parts.gate;
    this.clock = parts.clock;
    this.stopper = parts.stopper;
    this.progress = parts.progress;
    this.outageLimitMs = parts.outageLimitMs;
    this.lastSuccess = parts.started;
    this.giveUpAfterMs = parts.opts.giveUpAfterMs ?? DEFAULT_GIVE_UP_AFTER_MS;
    this.outage = new Outage({
      gate: parts.gate,
      clock: this.clock,
      streak: UNAVAILABLE_STREAK,
      deadline: (since) => this.outageDeadline(since),
      probe: () => this.probe(),
      began: (info) => this.outageBegan(info),
      ended: (info) => this.outageEnded(info),
      gaveUp: (info) => this.outageGaveUp(info),
    });
  }

  /** The outage going on (the run is paused), or undefined. */
  outageState(): { sinceEpochMs: number; nextProbeInMs: number } | undefined {
    return this.outage.state();
  }

  /** No probe outlives the run (nor its timer the process). */
  stop(): void {
    this.outage.stop();
  }

  /**
   * The client, noting every request that succeeds (for `--give-up-after`) and every answer from
   * a gateway saying the service is not there (UNAVAILABLE_STREAK of them pause the run: outage.ts).
   */
  tracked(client: ServiceClient): ServiceClient {
    this.client = client;
    const succeeded = <T>(result: T): T => {
      this.lastSuccess = this.clock.now();
      this.outage.succeeded();
      return result;
    };
    const failed = (error: unknown): never => {
      if (isGatewayAnswer(error)) this.outage.gatewayAnswer(error);
      throw error;
    };
    const { gate } = this;
    // Every method of the client, whatever operations it has: bulk imports no operation registry
    // (the registry imports the commands, which load bulk).
    // (A proxy of an empty object: the client's own methods may be read-only, which a proxy of
    // the client itself would have to return unchanged.)
    // Each method wrapped once, not at every row's call.
    const wrapped = new Map<PropertyKey, unknown>();
    return new Proxy({} as ServiceClient, {
      get(_empty, name) {
        const value: unknown = Reflect.get(client, name);
        if (typeof value !== 'function') return value;
        let method = wrapped.get(name);
        if (method !== undefined) return method;
        const call = (input: never) =>
          (value as (input: never) => Promise<unknown>).call(client, input).then(succeeded, failed);
        // Every request of the run, a row's first try, a retry or a settling read, passes the
        // gate: its slot in the one schedule, the end of an outage, and none once the run stops
        // (RequestNotSent). An open gate without a schedule costs a row nothing more.
        method = (input: never) =>
          gate.passable ? call(input) : gate.admit().then(() => call(input));
        wrapped.set(name, method);
        return method;
      },
    });
  }

  /**
   * The outage's probe. Not a row's request sent again: a rotation answered by a gateway may have
   * been committed behind it, and is only ever settled by reading its group back (exactly once),
   * never resent blind; and a Get User creates the group it names. The probe is doctor's: the
   * API path with an empty body, which the service refuses (400) for its missing fields after
   * checking the token, and which changes nothing. Any answer below 500 (400, 401/403, a 429)
   * is the service itself answering: the rows meet what it says. It is sent on the client as
   * connected, so its answer never counts as a row's success or failure.
   */
  private async probe(): Promise<boolean> {
    const client = this.client;
    if (client === undefined) return false;
    const answer = await client.probe();
    return answer.status < 500;
  }

  private outageBegan(info: OutageInfo): void {
    this.progress.erase();
    printNote(
      this.output,
      `the service is unavailable (${UNAVAILABLE_STREAK} requests in a row were answered by a gateway, the last: ${info.last.message}): no new row starts until it answers again; checking in ${formatDuration(FIRST_PROBE_MS)}, then at growing intervals, for up to ${formatDuration(Math.max(0, this.outageDeadline(info.since) - info.since))}`,
    );
    this.progress.changed();
  }

  private outageEnded(info: OutageInfo): void {
    this.progress.erase();
    printNote(
      this.output,
      `the service answers again after ${formatDuration(this.clock.now() - info.since)}: the run carries on`,
    );
    this.progress.changed();
  }

  /** Two minutes of an unavailable service, or `--give-up-after` if that comes first. */
  private outageDeadline(since: number): number {
    return Math.min(since + this.outageLimitMs, this.lastSuccess + this.giveUpAfterMs);
  }

  /** The service stayed unavailable until the deadline: the run stops (exit 4), for `--resume`. */
  private outageGaveUp(info: OutageInfo): void {
    const probes = `${info.probes} ${info.probes === 1 ? 'probe' : 'probes'}`;
    this.stopper.stop(
      'network',
      new NetworkError(
        `the service is unavailable: ${UNAVAILABLE_STREAK} requests in a row were answered by a gateway (HTTP 502, 503, 504 or an HTML error page) since ${timeOfDay(info.sinceEpochMs)}, and ${probes} over ${formatDuration(this.clock.now() - info.since)} did not get through; the rows not sent were skipped (the last answer: ${info.last.message})`,
        { hint: `${resumeHint(this.opts)} once the service is back` },
      ),
    );
  }

  /** ms left before `--give-up-after` ends the run; 0 or less: time is up. */
  giveUpLeft(): number {
    return this.giveUpAfterMs - (this.clock.now() - this.lastSuccess);
  }
}

/**
 * An answer from a gateway saying the service is not there (502/503/504, an HTML error page),
 * after the request's own retries. A 503 with Retry-After is the service pacing the run, as a
 * 429 is: not counted (the run waits for it instead).
 */
export function isGatewayAnswer(error: unknown): error is UgsError {
  if (!(error instanceof UgsError) || !error.unavailable) return false;
  return !(error instanceof ApiError && error.status === 503 && error.retryAfter !== undefined);
}

/** `14:02:07`, local time: when a person at the terminal saw the service go. */
export function timeOfDay(epochMs: number): string {
  const at = new Date(epochMs);
  return [at.getHours(), at.getMinutes(), at.getSeconds()]
    .map((part) => String(part).padStart(2, '0'))
    .join(':');
}
