/**
 * Why and where a bulk run stopped. Every part of the run asks it before it starts anything, and
 * the parts that must stop too (the request gate, the outage's probes) are told when it does.
 */
import type { AuthError, NetworkError } from '../errors.js';

/** `disk`: the results file cannot be written (a full disk): no new row starts. */
export type StopReason = 'auth' | 'network' | 'interrupt' | 'disk';

export class RunStop {
  reason: StopReason | undefined;
  error: AuthError | NetworkError | undefined;
  /** The row whose answer stopped the run (a 401/403), for the summary. */
  row: number | undefined;
  private readonly controller = new AbortController();
  private readonly listeners: (() => void)[] = [];

  /** Aborted when the run stops: the scheduler starts no row, and waits end. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get stopping(): boolean {
    return this.reason !== undefined;
  }

  /** `listener` runs when the run stops, after the signal aborts (in the order given). */
  onStop(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** `row`: the row whose answer stopped the run (a 401/403), for the summary. */
  stop(reason: StopReason, error?: AuthError | NetworkError, row?: number): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.error = error;
    this.row = row;
    this.controller.abort();
    for (const listener of this.listeners) listener();
  }

  /** Why the rows a stopped run did not send are `skipped`. */
  notSentWhy(): string {
    return this.reason === 'interrupt'
      ? 'not sent: the run was interrupted'
      : this.reason === 'disk'
        ? 'not sent: the results file could not be written'
        : `not sent: the run stopped (${this.error?.message ?? this.reason ?? 'stopped'})`;
  }
}
