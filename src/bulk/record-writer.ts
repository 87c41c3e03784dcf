/**
 * Writing a bulk run's records: each row's record built (and its token history event), then
 * written to the results file, or to stdout as NDJSON or row lines at a terminal, with the
 * row's secrets made known first and the tally and the progress line told.
 */
import type { Deps } from '../context/factory.js';
import type { HistoryEntry, HistoryOutcome } from '../history/event.js';
import { drained as streamDrained } from '../platform/io.js';
import type { ServiceResult } from '../service/user-group.js';
import { type Clock, epochMs } from './clock.js';
import { type ResultFile, StdoutLostError } from './journal.js';
import type { RunHistory } from './prepare.js';
import type { ProgressLine } from './progress-line.js';
import {
  type BulkRecord,
  type ExtraField,
  ndjsonLine,
  type OutputTokens,
  type RecordStatus,
  tokenTail,
} from './records.js';
import type { RowLines } from './row-lines.js';
import type { BulkRow, BulkSpec } from './spec.js';
import type { Tally } from './tally.js';

/** Where a run's records go, and who is told about them. */
export interface RecordSinks {
  spec: BulkSpec;
  deps: Deps;
  /** The results file (`--output`); undefined: stdout. */
  file: ResultFile | undefined;
  /** One line per row at a terminal; undefined: NDJSON records on stdout. */
  rowLines: RowLines | undefined;
  /** Undefined with the history off. */
  history: RunHistory | undefined;
  tally: Tally;
  progress: ProgressLine;
  clock: Clock;
  /**
   * `--output-tokens last4`: the file gets each record without its whole token (tokenTail), and
   * stdout the whole record as NDJSON, first. Absent or `full`: the file keeps whole tokens.
   */
  outputTokens?: OutputTokens | undefined;
}

export class RecordWriter {
  private readonly spec: BulkSpec;
  private readonly deps: Deps;
  private readonly file: ResultFile | undefined;
  private readonly rowLines: RowLines | undefined;
  private readonly history: RunHistory | undefined;
  private readonly tally: Tally;
  private readonly progress: ProgressLine;
  private readonly clock: Clock;
  private stdoutText = '';
  private stdoutFlushQueued = false;
  /**
   * Each final record's history event until the record is written (then it joins the history),
   * by row: a map keyed by the record itself gave every record an identity hash, which cost more
   * than the rest of the event (about 20 µs a row on 50,000 rows).
   */
  private readonly historyEntries = new Map<number, PendingEvent>();
  /** The spec's record fields that every record carries, null until known (once, not per row). */
  private readonly alwaysFields: readonly ExtraField[];
  /** `--output-tokens last4` with a results file: whole tokens go to stdout only. */
  private readonly tokensToStdout: boolean;
  /** Writes to stdout whose records wait for it to take them before they join the file. */
  private stdoutPending = 0;
  private stdoutIdle: (() => void)[] = [];
  /** Records with a whole token written to stdout (the closing note says where they went). */
  wholeTokensOut = 0;

  constructor(sinks: RecordSinks) {
    this.spec = sinks.spec;
    this.deps = sinks.deps;
    this.file = sinks.file;
    this.rowLines = sinks.rowLines;
    this.history = sinks.history;
    this.tally = sinks.tally;
    this.progress = sinks.progress;
    this.clock = sinks.clock;
    this.alwaysFields = sinks.spec.records.extras.filter((e) => e.always).map((e) => e.field);
    this.tokensToStdout = sinks.outputTokens === 'last4' && sinks.file !== undefined;
  }

  /** A row's record; one with an outcome gets its history event, added when it is written. */
  record(row: BulkRow, status: RecordStatus, extra?: Partial<BulkRecord>): BulkRecord {
    const record: BulkRecord = {
      row: row.row,
      user_group_id: row.user_group_id ?? null,
      name: row.name ?? null,
      status,
      token: null,
      team_id: null,
      error: null,
      http_status: null,
    };
    if (this.spec.rowFields !== undefined) Object.assign(record, this.spec.rowFields(row));
    // (as a spread would, but without building a second object per row; `status` is the same)
    if (extra !== undefined) Object.assign(record, extra);
    // A request's record says when it went out: --resume waits until it cannot be in flight.
    if (status === 'sending') record.at = new Date(epochMs(this.clock)).toISOString();
    const outcome = HISTORY_OUTCOME[status];
    if (this.history !== undefined && outcome !== undefined) {
      const { base } = this.history;
      const tag = record.api_environment_tag;
      // Every field written, in one order: one shape for every event of the run.
      const entry: HistoryEntry = {
        time: new Date(epochMs(this.clock)),
        profile: base.profile,
        baseUrl: base.baseUrl,
        dialect: base.dialect,
        userGroupId: record.user_group_id,
        name: record.name,
        outcome,
        environmentTag: typeof tag === 'string' ? tag : undefined,
        sentToken: this.spec.secrets(row)[0] ?? null,
        token: outcome === 'failed' || outcome === 'unknown' ? null : record.token,
      };
      this.historyEntries.set(row.row, { record, entry });
    }
    // Fields every record of this command has are there from the start (null until known).
    for (const field of this.alwaysFields) {
      // (null is what "not known yet" is written as, for every extra field, settled_by included)
      if (record[field] === undefined) (record as Record<ExtraField, unknown>)[field] = null;
    }
    return record;
  }

  /** A row's record from an answer (or from reading the state back: `settled`). */
  answered(row: BulkRow, result: ServiceResult, settled: boolean): BulkRecord {
    const outcome = this.spec.outcome(row, result, settled);
    const record = this.record(row, outcome.status, outcome);
    const answeredId = result.userGroup.provided_id;
    // A mismatch rotated the group the answer names, and an update that renamed a group answers
    // its new id: the history names the group as it is now, as the single commands record it.
    // (The record keeps the row's id: --resume matches records to the input's rows by it.)
    if (
      (outcome.status === 'mismatch' || outcome.status === 'updated') &&
      typeof answeredId === 'string'
    ) {
      const pending = this.historyEntries.get(row.row);
      if (pending?.record === record) pending.entry.userGroupId = answeredId;
    }
    return record;
  }

  write(records: readonly BulkRecord[]): void {
    for (const record of records) {
      const pending = this.historyEntries.get(record.row);
      if (pending?.record === record) {
        this.historyEntries.delete(record.row);
        this.history?.batch.add(pending.entry);
      }
      this.knownSecret(record.token);
      if (record.status === 'sending') continue;
      this.tally.add(record);
      this.progress.changed();
    }
    if (this.file) {
      if (this.tokensToStdout) this.wholeToStdout(this.file, records);
      else this.file.append(records);
      return;
    }
    if (this.rowLines !== undefined) this.stdoutText += this.rowLines.text(records);
    else for (const record of records) this.stdoutText += ndjsonLine(record, this.spec.records);
    if (this.stdoutText.length >= 64 * 1024) this.flushStdout();
    else if (!this.stdoutFlushQueued) {
      this.stdoutFlushQueued = true;
      setImmediate(() => this.flushStdout());
    }
  }

  /**
   * `--output-tokens last4`: the whole records go to stdout, and only once stdout has taken them
   * do their tails join the file. So a row the file shows done has its token on stdout; a row
   * whose record stdout did not take (it closed, the run was killed) keeps its `sending` record
   * as the last on disk, and `--resume` reads its group's token back and writes it to stdout
   * then. A token that was rotated is never only in a process that is gone.
   */
  private wholeToStdout(file: ResultFile, records: readonly BulkRecord[]): void {
    let text = '';
    for (const record of records) {
      if (record.status === 'sending') continue;
      text += ndjsonLine(record, this.spec.records);
      if (record.token !== null) this.wholeTokensOut++;
    }
    const tails = records.map(tokenTail);
    if (text === '') {
      file.append(tails);
      return;
    }
    this.stdoutPending++;
    this.deps.io.stdout.write(text, (error) => {
      if (error == null) file.append(tails);
      else file.abandon(new StdoutLostError(error), tails);
      this.stdoutPending--;
      if (this.stdoutPending === 0) for (const idle of this.stdoutIdle.splice(0)) idle();
    });
  }

  /** Resolves once stdout has taken (or refused) every record written to it for the file. */
  async stdoutTaken(): Promise<void> {
    if (this.stdoutPending === 0) return;
    await new Promise<void>((resolve) => this.stdoutIdle.push(resolve));
  }

  flushStdout(): void {
    this.stdoutFlushQueued = false;
    if (this.stdoutText === '') return;
    // Row lines and the bar share the terminal: the bar is erased first, and redrawn below them.
    if (this.rowLines !== undefined) this.progress.erase();
    this.deps.io.stdout.write(this.stdoutText);
    this.stdoutText = '';
  }

  /** Resolves when stdout and the results file have taken what was written to them. */
  async drained(): Promise<void> {
    if (this.tokensToStdout) await streamDrained(this.deps.io.stdout);
    if (this.file !== undefined) {
      if (this.file.backlog > MAX_BACKLOG_CHARS) await this.file.flush();
      return;
    }
    await streamDrained(this.deps.io.stdout);
  }

  /**
   * A row's current or new token: a secret of the run, fingerprinted in every trace (a server may
   * quote it back in any field) and masked under a CI runner, before anything about the row is
   * sent or written. Messages built from an answer already cut the row's token (service.ts).
   */
  knownSecret(token: string | null): void {
    if (token === null || token === '') return;
    this.deps.tracer.addSecret(token);
    this.deps.output.maskSecret(token);
  }

  /** The secrets of a row's input (a current token), known before it is sent. */
  knownRowSecrets(row: BulkRow): void {
    for (const secret of this.spec.secrets(row)) this.knownSecret(secret);
  }
}

/** A final record's history event, written with the record (only that record's, by identity). */
interface PendingEvent {
  record: BulkRecord;
  entry: HistoryEntry;
}

/**
 * A record's status as a history outcome: a `mismatch` did rotate (another group than the row's);
 * `skipped` rows were never sent and `sending` is not an outcome, so neither is an event.
 */
const HISTORY_OUTCOME: Partial<Record<RecordStatus, HistoryOutcome>> = {
  created: 'created',
  found: 'found',
  rotated: 'rotated',
  updated: 'updated',
  deleted: 'deleted',
  mismatch: 'rotated',
  stale: 'stale',
  failed: 'failed',
  unknown: 'unknown',
};

/** Records waiting for the results file before the run stops starting rows (about 4 MB). */
const MAX_BACKLOG_CHARS = 4 * 1024 * 1024;
