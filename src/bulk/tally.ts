/**
 * The tally of a bulk run: which rows have their outcome, how many of each status, and the
 * summary line at the end.
 */
import { AuthError } from '../errors.js';
import { formatSummary, rowsText, type StatusCounts } from './progress.js';
import type { BulkRecord } from './records.js';
import type { ResumePlan } from './resume.js';
import type { RunStop } from './stop.js';
import type { BulkInput } from './validate.js';

export class Tally {
  readonly counts: StatusCounts = {};
  /** Rows whose outcome was learnt by reading the group back (`settled_by: "get"`). */
  settledByGet = 0;
  /** The `unknown` records: the exit-5 hint names their cause. */
  readonly unknowns: BulkRecord[] = [];
  /** Rows with an outcome from this run (for the progress line). */
  done = 0;
  /** The rows of the input. */
  readonly rowCount: number;
  /** The rows this run has to do: the input's, but those an earlier run finished. */
  readonly total: number;
  /** CSV rows with every cell empty: not rows, but the summary says how many were skipped. */
  private readonly blankRows: number;
  /** 1 when a row has its outcome (from this run, or done in an earlier one). */
  private readonly finished: Uint8Array;

  constructor(input: Pick<BulkInput<unknown>, 'rowCount' | 'blankRows'>, resume: ResumePlan) {
    this.rowCount = input.rowCount;
    this.blankRows = input.blankRows;
    this.total = input.rowCount - resume.done.size;
    this.finished = new Uint8Array(input.rowCount + 1);
    for (const row of resume.done) this.finished[row] = 1;
  }

  /** A record written: a row's outcome (a `sending` record is none). */
  add(record: BulkRecord): void {
    this.finished[record.row] = 1;
    this.counts[record.status] = (this.counts[record.status] ?? 0) + 1;
    if (record.settled_by !== undefined) this.settledByGet++;
    if (record.status === 'unknown') this.unknowns.push(record);
    this.done++;
  }

  /** The row has its outcome, from this run or an earlier one. */
  isFinished(row: number): boolean {
    return this.finished[row] === 1;
  }

  /** The last line of the run; `where` is the place it ran, when worth saying (onPlace). */
  summary(elapsedMs: number, stop: RunStop, settledHow: string | undefined, where: string): string {
    const line = formatSummary(this.counts, elapsedMs, {
      settledByGet: this.settledByGet,
      blankRows: this.blankRows,
      ...(settledHow !== undefined && { settledHow }),
      where,
    });
    return `${line}${this.authStopText(stop)}`;
  }

  /**
   * After the API token was refused, the summary says so and what it left undone: every row after
   * the first 401/403 is `skipped`, and a person must not take the run for a partial success.
   * (Rows already in flight were sent, and were refused too: they are `failed`.)
   */
  private authStopText(stop: RunStop): string {
    if (stop.reason !== 'auth') return '';
    const status = stop.error instanceof AuthError ? stop.error.status : undefined;
    const at = [
      ...(status !== undefined ? [`HTTP ${status}`] : []),
      ...(stop.row !== undefined ? [`row ${stop.row}`] : []),
    ];
    const notSent = this.counts.skipped ?? 0;
    return `; the run stopped at the first 401/403${at.length > 0 ? ` (${at.join(', ')})` : ''}: ${notSent === 0 ? 'no row was left unsent' : `${rowsText(notSent)} ${notSent === 1 ? 'was' : 'were'} not sent`}`;
  }
}
