/**
 * An operation's bulk spec (`src/operations/<op>/bulk.ts`): its rows, how a row is sent, what its
 * records carry. The engine (run.ts) runs any spec the same way; what an uncertain delivery
 * means, and so whether rows are journaled, confirmed and settled, comes from the operation's
 * `risk`.
 */

import type { BulkRow, RowSchema } from '../input/bulk-options.js';
import type { ServiceClient } from '../service/client.js';
import type { Dialect } from '../service/dialect.js';
import type { DeliveryRisk } from '../service/operation.js';
import type { ServiceResult } from '../service/user-group.js';
import type { BulkRecord, RecordSchema, RecordStatus } from './records.js';

export type { BulkRow, RowSchema };

/** A record's outcome and fields, from an answer. */
export type RecordOutcome = { status: RecordStatus } & Partial<BulkRecord>;

/** What reading the current state back says about a request at risk whose answer was lost. */
export type Settled =
  | { kind: 'happened'; result: ServiceResult }
  | { kind: 'not-happened' }
  | { kind: 'unknown'; why: string };

export interface BulkSpec<Row extends BulkRow = BulkRow> {
  rows: RowSchema<Row>;
  records: RecordSchema;
  /** Values of a row that must never be shown (the operation's `secrets` of its input). */
  secrets(row: Row): readonly string[];
  /** What `--dry-run`'s summary says of the rows' outcome, when sending alone tells it. */
  dryRunNote?: string;
  /** Sends the row's request. */
  send(client: ServiceClient, row: Row): Promise<ServiceResult>;
  /**
   * Fields every record of the row carries, from the row alone (update: what it changes), so its
   * `sending`, `failed` and `skipped` records say them too. Absent: none.
   */
  rowFields?(row: Row): Partial<BulkRecord>;
  /** The row's record from an answer; `settled`: read back after the answer was lost. */
  outcome(row: Row, result: ServiceResult, settled: boolean): RecordOutcome;
  /**
   * Rows whose new id looks like an id the profile's history knows get a `note:` after
   * validation (a typo would create a group); they are sent all the same.
   */
  noteLookalikeIds?: boolean;
  /** The operation's risk: rows are journaled before they are sent and settled after. */
  risk?: AtRisk<Row>;
  /**
   * The spec as a run in `dialect` uses it, once the run's dialect is known: a dialect may read
   * a group differently (the Customer API reads one without creating it). Absent: the same.
   */
  forDialect?(dialect: Dialect | undefined): BulkSpec<Row>;
}

export interface AtRisk<Row extends BulkRow> {
  delivery: DeliveryRisk;
  /** Without a terminal, `--yes` is required: the refusal and its hint. */
  needsYes: { message: string; hint: string };
  /** The confirmation question for `count` rows, and the answer to a no. */
  question(count: number): string;
  cancelled: string;
  /** Why `--resume` settles a row last seen as sent: `an earlier run sent this rotation ...`. */
  unanswered: string;
  /** What one request is called when counting them: `rotation`, `rotations`. */
  noun: { one: string; many: string };
  /** How records word a row checked by reading back (`not rotated`, `rotating it again`). */
  checked: CheckedWords;
  /**
   * A row whose request, sent twice, leaves what sending it once leaves (an update that sets the
   * same values again) and that this dialect cannot read back: `--resume` sends it again instead
   * of settling it, and within a run a lost answer leaves it `unknown` with `resendNote`, so no
   * request is repeated without the person asking for it. Absent: every row is settled.
   */
  resendOnResume?(row: Row): boolean;
  /** Said after a lost answer of a row `resendOnResume` takes (what `--resume` will do). */
  resendNote?: string;
  /**
   * Whether an `unknown` record lacks what settling it needs (the exit hint asks for it);
   * absent: a record without user_group_id or name.
   */
  lacksCheck?(record: BulkRecord): boolean;
  /** Did the row's request happen? Reads the current state back (may throw the call's error). */
  settle(client: ServiceClient, row: Row): Promise<Settled>;
  /** Why a row cannot be settled (it lacks what reading back needs), or undefined. */
  unsettleable(row: Row): string | undefined;
  /**
   * The answer says the row's input is spent (rotate: a 404, the service does not know the
   * token): an earlier request of the row may have done it. Such a row is read back: after an
   * earlier `sending` record of the row it is done (settled); otherwise it is `stale`.
   */
  spent(error: unknown): boolean;
  /** A `stale` record's error: what the refusal and the state read back mean. */
  stale: string;
  /**
   * The refusal as spent already says what reading back would (a delete's 404: no group has the
   * token, so it is gone either way), and nothing is read back: after an earlier `sending` record
   * of the row the row is done with this outcome (that request did it, unseen); without one the
   * row failed with the refusal. Absent: the state is read back (`settle`).
   */
  spentMeansDone?(row: Row): RecordOutcome;
  /** The summary's words for rows settled after a lost answer; absent: `by reading the group back`. */
  settledHow?: string;
}

/** How a row checked by reading back is worded in its record. */
export interface CheckedWords {
  /** `not rotated`: the request did not happen. */
  notDone: string;
  /** `rotating it again`, as in "the run stopped before rotating it again". */
  doingAgain: string;
  /** `rotate it again`, as in "could not be written to rotate it again". */
  doAgain: string;
  /** What the read found when it did not happen: "reading the group back still finds ...". */
  unchanged: string;
  /** `reading the group's token`, as in "... failed: HTTP 500". */
  reading: string;
}
