/**
 * Every row of a bulk input is checked before any request is sent, by the rules of the
 * single-row flags, and all problems are reported at once (`row N (line L): ...`).
 *
 * One read of the input: `openBulkInput` validates every row and keeps the valid rows (as JSON
 * text, batch by batch), and `rows()` yields those rows. The rows sent are the rows checked, whatever happens to the
 * file after the read, and a run never stops half way because the file changed under it.
 */
import { UsageError } from '../errors.js';
import type { BulkRow, RowFields, RowSchema } from '../input/bulk-options.js';
import { displayWidth } from '../output/text.js';
import type { CsvReading } from './csv-candidates.js';
import { ErrorList } from './error-list.js';
import { type InputFormat, readCandidates } from './input.js';
import type { ByteSource } from './input-source.js';
import { csvValues } from './resume.js';
import {
  type CsvOptions,
  ignoredColumnFixes,
  ignoredColumnNames,
  type SeenColumns,
  validatedRows,
} from './row-check.js';

/** The widest id `widestId` measures. */
const MAX_ID_WIDTH = 32;
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
  /** How many columns are ignored (with a name, or without one but holding something). */
  ignoredColumnCount: number;
  /** For each ignored column with a name, what to do about it (ignoredColumnFixes). */
  ignoredColumnFixes: string[];
  /** The display width of the widest user_group_id, up to 32 (a terminal's row lines pad to it). */
  widestId: number;
  /** The validated rows, in file order, from memory (the input is not read again). */
  rows(): AsyncIterable<R>;
  /** The same, a batch at a time (a bulk run pays per batch, not per row, to move them). */
  batches(): AsyncIterable<R[]>;
}

/** Sees every valid row of the validation pass (`--resume` compares it with the results file). */
export type RowCheck = (row: { row: number; user_group_id?: string | undefined }) => void;

/** Validates the whole input by the rows' schema; throws one UsageError listing the problems. */
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
  // The valid rows, as the JSON text of each batch of them in UTF-8 bytes, outside the JavaScript
  // heap: V8 lets its heap grow to a multiple of what stays alive in it before collecting, so
  // 200,000 rows held as objects (or as strings) took a run of them from about 110 to 200 MiB.
  const kept: Buffer[] = [];
  let keeping: Row[] = [];
  let rowCount = 0;
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
        if (errors.empty) {
          keeping.push(row);
          rowCount++;
          if (keeping.length === BATCH_ROWS) {
            kept.push(Buffer.from(JSON.stringify(keeping)));
            keeping = [];
          }
        }
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
  if (keeping.length > 0) kept.push(Buffer.from(JSON.stringify(keeping)));
  if (rowCount === 0) {
    throw new UsageError('--from: the input has no rows', {
      hint:
        format === 'csv'
          ? 'a CSV input needs a header line and at least one row'
          : 'each row is a JSON object',
    });
  }
  const batches = async function* (): AsyncGenerator<Row[]> {
    // Rows are plain JSON data (strings, numbers, booleans, objects of them), so the text gives
    // them back as they were checked.
    for (const bytes of kept) yield JSON.parse(bytes.toString('utf8')) as Row[];
  };
  return {
    rowCount,
    blankRows: seenColumns.blankRows,
    ignoredColumns: ignoredColumnNames(seenColumns.ignored),
    ignoredColumnFixes: ignoredColumnFixes(seenColumns.ignored),
    ignoredColumnCount: seenColumns.ignored.filter((column) => column.name !== '' || column.used)
      .length,
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
