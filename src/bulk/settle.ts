/**
 * Settling the rows of a run at risk whose answer was lost: did the request happen? Reading the
 * state back says, and a row is sent again only when it did not, so it never happens twice. A
 * row that stays in doubt is `unknown` (exit 5), for `--resume` to settle.
 */
import { ApiError, AuthError, OutcomeUnknownError } from '../errors.js';
import { printNote } from '../output/messages.js';
import type { Output } from '../output/output.js';
import type { ServiceClient } from '../service/client.js';
import type { Clock } from './clock.js';
import { epochMs } from './clock.js';
import { type FailurePolicy, MAX_THROTTLED_ATTEMPTS } from './failure-policy.js';
import type { ResultFile } from './journal.js';
import { messageOf } from './outcome.js';
import { RequestNotSent } from './pacing.js';
import { formatDuration } from './progress.js';
import type { ProgressLine } from './progress-line.js';
import type { RecordWriter } from './record-writer.js';
import type { BulkRecord } from './records.js';
import type { ResumePlan } from './resume.js';
import { isGatewayAnswer, MAX_GATEWAY_ANSWERS_PER_ROW } from './service-watch.js';
import type { AtRisk, BulkRow, BulkSpec, Settled } from './spec.js';
import type { RunStop } from './stop.js';

/**
 * Rounds of "read the state, send again" for one row (for a rotation: read the token, rotate
 * again); then one final read decides (`failed` when nothing changed, done when it did), and only
 * a failing read leaves it `unknown`.
 */
const MAX_SETTLE_ROUNDS = 3;

/** What settling works with. */
export interface SettleParts {
  spec: BulkSpec;
  /** `--resume`: the rows to settle, and when an earlier run sent them. */
  plan: ResumePlan;
  file: ResultFile | undefined;
  writer: RecordWriter;
  failures: FailurePolicy;
  stopper: RunStop;
  clock: Clock;
  output: Output;
  progress: ProgressLine;
  /** `--timeout`: how long an earlier run's request may still be in flight. */
  timeoutMs: number;
}

export class Settler {
  /** While `--resume` waits out an earlier run's requests (clock.now() when the wait ends). */
  waitUntil: number | undefined;
  private readonly spec: BulkSpec;
  private readonly plan: ResumePlan;
  private readonly file: ResultFile | undefined;
  private readonly writer: RecordWriter;
  private readonly failures: FailurePolicy;
  private readonly stopper: RunStop;
  private readonly clock: Clock;
  private readonly output: Output;
  private readonly progress: ProgressLine;
  private readonly timeoutMs: number;

  constructor(parts: SettleParts) {
    this.spec = parts.spec;
    this.plan = parts.plan;
    this.file = parts.file;
    this.writer = parts.writer;
    this.failures = parts.failures;
    this.stopper = parts.stopper;
    this.clock = parts.clock;
    this.output = parts.output;
    this.progress = parts.progress;
    this.timeoutMs = parts.timeoutMs;
  }

  /**
   * A request of a killed run may still be on its way or being processed: reading the group back
   * before it ends would see the old token, and a retry would then be refused (404) once it lands.
   * So rows to settle whose last `sending` record is younger than the request timeout are read
   * back only once that time has passed since the record was written (its `at`). Rows this run
   * sent itself need no wait: the run saw its own request end. A record without a time (a file
   * of an earlier version) cannot say, and is not waited for.
   */
  async waitForEarlierRequests(): Promise<void> {
    let latest = Number.NEGATIVE_INFINITY;
    for (const row of this.plan.settle.keys()) {
      const at = this.plan.sentAt.get(row);
      if (at !== undefined && at > latest) latest = at;
    }
    const waitMs = latest + this.timeoutMs - epochMs(this.clock);
    if (!(waitMs > 0)) return;
    this.waitUntil = this.clock.now() + waitMs;
    printNote(
      this.output,
      `--resume: waiting ${formatDuration(waitMs)} before checking the rows an earlier run sent, so no request of that run is still in flight (--timeout)`,
    );
    this.progress.changed();
    try {
      await this.clock.sleep(waitMs, this.stopper.signal);
    } finally {
      this.waitUntil = undefined;
    }
  }
  /**
   * Did the row's request happen? Reading the state back says (the spec's `settle`): when it did
   * not, the row is sent once more (its last record is then `sending` again, so a crash meanwhile
   * is settled the same way by --resume).
   */
  async settle(
    client: ServiceClient,
    row: BulkRow,
    risk: AtRisk<BulkRow>,
    why: string,
  ): Promise<BulkRecord> {
    const cannot = risk.unsettleable(row);
    if (cannot !== undefined)
      return this.writer.record(row, 'unknown', { error: `${why}; ${cannot}` });
    let lastWhy = why;
    for (let round = 0; round < MAX_SETTLE_ROUNDS; round++) {
      let settled: Settled;
      try {
        settled = await this.readBack(client, row, risk);
      } catch (error) {
        if (error instanceof RequestNotSent) return this.notReadBack(row, lastWhy);
        if (error instanceof AuthError) {
          this.stopper.stop('auth', error, row.row);
          return this.unreadable(row, risk, lastWhy, error);
        }
        // One read failed: the final read below decides (or names this cause when it fails too).
        break;
      }
      if (settled.kind === 'unknown') {
        return this.writer.record(row, 'unknown', { error: `${lastWhy}; ${settled.why}` });
      }
      if (settled.kind === 'happened') return this.writer.answered(row, settled.result, true);
      // Not done: sending it once more cannot make it happen twice.
      const words = risk.checked;
      if (this.stopper.stopping) {
        return this.writer.record(row, 'skipped', {
          error: `${words.notDone} (checked); the run stopped before ${words.doingAgain}`,
        });
      }
      try {
        await this.file?.markSending([this.writer.record(row, 'sending')]);
      } catch (error) {
        if (this.file?.failed === undefined) throw error;
        return this.writer.record(row, 'skipped', {
          error: `${words.notDone} (checked); the results file could not be written to ${words.doAgain}`,
        });
      }
      try {
        return this.writer.answered(row, await this.spec.send(client, row), false);
      } catch (error) {
        if (error instanceof RequestNotSent) {
          return this.writer.record(row, 'skipped', {
            error: `${words.notDone} (checked); the run stopped before ${words.doingAgain}`,
          });
        }
        // Refused as spent after an earlier try of this run: that try did it, unseen.
        if (risk.spent(error)) return this.settleSpent(client, row, risk, error, true);
        if (!(error instanceof OutcomeUnknownError)) {
          const attempt = this.failures.failure(row, error, MAX_THROTTLED_ATTEMPTS);
          return attempt.kind === 'done' ? attempt.result : this.writer.record(row, 'failed');
        }
        lastWhy = error.message;
      }
    }
    return this.finalReadBack(client, row, risk, lastWhy);
  }
  /**
   * The retries are spent: one last read of the state decides, so a row ends in a fact. An
   * unchanged token is `failed` (nothing happened, exit 1); a changed one `rotated`. The row
   * stays `unknown` (exit 5) only when this read fails too, and its record says why.
   */
  private async finalReadBack(
    client: ServiceClient,
    row: BulkRow,
    risk: AtRisk<BulkRow>,
    lastWhy: string,
  ): Promise<BulkRecord> {
    let settled: Settled;
    try {
      settled = await this.readBack(client, row, risk);
    } catch (error) {
      if (error instanceof RequestNotSent) return this.notReadBack(row, lastWhy);
      if (error instanceof AuthError) this.stopper.stop('auth', error, row.row);
      return this.unreadable(row, risk, lastWhy, error);
    }
    if (settled.kind === 'happened') return this.writer.answered(row, settled.result, true);
    if (settled.kind === 'unknown') {
      return this.writer.record(row, 'unknown', { error: `${lastWhy}; ${settled.why}` });
    }
    return this.writer.record(row, 'failed', {
      error: `${risk.checked.notDone} (checked): the last try ended "${lastWhy}", and ${risk.checked.unchanged}`,
    });
  }
  /**
   * The service refused the row as spent (a 404: it does not know the token). Reading the state
   * back says what that means: another token after an earlier `sending` record of the row (a
   * killed or retried run, or an earlier try) is that request having happened, unseen: the row
   * is done, settled. Without one, ugs did not do it: `stale`, with the current state recorded.
   * A risk whose refusal needs no read (`spentMeansDone`) is done or failed at once.
   */
  async settleSpent(
    client: ServiceClient,
    row: BulkRow,
    risk: AtRisk<BulkRow>,
    error: unknown,
    sentBefore: boolean,
  ): Promise<BulkRecord> {
    const refused = error instanceof ApiError ? error : undefined;
    const failed = (why: string) =>
      this.writer.record(row, 'failed', {
        error: `${messageOf(error)}; ${why}`,
        http_status: refused?.status ?? null,
      });
    // The refusal says it all (a delete's 404): no read, so no request more for the row.
    const done = risk.spentMeansDone?.(row);
    if (done !== undefined) {
      if (!sentBefore) {
        return this.writer.record(row, 'failed', {
          error: messageOf(error),
          http_status: refused?.status ?? null,
        });
      }
      return this.writer.record(row, done.status, done);
    }
    let settled: Settled;
    try {
      settled = await this.readBack(client, row, risk);
    } catch (readError) {
      if (readError instanceof RequestNotSent) {
        return failed('the run stopped before the group was read back');
      }
      if (readError instanceof AuthError) this.stopper.stop('auth', readError, row.row);
      return failed(`${risk.checked.reading} failed: ${messageOf(readError)}`);
    }
    if (settled.kind === 'unknown') return failed(settled.why);
    if (settled.kind === 'not-happened') return failed(risk.checked.unchanged);
    if (sentBefore) return this.writer.answered(row, settled.result, true);
    const {
      status: _done,
      settled_by: _by,
      ...fields
    } = this.spec.outcome(row, settled.result, true);
    return this.writer.record(row, 'stale', {
      ...fields,
      error: `${messageOf(error)}; ${risk.stale}`,
      http_status: refused?.status ?? null,
    });
  }
  /** Reading the state back failed: whether the request happened is not known. */
  private unreadable(
    row: BulkRow,
    risk: AtRisk<BulkRow>,
    lastWhy: string,
    error: unknown,
  ): BulkRecord {
    return this.writer.record(row, 'unknown', {
      error: `${lastWhy}; ${risk.checked.reading} failed: ${messageOf(error)}`,
    });
  }
  /** The run stopped before the group was read back: `--resume` settles the row. */
  private notReadBack(row: BulkRow, lastWhy: string): BulkRecord {
    return this.writer.record(row, 'unknown', {
      error: `${lastWhy}; the run stopped before the group was read back`,
    });
  }
  /**
   * The spec's read of the state. A read is safe to repeat: one answered by a gateway is read
   * again (after the outage, when one has begun) rather than leaving the row unknown.
   */
  private async readBack(
    client: ServiceClient,
    row: BulkRow,
    risk: AtRisk<BulkRow>,
  ): Promise<Settled> {
    for (let answers = 1; ; answers++) {
      try {
        return await risk.settle(client, row);
      } catch (error) {
        if (!isGatewayAnswer(error) || answers >= MAX_GATEWAY_ANSWERS_PER_ROW) throw error;
      }
    }
  }
}
