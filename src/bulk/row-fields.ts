/**
 * A row's fields as read, before the schema's rules: a JSON row parsed (depth, duplicate keys,
 * unknown fields, size caps), or CSV cells mapped by the header's columns (`<field>.<key>`
 * columns merged into their object). Also the helpers the operations' row rules use.
 */
import { UsageError } from '../errors.js';
import type { BulkRow, ColumnRename, RowFields, RowSchema } from '../input/bulk-options.js';
import {
  formatJsonPath,
  groupTextProblem,
  type JsonObject,
  MAX_JSON_DEPTH,
  quoteVisible,
  type StringMap,
  setOwn,
  shellWord,
} from '../input/parse.js';
import { isPlainObject } from '../platform/guards.js';
import { formatBytes } from '../platform/io.js';
import { duplicateJsonKey, jsonNestingDepth, mayRepeatKeys } from '../text/json-lexer.js';
import { message } from '../text/message.js';
import { editDistance, orList } from '../text/suggest.js';

/** The cap of one JSON value (mapping, properties), the same as for `--properties @file`. */
const MAX_JSON_VALUE_BYTES = 1024 * 1024;
/** How many ignored columns a note names before "and N more". */
export const MAX_NAMED_COLUMNS = 10;

/**
 * A row's fields before their rules are applied. Object fields (get's `mapping`, `properties`)
 * are parsed objects (from NDJSON, or the JSON text of a CSV cell merged with its
 * `<field>.<key>` columns).
 */
export type Fields = RowFields;

/** A value's JSON type, as problems name it: `a string`, `an array`, `null`. */
export function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/**
 * A row's `current_token` (rotate, delete): a non-empty string, trimmed like `--current-token`
 * (a pasted token often brings a newline or a space along). Problems name its kind only: the
 * token itself is never shown. Undefined when it is missing or has a problem.
 */
export function currentTokenField(fields: RowFields, problems: string[]): string | undefined {
  const token = fields.current_token;
  if (token === undefined || token === null) {
    problems.push('current_token is missing');
    return undefined;
  }
  if (typeof token !== 'string') {
    problems.push(`current_token must be a string, got ${typeOf(token)}`);
    return undefined;
  }
  const current = token.trim();
  if (current === '') {
    problems.push('current_token is empty');
    return undefined;
  }
  const problem = groupTextProblem(current, 'id');
  if (problem?.includes('format character')) {
    problems.push('current_token contains an invisible format character');
    return undefined;
  }
  if (problem !== undefined) {
    problems.push('current_token contains a control character or U+FFFD');
    return undefined;
  }
  return current;
}

/** UTF-8 size of a string without encoding it, when its length alone decides. */
function exceedsBytes(text: string, max: number): boolean {
  if (text.length > max) return true;
  if (text.length * 3 <= max) return false;
  return Buffer.byteLength(text) > max;
}

export function jsonFields(
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
      schema.quoteJsonErrors && error instanceof Error ? message` (${error.message})` : '';
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
    if (!allowed.has(key)) problems.push(message`unknown field "${key}"`);
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

export interface CsvColumns {
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

/** How a CSV header is read: `--strict-columns`, `--column`, and the command (for fixes). */
export interface HeaderOptions {
  strict?: boolean | undefined;
  /** `--column` mappings, checked by `columnTargets`. */
  renames?: ColumnTargets | undefined;
  /** The command as typed (`get`), named in the fix of an unknown column. */
  command?: string | undefined;
}

/** `--column` mappings by their column (as `columnName` makes it): the field each is read as. */
export type ColumnTargets = ReadonlyMap<string, { flag: string; field: string }>;

/**
 * `--column SRC=DEST` checked against the rows' fields before the input is read: DEST must be a
 * field of the operation or `<object>.<key>` of one of its object fields (exit 2 listing them).
 */
export function columnTargets(
  renames: readonly ColumnRename[],
  schema: RowSchema<BulkRow>,
  command: string,
): ColumnTargets {
  const targets = new Map<string, { flag: string; field: string }>();
  for (const { source, target } of renames) {
    const flag = `--column ${shellWord(`${source}=${target}`)}`;
    const field = columnName(target);
    const dot = field.indexOf('.');
    const known =
      dot === -1
        ? schema.fields.has(field)
        : schema.objects.includes(field.slice(0, dot)) && dot < field.length - 1;
    if (!known) {
      throw new UsageError(message`${flag}: "${target}" is not a field of ${command} --from`, {
        hint: `the fields: ${fieldList(schema)}`,
      });
    }
    const column = columnName(source);
    if (targets.has(column)) {
      throw new UsageError(message`--column maps the column "${source}" twice`);
    }
    targets.set(column, { flag, field });
  }
  return targets;
}

/** The fields a row may have, as a hint lists them: `a, b, properties.<key>`. */
function fieldList(schema: RowSchema<BulkRow>): string {
  return [...schema.fields, ...schema.objects.map((field) => `${field}.<key>`)].join(', ');
}

/**
 * What to do about a column ugs does not know, for its note or its refusal: the field it may
 * have meant (a close spelling, else an object field's key) and the `--column` that maps it.
 */
export function unknownColumnFix(
  cell: string,
  schema: RowSchema<BulkRow>,
  command: string | undefined,
): string {
  const title = cell.trim();
  const close = closeFields(columnName(title), schema.fields);
  const meant = close.length > 0 ? close : schema.objects.map((field) => `${field}.${title}`);
  if (meant.length === 0) {
    return `${command === undefined ? 'a row' : `${command} --from`} reads only ${fieldList(schema)}`;
  }
  const first = meant[0] as string;
  return `did you mean ${orList(meant)}? --column ${shellWord(`${title}=${first}`)} maps it`;
}

/**
 * Fields spelt nearly as a column title: a typo (`nmae`), or a word left out (`user group` for
 * `user_group_id`). Closer than the "did you mean" of commands: a column offered as a field it
 * is not (`Note` as `name`) would overwrite that field's data when mapped.
 */
function closeFields(name: string, fields: ReadonlySet<string>): string[] {
  let best = Math.max(1, Math.floor(name.length / 4));
  let closest: string[] = [];
  for (const field of fields) {
    const distance = editDistance(name, field, best);
    if (distance < best) {
      best = distance;
      closest = [field];
    } else if (distance === best) closest.push(field);
  }
  return closest;
}

export function csvColumns(
  cells: string[],
  schema: RowSchema<BulkRow>,
  options: HeaderOptions = {},
): CsvColumns {
  const strict = options.strict === true;
  const renames = options.renames;
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
  const renamed = new Set<string>();
  cells.forEach((cell, index) => {
    const written = columnName(cell);
    const rename = renames?.get(written);
    if (rename !== undefined) renamed.add(written);
    const name = rename?.field ?? written;
    const dot = name.indexOf('.');
    const field = dot === -1 ? name : name.slice(0, dot);
    const known = dot === -1 ? allowed.has(name) : schema.objects.includes(field);
    if (!known) {
      // Spreadsheets carry columns of their own (an owner, a price, notes): the rows are still
      // the rows, and a note names each column left out with its fix (at a terminal the run
      // asks first). --strict-columns refuses them instead.
      if (strict) {
        columns.problems.push(
          message`unknown column "${cell}"` +
            (cell.trim() === '' ? '' : `: ${unknownColumnFix(cell, schema, options.command)}`),
        );
      } else columns.ignored.push(index);
      return;
    }
    if (seen.has(name)) {
      columns.problems.push(
        rename === undefined
          ? message`column "${cell.trim()}" appears twice`
          : message`column "${cell.trim()}" is read as ${name} (${rename.flag}), which another column is already`,
      );
      return;
    }
    seen.add(name);
    if (dot !== -1) {
      const key = name.slice(dot + 1);
      if (key === '') columns.problems.push(message`column "${cell}" has an empty key`);
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
    if (seen.has(field)) continue;
    // A column left out that is spelt nearly as the field (`nmae`) is the likely one.
    const meant = left.find((title) => closeFields(columnName(title), new Set([field])).length > 0);
    const fix = meant === undefined ? '' : `: --column ${shellWord(`${meant}=${field}`)} maps it`;
    columns.problems.push(message`no "${field}" column${leftOut}` + fix);
  }
  // A mapping of a column that is not there is a mistake in the command, not in the file.
  for (const [column, { flag }] of renames ?? []) {
    if (!renamed.has(column)) columns.problems.push(`${flag}: the header has no such column`);
  }
  return columns;
}

export function csvFields(
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
        message`${field} key "${key}" is set both by the ${field} column and the ${field}.${key} column`,
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
      schema.quoteJsonErrors && error instanceof Error ? message` (${error.message})` : '';
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
  kind: 'id' | 'name' = field === 'name' ? 'name' : 'id',
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
  const problem = groupTextProblem(value, kind);
  if (problem !== undefined) {
    problems.push(
      value.trim() === '' ? `${field} ${problem}` : `${field} ${quoteVisible(value)} ${problem}`,
    );
    return undefined;
  }
  return value;
}

/**
 * `true`/`false`: a JSON boolean, or a CSV cell's word for one, any case: `true`/`false` as
 * spreadsheets write them, and `yes`/`no`, `y`/`n`, `1`/`0` as people type them.
 */
const TRUE_WORDS = new Set(['true', 'yes', 'y', '1']);
const FALSE_WORDS = new Set(['false', 'no', 'n', '0']);

export function booleanField(
  fields: RowFields,
  field: string,
  problems: string[],
): boolean | undefined {
  const value = fields[field];
  if (value === undefined || value === null || typeof value === 'boolean') {
    return value ?? undefined;
  }
  if (typeof value === 'string') {
    const word = value.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
    problems.push(message`${field} must be true or false (or yes/no, 1/0), got "${value}"`);
    return undefined;
  }
  problems.push(`${field} must be true or false, got ${typeOf(value)}`);
  return undefined;
}

/** A JSON object field (`properties`): absent, or an object. */
export function objectField(
  fields: RowFields,
  field: string,
  problems: string[],
): JsonObject | undefined {
  const value = fields[field];
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) {
    problems.push(`${field} must be a JSON object, got ${typeOf(value)}`);
    return undefined;
  }
  return value as JsonObject;
}

/** `mapping`: absent, or an object of strings with no empty key. */
export function mappingField(fields: RowFields, problems: string[]): StringMap | undefined {
  const mapping = fields.mapping;
  if (mapping === undefined || mapping === null) return undefined;
  if (!isPlainObject(mapping)) {
    problems.push(`mapping must be a JSON object, got ${typeOf(mapping)}`);
    return undefined;
  }
  for (const [key, entry] of Object.entries(mapping)) {
    if (key === '') problems.push('mapping has an empty key');
    else if (typeof entry !== 'string') {
      problems.push(message`mapping: the value of "${key}" must be a string, got ${typeOf(entry)}`);
    }
  }
  return mapping as StringMap;
}
