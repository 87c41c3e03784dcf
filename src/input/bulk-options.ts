/**
 * What an operation's bulk run (`<command> --from`) is, declared in the operation's folder
 * (`bulk.ts`), and the limits of the bulk flags. The bulk engine (`src/bulk/`) runs any spec the
 * same way and never asks which operation it runs; a command parses its bulk flags with what is
 * here without loading any of the engine (a single-row run loads nothing of `src/bulk/`).
 */
import { UsageError } from '../errors.js';
import { message } from '../text/message.js';

export type InputFormat = 'csv' | 'ndjson' | 'json';
const INPUT_FORMATS: readonly InputFormat[] = ['csv', 'ndjson', 'json'];

/**
 * The format of `--from`: `--format` when given, else the file's extension. stdin (`-`) has no
 * extension, so it needs `--format`.
 */
export function inputFormatFor(path: string, formatFlag: string | undefined): InputFormat {
  if (formatFlag !== undefined) {
    const format = formatFlag.trim().toLowerCase();
    if ((INPUT_FORMATS as readonly string[]).includes(format)) return format as InputFormat;
    throw new UsageError(
      message`--format must be one of ${INPUT_FORMATS.join(', ')}, got "${formatFlag}"`,
    );
  }
  if (path === '-') {
    throw new UsageError('--from - (stdin) needs --format csv, ndjson or json', {
      hint: 'for example: cat groups.csv | ugs get --from - --format csv',
    });
  }
  const format = formatOfExtension(path);
  if (format === undefined) {
    throw new UsageError(message`cannot tell the format of --from "${path}" from its extension`, {
      hint: 'name the file .csv, .ndjson, .jsonl or .json, or pass --format csv|ndjson|json',
    });
  }
  return format;
}

function formatOfExtension(path: string): InputFormat | undefined {
  const lower = path.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.ndjson') || lower.endsWith('.jsonl')) return 'ndjson';
  if (lower.endsWith('.json')) return 'json';
  return undefined;
}

export const DEFAULT_CONCURRENCY = 8;
export const MAX_CONCURRENCY = 64;
/** `--give-up-after`'s default: ten minutes without one request succeeding ends a run. */
export const DEFAULT_GIVE_UP_AFTER_MS = 10 * 60_000;
/** `--concurrency`: a whole number from 1 to 64. */
export function parseConcurrency(text: string): number {
  const trimmed = text.trim();
  const value = /^\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!(value >= 1 && value <= MAX_CONCURRENCY)) {
    throw new UsageError(
      message`--concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, got "${text}"`,
      { hint: `the default is ${DEFAULT_CONCURRENCY} requests in flight` },
    );
  }
  return value;
}

/**
 * `--column SRC=DEST`: the CSV column SRC (matched as header cells are: case, spaces around it,
 * and spaces or hyphens between words do not matter) read as the field DEST (a field of the
 * operation, or `properties.<key>` / `mapping.<key>`). DEST is checked against the operation's
 * fields when its rows are known (bulk/row-fields.ts).
 */
export interface ColumnRename {
  source: string;
  target: string;
}

/** `--column SRC=DEST`, split at the first `=` (a column title rarely has one; a key may). */
export function parseColumnFlag(text: string): ColumnRename {
  const at = text.indexOf('=');
  const source = at === -1 ? '' : text.slice(0, at).trim();
  const target = at === -1 ? '' : text.slice(at + 1).trim();
  if (source === '' || target === '') {
    throw new UsageError(message`--column must be SRC=DEST, got "${text}"`, {
      hint: 'for example --column Plan=properties.plan reads the column Plan as the property plan',
    });
  }
  return { source, target };
}

/** What a command's bulk flags need to know, without loading its bulk spec. */
export interface BulkFlagSpec {
  /** The command, as typed: `get`. */
  command: string;
  /** `--from`'s help: what one row is. */
  fromHelp: string;
  /**
   * For an operation at risk (its `risk`): why `--output` is required (every row is journaled
   * before it is sent, and settled from the journal). Absent: `--output` is optional.
   */
  outputRequired?: string;
}

/** A validated row of a bulk input: where it is, and the fields every row may name a group by. */
export interface BulkRow {
  row: number;
  line: number;
  user_group_id?: string | undefined;
  name?: string | undefined;
}

/** A row's fields before its spec's rules are applied. */
export type RowFields = Record<string, unknown>;

/** The rows of a bulk input: which fields they have, and how they are checked. */
export interface RowSchema<Row extends BulkRow> {
  /** Fields a row may have (NDJSON keys, CSV columns). */
  fields: ReadonlySet<string>;
  /** CSV columns that must be there. */
  required: readonly string[];
  /** Object fields that CSV may also spell as `<field>.<key>` columns; JSON values capped. */
  objects: readonly string[];
  /**
   * Fields only the `explo` dialect has (the vendor's `is_demo_group`): with `interface`, a row
   * that sets one is refused before anything is sent.
   */
  exploOnly?: readonly string[];
  /**
   * Fields only the Customer API has (`--dialect customer`): in any other dialect, a row that
   * sets one is refused before anything is sent (an empty cell sets nothing).
   */
  customerOnly?: readonly string[];
  /** Whether a JSON error may quote the row's text (not when a row holds a secret). */
  quoteJsonErrors: boolean;
  /** The row, or undefined with `problems` said. */
  check(row: number, line: number, fields: RowFields, problems: string[]): Row | undefined;
  /**
   * Reads ugs's own results files (NDJSON or CSV records with `row` and `status`) as input: the
   * last record of each row gives the row's fields, or a string saying why it cannot be sent.
   */
  fromResults?: (record: RowFields) => RowFields | string;
  /** Rows that must be unique by one field: its value (normalised when `normalize`). */
  unique: {
    key(row: Row): string;
    /** Also compare NFC-normalised (ids typed by different keyboards), and say so. */
    normalize: boolean;
    problem(row: Row, firstRow: number, exact: boolean): string;
  };
}

/**
 * A record's `settled_by`: the command whose read settled a request whose answer was lost (the
 * operation's bulk spec says which; the engine only counts them).
 */
export type SettledBy = string;
