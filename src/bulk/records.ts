/**
 * The result records of a bulk run: one or more per input row, the last one being the row's
 * outcome. Written as NDJSON (stdout, `--output x.ndjson`) or CSV (`--output x.csv`).
 */
import { createHash } from 'node:crypto';
import { UsageError } from '../errors.js';
import type { SettledBy } from '../input/bulk-options.js';
import { escapeControls } from '../platform/io.js';
import { compactJson, escapeRawControls } from '../text/json-text.js';
import { message } from '../text/message.js';
import { lastFour } from '../text/redact.js';

export type RecordStatus =
  | 'created'
  | 'found'
  | 'rotated'
  /** An update's answer: the group's data was changed (its token stays). */
  | 'updated'
  /** Delete: the group is gone (its answer said so, or a 404 after an earlier `sending`). */
  | 'deleted'
  /**
   * Rotate: the answer names another group than the row's `user_group_id`. The rotation did
   * happen (the new token is recorded), but the run counts the row as failed.
   */
  | 'mismatch'
  /**
   * Rotate: the service did not know the row's token (404), and reading the group back found
   * another token, with no earlier `sending` record of the row in the results: not rotated by
   * ugs, the token was not current. The record carries the group's current token; a failure.
   */
  | 'stale'
  | 'failed'
  | 'unknown'
  | 'skipped'
  /** Journal entry: the rotation request is about to be sent; not an outcome. */
  | 'sending';

export const RECORD_STATUSES: readonly RecordStatus[] = [
  'created',
  'found',
  'rotated',
  'updated',
  'deleted',
  'mismatch',
  'stale',
  'failed',
  'unknown',
  'skipped',
  'sending',
];

/**
 * Outcomes that `--resume` does not send again. A `mismatch` rotation did happen: its current
 * token is dead, and sending it again could only fail or rotate the wrong group once more. A
 * `stale` row's token is not the group's (its record holds the current one): sending it again
 * could only be refused again.
 */
export function isDone(status: RecordStatus): boolean {
  return (
    status === 'created' ||
    status === 'found' ||
    status === 'rotated' ||
    status === 'updated' ||
    status === 'deleted' ||
    status === 'mismatch' ||
    status === 'stale'
  );
}

/** Outcomes that `--resume` must settle (did the request happen?) before sending anything. */
export function needsSettling(status: RecordStatus): boolean {
  return status === 'sending' || status === 'unknown';
}

export interface BulkRecord {
  /** 1-based data row of the input. */
  row: number;
  user_group_id: string | null;
  name: string | null;
  status: RecordStatus;
  token: string | null;
  /**
   * `--output-tokens last4` results files only, in place of the token (then null): its last 4
   * characters (null for a token too short to show any), and the SHA-256 of the whole token in
   * hex, which `printf %s "$TOKEN" | sha256sum` matches without any key (tokenTail).
   */
  token_last4?: string | null;
  token_sha256?: string | null;
  /** As the service sent it (a string stays a string); an object or array as its JSON text. */
  team_id: SentValue;
  /** Rotate records only; omitted when the service did not send it. As sent, like team_id. */
  api_environment_tag?: SentValue;
  /** Get records only. */
  new_user_group?: boolean | null;
  /**
   * Rotate records: `get` when the outcome was learnt by reading the group's current token back
   * after the rotation's answer was lost (the rotation had happened), not from its answer.
   * Delete records: `delete` when the delete, sent again after a lost answer, was refused with a
   * 404 (the earlier request had deleted the group).
   */
  settled_by?: SettledBy;
  /**
   * Update records only: the fields the row changes, space-separated (`name properties`), so a
   * results file says what each row was to change; null in a record that does not know it.
   */
  changed?: string | null;
  error: string | null;
  http_status: number | null;
  /**
   * When the engine wrote the record (UTC ISO 8601 with milliseconds); `sending` records carry it,
   * so `--resume` knows whether that request may still be in flight. Absent in older files.
   */
  at?: string;
}

/** A value of the service's answer kept in a record as it was sent. */
export type SentValue = string | number | boolean | null;

/**
 * A value of the answer for a record: scalars as sent, never coerced to null because they are
 * not of the documented type (the record shows what the service said); an object or array as
 * its compact JSON text, since a record field is one CSV cell.
 */
export function sentValue(value: unknown): SentValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : compactJson(value);
  return compactJson(value);
}

export type OutputFormat = 'ndjson' | 'csv';

export function outputFormatFor(path: string): OutputFormat {
  const lower = path.toLowerCase();
  if (lower.endsWith('.ndjson') || lower.endsWith('.jsonl')) return 'ndjson';
  if (lower.endsWith('.csv')) return 'csv';
  throw new UsageError(message`cannot tell the format of --output "${path}" from its extension`, {
    hint: 'name the results file .ndjson, .jsonl or .csv',
  });
}

/** Every field a record may have: the CSV columns of any command's results come from these. */
export type RecordColumn = keyof BulkRecord;

/** The fields a command's records add to the common ones. */
export type ExtraField = 'api_environment_tag' | 'new_user_group' | 'settled_by' | 'changed';

/** A command's result records: its CSV columns and the fields only its records have. */
export interface RecordSchema {
  /** The command, as typed: `get` (messages name it). */
  command: string;
  /** The CSV columns, in order (the header line). */
  columns: readonly RecordColumn[];
  /**
   * Fields beyond the common ones, in NDJSON order (after team_id): an `always` field is in
   * every record (null when unset), another only when set; `resume` ones are read back.
   */
  extras: readonly { field: ExtraField; always: boolean; resume: boolean }[];
  /** What only this command's records hold: how `writerOf` tells its NDJSON records apart. */
  marks: RecordMarks;
  /**
   * Headers written by earlier versions of ugs (e.g. before the `at` column): such a file is
   * still read and resumed, and appended to in its own columns, so every line keeps one width.
   */
  formerColumns?: readonly (readonly RecordColumn[])[];
  /** The other commands whose results files must not be taken for this one's. */
  others: readonly { command: string; columns: readonly RecordColumn[]; marks: RecordMarks }[];
  /**
   * `last4`: the schema of a results file written with `--output-tokens last4` (withTokenTails):
   * its records hold `token_last4` and `token_sha256`, never a whole token. Absent: whole tokens.
   */
  tokens?: OutputTokens;
}

/**
 * `--output-tokens`: what a results file keeps of each token. `full` (the default): the whole
 * token. `last4`: its last 4 characters and SHA-256, for runs whose tokens go elsewhere (the
 * whole records then go to stdout only).
 */
export type OutputTokens = 'full' | 'last4';

/**
 * A record as a `--output-tokens last4` file keeps it: the token replaced by its last 4 and its
 * SHA-256. The hash is plain, not keyed: a group token is the service's random secret (64 hex
 * digits, 256 bits), so its hash gives nothing away that guessing could use, and anyone holding
 * a token can match it to its row with standard tools on any machine, where a keyed fingerprint
 * (the history's) needs a key that stays on the machine that made it.
 */
export function tokenTail(record: BulkRecord): BulkRecord {
  const { token } = record;
  if (token === null) {
    return record.token_sha256 === undefined
      ? { ...record, token_last4: null, token_sha256: null }
      : record;
  }
  return {
    ...record,
    token: null,
    token_last4: lastFour(token) ?? null,
    token_sha256: tokenSha256(token),
  };
}

/** The SHA-256 of a token, in lower-case hex (what `sha256sum` prints). */
export function tokenSha256(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** CSV columns of a `--output-tokens last4` file: `token` becomes `token_last4,token_sha256`. */
export function tokenTailColumns(columns: readonly RecordColumn[]): readonly RecordColumn[] {
  return columns.flatMap((column): RecordColumn[] =>
    column === 'token' ? ['token_last4', 'token_sha256'] : [column],
  );
}

/** The schema of a `--output-tokens last4` results file (its CSV headers without `token`). */
export function withTokenTails(schema: RecordSchema): RecordSchema {
  return {
    ...schema,
    tokens: 'last4',
    columns: tokenTailColumns(schema.columns),
    // Earlier versions never wrote such a file: only today's header is one of its own.
    formerColumns: [],
    // Another command's file is refused by name, whichever way it keeps its tokens.
    others: schema.others.flatMap((other) => [
      other,
      { ...other, columns: tokenTailColumns(other.columns) },
    ]),
  };
}

/**
 * Why a results file's record cannot give a current token to send (`rotate --from` and
 * `delete --from` reading ugs's results): it was written with `--output-tokens last4`.
 */
export function wholeTokenProblem(record: Record<string, unknown>): string | undefined {
  if (record.token !== undefined && record.token !== null) return undefined;
  if (typeof record.token_sha256 !== 'string') return undefined;
  return 'its record holds no whole token (the results were written with --output-tokens last4): give the current tokens from where that run sent them (its stdout)';
}

/**
 * What marks a command's NDJSON records (a CSV file says it by its header): a field in every
 * record of it and of no other command, and statuses that only it writes.
 */
export interface RecordMarks {
  field?: ExtraField;
  statuses: readonly RecordStatus[];
}

/**
 * Which command wrote an NDJSON record, as far as its fields tell, among `schema`'s command and
 * its others: the one whose marks it fits, when exactly one does. A record of a command has that
 * command's marking field and no other's, and no status only another command writes. Undefined
 * when its fields contradict each other, or when it is no result record at all (the input's
 * rows, or anything else, are no one's results).
 */
export function writerOf(value: Record<string, unknown>, schema: RecordSchema): string | undefined {
  if (typeof value.row !== 'number' || typeof value.status !== 'string') return undefined;
  const status = value.status as RecordStatus;
  const writers = [schema, ...schema.others].filter(
    (writer, index, all) => all.findIndex((other) => other.command === writer.command) === index,
  );
  const fits = writers.filter(({ command, marks }) => {
    if (marks.field !== undefined && !(marks.field in value)) return false;
    return writers.every(
      (other) =>
        other.command === command ||
        ((other.marks.field === undefined ||
          other.marks.field === marks.field ||
          !(other.marks.field in value)) &&
          (!other.marks.statuses.includes(status) || marks.statuses.includes(status))),
    );
  });
  return fits.length === 1 ? fits[0]?.command : undefined;
}

/** Every header a command's CSV results file may have: today's first, then earlier ones. */
export function csvHeaders(schema: RecordSchema): readonly (readonly RecordColumn[])[] {
  return [schema.columns, ...(schema.formerColumns ?? [])];
}

/** One NDJSON line (with its newline), keys in column order. */
export function ndjsonLine(record: BulkRecord, schema: RecordSchema): string {
  // Written field by field: one line per row, and a generic stringify of a fresh object per
  // line is a measurable part of a bulk run.
  let line = `{"row":${json(record.row)},"user_group_id":${json(record.user_group_id)},"name":${json(record.name)},"status":${json(record.status)},"token":${json(record.token)}`;
  if (record.token_sha256 !== undefined) {
    line += `,"token_last4":${json(record.token_last4 ?? null)},"token_sha256":${json(record.token_sha256)}`;
  }
  line += `,"team_id":${json(record.team_id)}`;
  for (const { field, always } of schema.extras) {
    const value = record[field];
    if (value !== undefined) line += `,"${field}":${json(value)}`;
    else if (always) line += `,"${field}":null`;
  }
  line += `,"error":${json(record.error)},"http_status":${json(record.http_status)}`;
  if (record.at !== undefined) line += `,"at":${json(record.at)}`;
  line += '}';
  return `${escapeRawControls(line)}\n`;
}

function json(value: string | number | boolean | null): string {
  // Most fields of most records are null, numbers or booleans: no call into JSON for those.
  // (Every number here is finite: rows, statuses, team ids checked by numberOrNull.)
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  return Number.isFinite(value) || typeof value === 'boolean' ? String(value) : 'null';
}

/**
 * A record as CSV cells. Control characters are escaped so every record is one physical line,
 * and text that a spreadsheet would run as a formula is guarded (`guardCell`).
 */
export function csvCells(
  record: BulkRecord,
  schema: RecordSchema,
  columns: readonly RecordColumn[] = schema.columns,
): string[] {
  return columns.map((column) => {
    const value = record[column];
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? guardCell(escapeControls(value)) : String(value);
  });
}

/** What makes a spreadsheet read a cell as a formula; and the guard itself, to stay reversible. */
const FORMULA_START = /^[=+\-@']/;

/**
 * The same after a `;` or tab inside a cell, plus a quote: a spreadsheet that splits lines on `;`
 * (its list separator in many locales) starts a new cell there, and in the file a quote of the
 * text is doubled, which such a reader may take as an opening quote with a formula after it.
 */
const FORMULA_AFTER_SEPARATOR = /^[=+\-@'"]/;

/** Where a spreadsheet splitting on `;` or tabs starts a new cell; kept by `split`. */
const SEPARATORS = /([;\t])/;

/**
 * A CSV results file is opened in spreadsheets: a name or error text (server words among them)
 * starting with = + - @ would run there as a formula ("CSV injection"). Such a cell gets a
 * leading apostrophe, which spreadsheets read as "text". A cell that starts with an apostrophe
 * gets one more, so `unguardCell` gives back exactly what was guarded. The text after each `;`
 * or tab is guarded the same way, since a spreadsheet splitting on those reads it as a cell of
 * its own whatever the quotes say.
 */
export function guardCell(text: string): string {
  if (!SEPARATORS.test(text)) return guardPart(text, FORMULA_START);
  return text
    .split(SEPARATORS)
    .map((part, index) =>
      // Odd indexes are the separators themselves; even ones the text between them.
      index % 2 === 1
        ? part
        : guardPart(part, index === 0 ? FORMULA_START : FORMULA_AFTER_SEPARATOR),
    )
    .join('');
}

export function unguardCell(text: string): string {
  if (!SEPARATORS.test(text)) return unguardPart(text, FORMULA_START);
  return text
    .split(SEPARATORS)
    .map((part, index) =>
      index % 2 === 1
        ? part
        : unguardPart(part, index === 0 ? FORMULA_START : FORMULA_AFTER_SEPARATOR),
    )
    .join('');
}

function guardPart(text: string, start: RegExp): string {
  return start.test(text) ? `'${text}` : text;
}

function unguardPart(text: string, start: RegExp): string {
  return text.length > 1 && text[0] === "'" && start.test(text.slice(1)) ? text.slice(1) : text;
}

/**
 * Cells that need quotes: besides what RFC 4180 names (comma, quote, CR, LF; csv-stringify
 * leaves a lone CR bare), a `;` or tab, so a reader that takes either as its separator and
 * honours quotes keeps the cell whole.
 */
const NEEDS_QUOTES = /[,;\t"\r\n]/;

export type Stringify = (rows: string[][]) => string;

/** Loads csv-stringify (a lazy bundle) and fixes its options for records. */
export async function loadCsvStringify(): Promise<Stringify> {
  const { stringify } = await import('../vendor/csv.js');
  return (rows) => stringify(rows, { record_delimiter: 'unix', quoted_match: NEEDS_QUOTES });
}
