/**
 * Every row of a bulk input is checked before any request is sent, by the rules of the
 * single-row flags, and all problems are reported at once (`row N (line L): ...`).
 *
 * One read of the input: `openBulkInput` validates every row and keeps the valid rows, and
 * `rows()` yields those very rows. The rows sent are the rows checked, whatever happens to the
 * file after the read, and a run never stops half way because the file changed under it.
 */
import { UsageError } from '../errors.js';
import type { BulkRow, RowFields, RowSchema } from '../input/bulk-options.js';
import {
  formatJsonPath,
  groupTextProblem,
  MAX_JSON_DEPTH,
  quote,
  quoteVisible,
  setOwn,
} from '../input/parse.js';
import { displayWidth } from '../output/text.js';
import { isPlainObject } from '../platform/guards.js';
import { escapeControls, formatBytes } from '../platform/io.js';
import { duplicateJsonKey, jsonNestingDepth, mayRepeatKeys } from '../text/json-lexer.js';
import {
  type ByteSource,
  type CsvReading,
  delimiterFlag,
  delimiterName,
  type InputFormat,
  otherDelimiterIn,
  type RowCandidate,
  readCandidates,
} from './input.js';
import { csvValues } from './resume.js';

/** The cap of one JSON value (mapping, properties), the same as for `--properties @file`. */
const MAX_JSON_VALUE_BYTES = 1024 * 1024;
/** The widest id `widestId` measures. */
const MAX_ID_WIDTH = 32;
/** How many problems are listed before "and K more". */
export const MAX_LISTED_ERRORS = 20;
/** Rows a batch of `batches()` holds: a bulk run pays per batch, not per row, to move them. */
const BATCH_ROWS = 256;

export interface BulkInput<R> {
  /** Data rows in the input (all of them valid). */
  rowCount: number;
  /** CSV records whose cells are all empty (Excel's `,,,` rows, blank lines): skipped. */
  blankRows: number;
  /**
   * CSV columns ugs does not know, as a message names them (`"Owner"`), ignored; empty unless
   * some are. A column without a name is named only when one of its cells holds something.
   */
  ignoredColumns: string[];
  /** The display width of the widest user_group_id, up to 32 (a terminal's row lines pad to it). */
  widestId: number;
  /** The validated rows, in file order, from memory (the input is not read again). */
  rows(): AsyncIterable<R>;
  /** The same, a batch at a time (a bulk run pays per batch, not per row, to move them). */
  batches(): AsyncIterable<R[]>;
}

/** How a CSV input is read: `--delimiter`, and `--strict-columns` (unknown columns refused). */
export interface CsvOptions extends CsvReading {
  strictColumns?: boolean | undefined;
}

/** Sees every valid row of the validation pass (`--resume` compares it with the results file). */
export type RowCheck = (row: { row: number; user_group_id?: string | undefined }) => void;

/** Validates the whole input (pass 1) by the rows' schema; throws one UsageError listing the problems. */
export async function openBulkInput<Row extends BulkRow>(
  source: ByteSource,
  format: InputFormat,
  schema: RowSchema<Row>,
  check?: RowCheck,
  csv: CsvOptions = {},
): Promise<BulkInput<Row>> {
  if (schema.fromResults !== undefined && format !== 'json') {
    const rows = await resultsAsRows(source, format, schema.fromResults, csv);
    if (rows !== undefined) {
      source = rows;
      format = 'ndjson';
    }
  }
  const errors = new ErrorList();
  // Each key (NFC-normalised when the schema says so) with the first row that had it.
  const seen = new Map<string, number>();
  // To tell an exact repeat from one that only normalises the same: the keys as written that are
  // not in NFC, and the NFC keys that no row has had as written yet. Keys written in NFC (nearly
  // all) are in neither, so these stay small (a set of every key: 10 MiB at 200,000 rows).
  const notNfc = new Set<string>();
  const nfcUnwritten = new Set<string>();
  const kept: Row[] = [];
  let widestId = 0;
  const seenColumns: SeenColumns = { blankRows: 0, ignored: [] };
  const { unique } = schema;
  for await (const batch of validatedRows(source, format, schema, csv, seenColumns)) {
    for (const result of batch) {
      if ('problems' in result) {
        for (const problem of result.problems) errors.add(result.row, result.line, problem);
        if (result.hint !== undefined) errors.hint = result.hint;
        continue;
      }
      const row = result.value;
      const id = row.user_group_id;
      if (id !== undefined && widestId < MAX_ID_WIDTH) {
        widestId = Math.max(widestId, Math.min(MAX_ID_WIDTH, displayWidth(id)));
      }
      check?.(row);
      const key = unique.key(row);
      // Ids equal once NFC-normalised ("é" as one code point, or e + U+0301) look the same and
      // are typed either way by different keyboards and editors: one is a mistake for the other.
      const normalized = unique.normalize ? key.normalize('NFC') : key;
      const first = seen.get(normalized);
      if (first === undefined) {
        seen.set(normalized, row.row);
        if (key !== normalized) {
          notNfc.add(key);
          nfcUnwritten.add(normalized);
        }
        // Only a row that will be sent is kept: an input with problems sends nothing.
        if (errors.empty) kept.push(row);
        continue;
      }
      let exact = true;
      if (key !== normalized) {
        exact = notNfc.has(key);
        notNfc.add(key);
      } else if (nfcUnwritten.delete(key)) {
        exact = false;
      }
      errors.add(row.row, row.line, unique.problem(row, first, exact));
    }
  }
  errors.throwIfAny();
  if (kept.length === 0) {
    throw new UsageError('--from: the input has no rows', {
      hint:
        format === 'csv'
          ? 'a CSV input needs a header line and at least one row'
          : 'each row is a JSON object',
    });
  }
  const batches = async function* (): AsyncGenerator<Row[]> {
    for (let at = 0; at < kept.length; at += BATCH_ROWS) yield kept.slice(at, at + BATCH_ROWS);
  };
  return {
    rowCount: kept.length,
    blankRows: seenColumns.blankRows,
    ignoredColumns: ignoredColumnNames(seenColumns.ignored),
    widestId,
    batches,
    async *rows() {
      for await (const batch of batches()) yield* batch;
    },
  };
}

/**
 * A results file of ugs (its records have `row` and `status`) as rows: the last record of each
 * row, in row order, through the spec's `fromResults`; rows it refuses are listed by their row
 * numbers in the results (exit 2, nothing sent). Undefined when the input is no results file.
 * Held in memory, as a rotate input is anyway.
 */
async function resultsAsRows(
  source: ByteSource,
  format: InputFormat,
  fromResults: (record: RowFields) => RowFields | string,
  csv: CsvReading,
): Promise<ByteSource | undefined> {
  let columns: string[] | undefined;
  const last = new Map<number, { line: number; record: RowFields }>();
  let first = true;
  for await (const items of readCandidates(source, format, csv)) {
    for (const item of items) {
      if (item.kind === 'blank') continue;
      if (item.kind === 'header') {
        // Exactly as ugs writes them: a user's own sheet with a "Status" column is rows to send.
        if (!item.cells.includes('row') || !item.cells.includes('status')) return undefined;
        columns = item.cells;
        continue;
      }
      let record: unknown;
      if (item.kind === 'csv') record = csvValues(item.cells, columns ?? []);
      else {
        try {
          record = JSON.parse(item.text);
        } catch {
          record = undefined;
        }
      }
      const isRecord =
        typeof record === 'object' &&
        record !== null &&
        !Array.isArray(record) &&
        'row' in record &&
        'status' in record;
      if (first && !isRecord) return undefined;
      first = false;
      // A line torn by a kill, or no record: the row's outcome is whatever came before.
      if (!isRecord) continue;
      const fields = record as RowFields;
      const row = fields.row;
      if (typeof row !== 'number' || !Number.isSafeInteger(row) || row < 1) continue;
      last.set(row, { line: item.line, record: fields });
    }
  }
  if (first) return undefined;
  const errors = new ErrorList();
  let text = '';
  for (const row of [...last.keys()].sort((a, b) => a - b)) {
    const { line, record } = last.get(row) as { line: number; record: RowFields };
    const fields = fromResults(record);
    if (typeof fields === 'string') errors.add(row, line, fields);
    else text += `${JSON.stringify(fields)}\n`;
  }
  errors.throwIfAny();
  return async function* () {
    yield text;
  };
}

class ErrorList {
  private readonly listed: string[] = [];
  private more = 0;
  /** The hint of the report, when one problem knows a better one than "fix the rows". */
  hint: string | undefined;

  add(row: number | undefined, line: number, problem: string): void {
    if (this.listed.length >= MAX_LISTED_ERRORS) {
      this.more++;
      return;
    }
    this.listed.push(
      row === undefined
        ? `line ${line} (the header): ${problem}`
        : `row ${row} (line ${line}): ${problem}`,
    );
  }

  get empty(): boolean {
    return this.listed.length === 0;
  }

  throwIfAny(): void {
    if (this.listed.length === 0) return;
    const total = this.listed.length + this.more;
    const lines = this.more > 0 ? [...this.listed, `and ${this.more} more`] : this.listed;
    throw new UsageError(
      `--from: ${total} ${total === 1 ? 'problem' : 'problems'} in the input, nothing was sent:\n  ${lines.join('\n  ')}`,
      { hint: this.hint ?? 'fix the rows listed and run again' },
    );
  }
}

type Checked<Row> =
  | { value: Row }
  | { row: number | undefined; line: number; problems: string[]; hint?: string };

/** What the validation saw besides rows: blank rows, and the columns it ignored. */
interface SeenColumns {
  blankRows: number;
  /** Ignored columns: their header text, and whether a cell of theirs held something. */
  ignored: { name: string; used: boolean }[];
}

/** Each candidate checked on its own (no duplicate detection here). */
async function* validatedRows<Row extends BulkRow>(
  source: ByteSource,
  format: InputFormat,
  schema: RowSchema<Row>,
  csv: CsvOptions,
  seen: SeenColumns,
): AsyncGenerator<Checked<Row>[]> {
  let columns: CsvColumns | undefined;
  for await (const batch of readCandidates(source, format, csv)) {
    const checked: Checked<Row>[] = [];
    for (const item of batch) {
      if (item.kind === 'blank') {
        seen.blankRows++;
        continue;
      }
      if (item.kind === 'header') {
        const header = csvColumns(item.cells, schema, csv.strictColumns === true);
        if (header.problems.length > 0) {
          const other = otherDelimiterIn(item.cells.join(item.delimiter), item.delimiter);
          yield [
            {
              row: undefined,
              line: 1,
              problems: header.problems,
              ...(other !== undefined && {
                hint: `the header looks separated by ${delimiterName(other)}, not ${delimiterName(item.delimiter)}: pass --delimiter ${delimiterFlag(other)}`,
              }),
            },
          ];
          return;
        }
        columns = header;
        seen.ignored = [...header.ignored].map((index) => ({
          name: (item.cells[index] ?? '').trim(),
          used: false,
        }));
        continue;
      }
      if (columns !== undefined && item.kind === 'csv' && seen.ignored.length > 0) {
        let at = 0;
        for (const index of columns.ignored) {
          const column = seen.ignored[at++];
          if (column !== undefined && !column.used && (item.cells[index] ?? '') !== '') {
            column.used = true;
          }
        }
      }
      checked.push(checkRow(item, columns, schema));
    }
    if (checked.length > 0) yield checked;
  }
}

/** How many ignored columns a note names before "and N more". */
const MAX_NAMED_COLUMNS = 10;

/** The ignored columns as a note names them; unnamed ones only when they held something. */
function ignoredColumnNames(ignored: readonly { name: string; used: boolean }[]): string[] {
  const named = ignored
    .filter((column) => column.name !== '')
    .map((column) => quoteVisible(column.name));
  const unnamed = ignored.filter((column) => column.name === '' && column.used).length;
  const shown = named.slice(0, MAX_NAMED_COLUMNS);
  if (named.length > shown.length) shown.push(`${named.length - shown.length} more`);
  if (unnamed > 0) shown.push(`${unnamed} without a name`);
  return shown;
}

function checkRow<Row extends BulkRow>(
  item: RowCandidate,
  columns: CsvColumns | undefined,
  schema: RowSchema<Row>,
): Checked<Row> {
  const problems: string[] = [];
  let fields: Fields | undefined;
  if (item.kind === 'csv') {
    if (columns === undefined) throw new Error('CSV row before its header');
    fields = csvFields(item.cells, columns, schema, problems);
  } else {
    fields = jsonFields(item.text, schema, problems);
  }
  const value =
    fields === undefined ? undefined : schema.check(item.row, item.line, fields, problems);
  if (problems.length > 0 || value === undefined) {
    return { row: item.row, line: item.line, problems };
  }
  return { value };
}

/**
 * A row's fields before their rules are applied. Object fields (get's `mapping`, `properties`)
 * are parsed objects (from NDJSON, or the JSON text of a CSV cell merged with its
 * `<field>.<key>` columns).
 */
type Fields = RowFields;

/** A value's JSON type, as problems name it: `a string`, `an array`, `null`. */
export function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** UTF-8 size of a string without encoding it, when its length alone decides. */
function exceedsBytes(text: string, max: number): boolean {
  if (text.length > max) return true;
  if (text.length * 3 <= max) return false;
  return Buffer.byteLength(text) > max;
}

function jsonFields(
  text: string,
  schema: RowSchema<BulkRow>,
  problems: string[],
): Fields | undefined {
  // The row object is one level itself: its values may nest MAX_JSON_DEPTH more.
  const depth = jsonNestingDepth(text);
  if (depth > MAX_JSON_DEPTH + 1) {
    problems.push(`nests ${depth - 1} levels deep, more than the ${MAX_JSON_DEPTH} allowed`);
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8 quotes the text near the error, which may be a current token.
    const detail =
      schema.quoteJsonErrors && error instanceof Error ? ` (${escapeControls(error.message)})` : '';
    problems.push(`is not valid JSON${detail}`);
    return undefined;
  }
  if (!isPlainObject(value)) {
    problems.push(`must be a JSON object, got ${typeOf(value)}`);
    return undefined;
  }
  // JSON.parse keeps the last of two equal keys: a row must not mean something else than it reads.
  const duplicate = mayRepeatKeys(text, value) ? duplicateJsonKey(text) : undefined;
  if (duplicate !== undefined) {
    problems.push(`has the key ${formatJsonPath(duplicate)} more than once`);
    return undefined;
  }
  const allowed = schema.fields;
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) problems.push(`unknown field ${quote(key)}`);
  }
  // A row under the cap cannot hold a value over it; only bigger rows pay for measuring.
  if (schema.objects.length > 0 && exceedsBytes(text, MAX_JSON_VALUE_BYTES)) {
    for (const field of schema.objects) {
      const entry = value[field];
      if (entry !== undefined && exceedsBytes(JSON.stringify(entry), MAX_JSON_VALUE_BYTES)) {
        problems.push(`${field} is larger than ${formatBytes(MAX_JSON_VALUE_BYTES)}`);
        value[field] = undefined;
      }
    }
  }
  return value;
}

interface CsvColumns {
  /** Column index -> field name for plain columns. */
  plain: Map<number, string>;
  /** Column index -> [object field, key] for `mapping.<key>` and `properties.<key>`. */
  keyed: Map<number, [string, string]>;
  /** Indexes of the columns ugs does not know (ignored without --strict-columns). */
  ignored: number[];
  width: number;
  problems: string[];
  /** The rows' short cells, one string for each value. */
  shared: SharedCells;
}

/** Cells this long or shorter are shared: JSON.parse shares string values up to this length. */
const MAX_SHARED_CELL = 10;
/** Distinct values shared, at most; later ones are kept as they are. */
const MAX_SHARED_CELLS = 4096;

/**
 * Short cells that repeat (a region, a plan, `true`) as one string for every row: V8's JSON.parse
 * shares short string values between rows, but each CSV cell is a string of its own, and the rows
 * are kept until sent. 200,000 CSV rows with three such properties kept 17 MiB more than the same
 * rows as NDJSON. Bounded, so unique short values cost nothing more than a look-up.
 */
class SharedCells {
  private readonly strings = new Map<string, string>();

  get(cell: string): string {
    if (cell.length > MAX_SHARED_CELL) return cell;
    const shared = this.strings.get(cell);
    if (shared !== undefined) return shared;
    if (this.strings.size < MAX_SHARED_CELLS) this.strings.set(cell, cell);
    return cell;
  }
}

/**
 * A header cell as a column name: without the spaces around it, in lower case, and with spaces or
 * hyphens between words as underscores, as spreadsheet users title their columns (`User Group
 * ID`, `User_Group_ID `, `current-token` for `user_group_id` and `current_token`; no field of ugs
 * has a space or a hyphen). A `<field>.<key>` column keeps its key as written: the key is the
 * user's data.
 */
function columnName(cell: string): string {
  const name = cell.trim();
  const dot = name.indexOf('.');
  const field = (dot === -1 ? name : name.slice(0, dot)).toLowerCase().replace(/[\s-]+/g, '_');
  return dot === -1 ? field : `${field}${name.slice(dot)}`;
}

function csvColumns(cells: string[], schema: RowSchema<BulkRow>, strict: boolean): CsvColumns {
  const allowed = schema.fields;
  const columns: CsvColumns = {
    plain: new Map(),
    keyed: new Map(),
    ignored: [],
    width: cells.length,
    problems: [],
    shared: new SharedCells(),
  };
  const seen = new Set<string>();
  cells.forEach((cell, index) => {
    const name = columnName(cell);
    const dot = name.indexOf('.');
    const field = dot === -1 ? name : name.slice(0, dot);
    const known = dot === -1 ? allowed.has(name) : schema.objects.includes(field);
    if (!known) {
      // Spreadsheets carry columns of their own (an owner, a price, notes): the rows are still
      // the rows, and one note names what was left out. --strict-columns refuses them instead.
      if (strict) columns.problems.push(`unknown column ${quote(cell)}`);
      else columns.ignored.push(index);
      return;
    }
    if (seen.has(name)) {
      columns.problems.push(`column ${quote(cell.trim())} appears twice`);
      return;
    }
    seen.add(name);
    if (dot !== -1) {
      const key = name.slice(dot + 1);
      if (key === '') columns.problems.push(`column ${quote(cell)} has an empty key`);
      else columns.keyed.set(index, [field, key]);
    } else {
      columns.plain.set(index, name);
    }
  });
  // A column ugs left out may be the one meant (`nmae`, `user group id`): the problem names them.
  const left = columns.ignored
    .map((index) => (cells[index] ?? '').trim())
    .filter((name) => name !== '');
  const leftOut =
    left.length === 0
      ? ''
      : ` (${left.length === 1 ? 'the column' : 'the columns'} ${left.slice(0, MAX_NAMED_COLUMNS).map(quoteVisible).join(', ')}${left.length > MAX_NAMED_COLUMNS ? ', ...' : ''} ${left.length === 1 ? 'is' : 'are'} not known to ugs)`;
  for (const field of schema.required) {
    if (!seen.has(field)) columns.problems.push(`no ${quote(field)} column${leftOut}`);
  }
  return columns;
}

function csvFields(
  cells: string[],
  columns: CsvColumns,
  schema: RowSchema<BulkRow>,
  problems: string[],
): Fields | undefined {
  if (cells.length !== columns.width) {
    problems.push(`has ${cells.length} cells, the header has ${columns.width}`);
    return undefined;
  }
  const fields: Fields = {};
  for (const [index, field] of columns.plain) {
    const cell = cells[index] ?? '';
    if (cell === '') continue; // an empty cell means "not given"
    if (schema.objects.includes(field)) {
      const parsed = jsonCell(cell, field, schema, problems);
      if (parsed !== undefined) fields[field] = parsed;
    } else {
      fields[field] = columns.shared.get(cell);
    }
  }
  for (const [index, [field, key]] of columns.keyed) {
    const cell = cells[index] ?? '';
    if (cell === '') continue;
    let target = fields[field];
    if (target === undefined) {
      target = {};
      fields[field] = target;
    }
    if (!isPlainObject(target)) continue; // the JSON column was wrong; already reported
    if (Object.hasOwn(target, key)) {
      problems.push(
        `${field} key ${quote(key)} is set both by the ${field} column and the ${field}.${key} column`,
      );
      continue;
    }
    setOwn<unknown>(target, key, columns.shared.get(cell));
  }
  return fields;
}

function jsonCell(
  cell: string,
  field: string,
  schema: RowSchema<BulkRow>,
  problems: string[],
): unknown {
  if (exceedsBytes(cell, MAX_JSON_VALUE_BYTES)) {
    problems.push(`${field} is larger than ${formatBytes(MAX_JSON_VALUE_BYTES)}`);
    return undefined;
  }
  const depth = jsonNestingDepth(cell);
  if (depth > MAX_JSON_DEPTH) {
    problems.push(`${field} nests ${depth} levels deep, more than the ${MAX_JSON_DEPTH} allowed`);
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(cell);
  } catch (error) {
    const detail =
      schema.quoteJsonErrors && error instanceof Error ? ` (${escapeControls(error.message)})` : '';
    problems.push(`${field} is not valid JSON${detail}`);
    return undefined;
  }
  const duplicate = duplicateJsonKey(cell);
  if (duplicate !== undefined) {
    problems.push(`${field} has the key ${formatJsonPath(duplicate)} more than once`);
    return undefined;
  }
  return value;
}

/** An id or a name: required or optional, a string, and `groupTextProblem`'s rules. */
export function groupText(
  fields: RowFields,
  field: string,
  required: boolean,
  problems: string[],
): string | undefined {
  const value = fields[field];
  if (value === undefined || value === null) {
    if (required) problems.push(`${field} is missing`);
    return undefined;
  }
  if (typeof value !== 'string') {
    problems.push(`${field} must be a string, got ${typeOf(value)}`);
    return undefined;
  }
  const problem = groupTextProblem(value, field === 'name' ? 'name' : 'id');
  if (problem !== undefined) {
    problems.push(
      value.trim() === '' ? `${field} ${problem}` : `${field} ${quoteVisible(value)} ${problem}`,
    );
    return undefined;
  }
  return value;
}
