/**
 * `--resume`: what an earlier run wrote to the `--output` file, reduced to the last record of
 * each row (its outcome so far).
 *
 * A run killed with -9 can leave a last line half written. Such a line is ignored: the writer
 * fsyncs a `sending` record before the request goes out, so a record that did not reach the disk
 * whole never stood for a request. The next run's writer ends that line before appending, so a
 * torn line may also sit between complete ones; it is recognised as a line that cannot be a
 * record (NDJSON: not JSON at all; CSV: unbalanced quotes or too few cells) and skipped, and
 * the count of skipped lines is returned for a note.
 */
import { createReadStream } from 'node:fs';
import { UsageError } from '../errors.js';
import { errorCode, isPlainObject } from '../platform/guards.js';
import { message } from '../text/message.js';
import {
  type BulkRecord,
  csvHeaders,
  isDone,
  needsSettling,
  type OutputFormat,
  type OutputTokens,
  RECORD_STATUSES,
  type RecordSchema,
  type RecordStatus,
  type SentValue,
  unguardCell,
  writerOf,
} from './records.js';

export interface ResumeState {
  /** The last record of each row that has one. */
  outcomes: Map<number, BulkRecord>;
  /** Lines that were not whole records (torn by a kill), skipped. */
  tornLines: number;
  /** Rows with a `sending` record (a request that went out in an earlier run). */
  sent: Set<number>;
  /** Each row's latest `sending` record time (ms since the epoch), when the record has one. */
  sentAt: Map<number, number>;
}

export interface ResumePlan {
  /** Rows whose outcome is created, found or rotated: not sent again. */
  done: Set<number>;
  /** Rows last seen as `sending` or `unknown`: settled (did it rotate?) before anything is sent. */
  settle: Map<number, BulkRecord>;
  /** Rows an earlier run of this results file sent (a `sending` record). */
  sent: ReadonlySet<number>;
  /** When each row was last sent (ms since the epoch), from the `at` of its `sending` record. */
  sentAt: ReadonlyMap<number, number>;
}

/** What `--resume` does with each row an earlier run touched; rows not listed are sent. */
export function planResume(state: ResumeState): ResumePlan {
  const plan: ResumePlan = {
    done: new Set(),
    settle: new Map(),
    sent: state.sent,
    sentAt: state.sentAt,
  };
  for (const [row, record] of state.outcomes) {
    if (isDone(record.status)) plan.done.add(row);
    else if (needsSettling(record.status)) plan.settle.set(row, record);
  }
  return plan;
}

/** Reads the results file; a missing file is an empty state (nothing done yet). */
export async function readResumeState(
  path: string,
  format: OutputFormat,
  schema: RecordSchema,
): Promise<ResumeState> {
  const kind = schema.command;
  const state: ResumeState = {
    outcomes: new Map(),
    tornLines: 0,
    sent: new Set(),
    sentAt: new Map(),
  };
  const take = (record: BulkRecord, line: number) => {
    // One file keeps tokens one way: whole ones never join a file that promises none, and a
    // file of whole tokens is not continued without them (it would still be a secret).
    const last4 = schema.tokens === 'last4';
    if (last4 ? record.token !== null : record.token_sha256 !== undefined) {
      throw otherTokens(path, last4 ? 'full' : 'last4', line);
    }
    state.outcomes.set(record.row, record);
    if (record.status !== 'sending') return;
    state.sent.add(record.row);
    const at = record.at === undefined ? Number.NaN : Date.parse(record.at);
    if (Number.isFinite(at)) state.sentAt.set(record.row, at);
  };
  const notOurs = (line: number, why: string) =>
    new UsageError(
      message`--output ${path} is not a ugs ${kind} results file: line ${line} ${why}`,
      {
        hint: 'name the file the earlier run wrote its results to, or a new file',
      },
    );
  // A CSV file's header says its columns: today's, or an earlier version's (without `at`).
  let columns: readonly string[] = schema.columns;
  const csv = format === 'csv' ? await loadCsvParser() : undefined;
  let sawHeader = false;
  const takeCells = (cells: string[] | undefined, line: number) => {
    if (!sawHeader) {
      const other = schema.others.find(
        ({ columns }) => cells !== undefined && cells.join(',') === columns.join(','),
      );
      if (other !== undefined) throw writtenByOther(path, kind, other.command);
      const header = csvHeaders(schema).find(
        (known) => cells !== undefined && cells.join(',') === known.join(','),
      );
      if (header === undefined) {
        throw notOurs(line, `is not the header ${schema.columns.join(',')}`);
      }
      columns = header;
      sawHeader = true;
      return;
    }
    if (cells === undefined || cells.length !== columns.length) {
      state.tornLines++;
      return;
    }
    const record = recordOf(csvValues(cells, columns), schema);
    if (record === undefined) throw notOurs(line, 'is not a result record');
    take(record, line);
  };
  // CSV lines are parsed a thousand at a time (one parser call per line costs seconds on a
  // large file); a batch that does not come out as one record per line is redone line by line.
  let batch: { text: string; line: number }[] = [];
  const takeBatch = () => {
    if (csv === undefined || batch.length === 0) return;
    const records = csv(batch.map((entry) => entry.text).join('\n'));
    if (records !== undefined && records.length === batch.length) {
      batch.forEach((entry, index) => {
        takeCells(records[index], entry.line);
      });
    } else {
      for (const entry of batch) takeCells(csv(entry.text)?.[0], entry.line);
    }
    batch = [];
  };
  try {
    for await (const { text, line } of completeLines(path)) {
      if (text.trim() === '') continue;
      if (csv !== undefined) {
        if (balancedQuotes(text)) {
          batch.push({ text, line });
          if (batch.length >= 1000) takeBatch();
        } else {
          takeBatch();
          takeCells(undefined, line);
        }
        continue;
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        state.tornLines++;
        continue;
      }
      const writer = isPlainObject(value) ? foreignWriter(value, schema) : undefined;
      if (writer !== undefined) throw writtenByOther(path, kind, writer);
      const record = recordOf(value, schema);
      if (record === undefined) throw notOurs(line, 'is not a result record');
      take(record, line);
    }
    takeBatch();
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return state;
    if (error instanceof UsageError) throw error;
    const why = errorCode(error) ?? (error instanceof Error ? error.message : String(error));
    throw new UsageError(message`--output ${path}: cannot read the results (${why})`);
  }
  return state;
}

/** Another command that wrote this NDJSON record (its fields tell: `writerOf`, records.ts). */
export function foreignWriter(
  value: Record<string, unknown>,
  schema: RecordSchema,
): string | undefined {
  const writer = writerOf(value, schema);
  return writer !== undefined && writer !== schema.command ? writer : undefined;
}

/**
 * The results of the other command are never read as this one's: `rotate --resume` would take
 * get's `created` rows as done and rotate nothing, and records of both in one file could not be
 * told apart row by row.
 */
export function writtenByOther(path: string, kind: string, other: string): UsageError {
  return new UsageError(
    message`--output ${path} holds the results of ugs ${other} --from, not of ${kind}; nothing was sent`,
    {
      hint: `${kind} results need a file of their own: name a new --output file, or the one an earlier ugs ${kind} --from wrote`,
    },
  );
}

/**
 * A results file written with the other `--output-tokens` (`written`) than this run's: resumed
 * only the way it was started.
 */
export function otherTokens(path: string, written: OutputTokens, line?: number): UsageError {
  const what =
    written === 'full'
      ? 'holds whole tokens (written with --output-tokens full)'
      : 'holds no whole tokens (written with --output-tokens last4)';
  return new UsageError(
    message`--output ${path} ${what}${line === undefined ? '' : ` (line ${line})`}; nothing was sent`,
    {
      hint: `resume it with --output-tokens ${written}, as it was started, or name a new --output file`,
    },
  );
}

/** Lines that end with a line break; a final line without one is torn and never returned. */
async function* completeLines(path: string): AsyncGenerator<{ text: string; line: number }> {
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  let pending = '';
  let line = 0;
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let start = 0;
      let at = chunk.indexOf('\n');
      while (at !== -1) {
        line++;
        const text = pending + chunk.slice(start, at);
        pending = '';
        yield { text: text.endsWith('\r') ? text.slice(0, -1) : text, line };
        start = at + 1;
        at = chunk.indexOf('\n', start);
      }
      pending += chunk.slice(start);
    }
  } finally {
    stream.destroy();
  }
}

/** Every quote of a CSV line written by ugs is paired; a line cut inside a quoted cell is not. */
function balancedQuotes(text: string): boolean {
  let count = 0;
  for (let at = text.indexOf('"'); at !== -1; at = text.indexOf('"', at + 1)) count++;
  return count % 2 === 0;
}

/** Records of CSV text, or undefined when it is not valid CSV. */
type CsvParser = (text: string) => string[][] | undefined;

async function loadCsvParser(): Promise<CsvParser> {
  const { parseSync } = await import('../vendor/csv.js');
  return (text) => {
    try {
      return parseSync(text, { relax_column_count: true }) as string[][];
    } catch {
      return undefined;
    }
  };
}

/** A CSV results record's values (cells unguarded, numbers read back). */
export function csvValues(cells: string[], columns: readonly string[]): Record<string, unknown> {
  const value: Record<string, unknown> = {};
  columns.forEach((column, index) => {
    const cell = cells[index] ?? '';
    if (cell === '') value[column] = null;
    else if (column === 'row' || column === 'http_status') {
      value[column] = /^-?\d+$/.test(cell) ? Number(cell) : cell;
    } else if (column === 'team_id') {
      // A number is written bare; a text one (the service's, as sent) guarded like any text.
      value[column] = /^-?\d+$/.test(cell) ? Number(cell) : unguardCell(cell);
    } else if (column === 'new_user_group') {
      value[column] = cell === 'true' ? true : cell === 'false' ? false : cell;
    } else value[column] = unguardCell(cell);
  });
  return value;
}

function stringOrNull(value: unknown): value is string | null {
  return value === null || typeof value === 'string';
}

/** A service value a record keeps as sent (records.ts `sentValue`). */
function sentOrNull(value: unknown): value is SentValue {
  return stringOrNull(value) || numberOrNull(value) || typeof value === 'boolean';
}

function numberOrNull(value: unknown): value is number | null {
  return value === null || (typeof value === 'number' && Number.isFinite(value));
}

/** The record a parsed line holds, checked field by field; undefined when it is not one. */
function recordOf(value: unknown, schema: RecordSchema): BulkRecord | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const row = v.row;
  const status = v.status;
  if (typeof row !== 'number' || !Number.isSafeInteger(row) || row < 1) return undefined;
  if (typeof status !== 'string' || !(RECORD_STATUSES as readonly string[]).includes(status)) {
    return undefined;
  }
  const user_group_id = v.user_group_id ?? null;
  const name = v.name ?? null;
  const token = v.token ?? null;
  const team_id = v.team_id ?? null;
  const error = v.error ?? null;
  const http_status = v.http_status ?? null;
  if (!stringOrNull(user_group_id) || !stringOrNull(name) || !stringOrNull(token)) return undefined;
  if (!sentOrNull(team_id) || !numberOrNull(http_status) || !stringOrNull(error)) return undefined;
  const record: BulkRecord = {
    row,
    user_group_id,
    name,
    status: status as RecordStatus,
    token,
    team_id,
    error,
    http_status,
  };
  // A `--output-tokens last4` record: the token's last 4 and SHA-256, in its place.
  if ('token_sha256' in v) {
    const last4 = v.token_last4 ?? null;
    const sha256 = v.token_sha256 ?? null;
    if (!stringOrNull(last4) || !stringOrNull(sha256)) return undefined;
    record.token_last4 = last4;
    record.token_sha256 = sha256;
  }
  // The record's time: an ISO 8601 text, else the record is no record of ugs.
  const at = v.at ?? null;
  if (at !== null) {
    if (typeof at !== 'string' || !Number.isFinite(Date.parse(at))) return undefined;
    record.at = at;
  }
  for (const { field, always, resume } of schema.extras) {
    if (!resume || !(always || field in v)) continue;
    const value = v[field] ?? null;
    if (field === 'new_user_group') {
      if (value !== null && typeof value !== 'boolean') return undefined;
      record.new_user_group = value;
    } else if (field === 'api_environment_tag') {
      if (!sentOrNull(value)) return undefined;
      record.api_environment_tag = value;
    }
  }
  return record;
}
