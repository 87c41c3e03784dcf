/**
 * What a failed try of a row means for the row and for the run: a throttled row waits and is
 * tried again, a service failing every request for `--give-up-after` stops the run (exit 4), a
 * refused API token (exit 3) or a network that is gone (exit 4) stops it at once, and any other
 * refusal is the row's `failed` record.
 */
import { ApiError, AuthError, NetworkError, type UgsError } from '../errors.js';
import { retryAfterMs } from '../transport/http.js';
import { type BulkOptions, resumeHint } from './options.js';
import { formatDuration } from './progress.js';
import type { RecordWriter } from './record-writer.js';
import type { BulkRecord } from './records.js';
import { type Attempt, BULK_MAX_RETRY_AFTER_MS } from './scheduler.js';
import type { ServiceWatch } from './service-watch.js';
import type { BulkRow } from './spec.js';
import type { RunStop } from './stop.js';

/** Tries of one row that the service throttled (429/503) before the row is given up as failed. */
export const MAX_THROTTLED_ATTEMPTS = 20;

/** What the policy decides with. */
export interface FailureParts {
  opts: BulkOptions;
  writer: RecordWriter;
  stopper: RunStop;
  watch: ServiceWatch;
  /** The pause after a 429 that names no Retry-After (60 s with explo); undefined: the back-off. */
  throttleWaitMs: number | undefined;
}

export class FailurePolicy {
  private readonly opts: BulkOptions;
  private readonly writer: RecordWriter;
  private readonly stopper: RunStop;
  private readonly watch: ServiceWatch;
  private readonly throttleWaitMs: number | undefined;

  constructor(parts: FailureParts) {
    this.opts = parts.opts;
    this.writer = parts.writer;
    this.stopper = parts.stopper;
    this.watch = parts.watch;
    this.throttleWaitMs = parts.throttleWaitMs;
  }

  /** What a failed try means for the row and for the run. */
  failure(row: BulkRow, error: unknown, attempt: number): Attempt<BulkRecord> {
    if (error instanceof ApiError && (error.status === 429 || error.status === 503)) {
      if (attempt < MAX_THROTTLED_ATTEMPTS && !this.stopper.stopping) {
        const left = this.watch.giveUpLeft();
        if (left <= 0) return this.giveUp(row, error);
        // The wait never runs past the moment the run gives up.
        const asked = retryAfterMs(error.retryAfter, Date.now(), BULK_MAX_RETRY_AFTER_MS);
        // No Retry-After: the dialect's wait (the vendor's window is a minute), else the back-off.
        const fallback = this.throttleWaitMs;
        const wait =
          asked !== undefined
            ? Math.min(asked, left)
            : fallback !== undefined
              ? Math.min(fallback, left)
              : left < 1000
                ? left
                : undefined;
        return { kind: 'throttled', retryAfterMs: wait };
      }
    }
    // A service failing every request (5xx after the transport's retries) is down too.
    if (
      error instanceof ApiError &&
      (error.status ?? 0) >= 500 &&
      !this.stopper.stopping &&
      this.watch.giveUpLeft() <= 0
    ) {
      return this.giveUp(row, error);
    }
    if (error instanceof AuthError) this.stopper.stop('auth', error, row.row);
    else if (error instanceof NetworkError) this.stopper.stop('network', error);
    else if (!(error instanceof ApiError)) throw error;
    const status = error instanceof ApiError ? (error.status ?? null) : null;
    return done(
      this.writer.record(row, 'failed', {
        error: error.message,
        http_status: error instanceof AuthError ? (error.status ?? null) : status,
      }),
    );
  }
  /**
   * No request has succeeded for `--give-up-after`: the run stops as for a service that is down
   * (exit 4), the row that was being tried is failed and the rest skipped, for `--resume`.
   */
  private giveUp(row: BulkRow, error: ApiError): Attempt<BulkRecord> {
    this.stopper.stop(
      'network',
      new NetworkError(
        `gave up: no request has succeeded for ${formatDuration(this.watch.giveUpAfterMs)} (the last answer: ${error.message})`,
        {
          hint: `${resumeHint(this.opts)}; --give-up-after <duration> sets how long to keep trying (default 10m)`,
        },
      ),
    );
    return done(
      this.writer.record(row, 'failed', {
        error: error.message,
        http_status: error.status ?? null,
      }),
    );
  }
  /** A row whose request never went out because the run stopped. */
  notSent(row: BulkRow): BulkRecord {
    return this.writer.record(row, 'skipped', { error: this.stopper.notSentWhy() });
  }
  /** A row's last failure, kept when the run stopped before its next try went out. */
  failedRecord(row: BulkRow, error: UgsError): BulkRecord {
    return this.writer.record(row, 'failed', {
      error: error.message,
      http_status: error instanceof ApiError ? (error.status ?? null) : null,
    });
  }
}

/** A try that came to a record. */
export function done(result: BulkRecord): Attempt<BulkRecord> {
  return { kind: 'done', result };
}
