/**
 * Each row candidate checked on its own, by the rows' schema: its fields from JSON or CSV (the
 * header decides what each CSV column is), then the schema's rules. Duplicates are found by
 * validate.ts, which sees all the rows.
 */
import type { BulkRow, RowSchema } from '../input/bulk-options.js';
import { quoteVisible } from '../input/parse.js';
import {
  type CsvReading,
  delimiterFlag,
  delimiterName,
  otherDelimiterIn,
} from './csv-candidates.js';
import { type InputFormat, readCandidates } from './input.js';
import type { ByteSource } from './input-source.js';
import type { RowCandidate } from './row-candidates.js';
import {
  type ColumnTargets,
  type CsvColumns,
  csvColumns,
  csvFields,
  type Fields,
  jsonFields,
  MAX_NAMED_COLUMNS,
  unknownColumnFix,
} from './row-fields.js';

/**
 * How a CSV input is read: `--delimiter`, `--strict-columns` (unknown columns refused),
 * `--column` (columns read as other fields), and the command its fixes name.
 */
export interface CsvOptions extends CsvReading {
  strictColumns?: boolean | undefined;
  renames?: ColumnTargets | undefined;
  command?: string | undefined;
}

export type Checked<Row> =
  | { value: Row }
  | { row: number | undefined; line: number; problems: string[]; hint?: string };

/** What the validation saw besides rows: blank rows, and the columns it ignored. */
export interface SeenColumns {
  blankRows: number;
  /**
   * Ignored columns: their header text, whether a cell of theirs held something, and what to do
   * about one with a name (unknownColumnFix).
   */
  ignored: { name: string; used: boolean; fix?: string }[];
}

/** Each candidate checked on its own (no duplicate detection here). */
export async function* validatedRows<Row extends BulkRow>(
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
        const header = csvColumns(item.cells, schema, {
          strict: csv.strictColumns,
          renames: csv.renames,
          command: csv.command,
        });
        if (header.problems.length > 0) {
          const other = otherDelimiterIn(item.cells.join(item.delimiter), item.delimiter);
          const unknown = header.problems.some((problem) => problem.startsWith('unknown column'));
          yield [
            {
              row: undefined,
              line: 1,
              problems: header.problems,
              ...(other !== undefined
                ? {
                    hint: `the header looks separated by ${delimiterName(other)}, not ${delimiterName(item.delimiter)}: pass --delimiter ${delimiterFlag(other)}`,
                  }
                : unknown && {
                    hint: 'map each unknown column to a field with --column SRC=DEST, or remove it from the file (without --strict-columns it is left out, with a note)',
                  }),
            },
          ];
          return;
        }
        columns = header;
        seen.ignored = [...header.ignored].map((index) => {
          const name = (item.cells[index] ?? '').trim();
          return {
            name,
            used: false,
            ...(name !== '' && { fix: unknownColumnFix(name, schema, csv.command) }),
          };
        });
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

/** The ignored columns as a note names them; unnamed ones only when they held something. */
export function ignoredColumnNames(ignored: readonly { name: string; used: boolean }[]): string[] {
  const named = ignored
    .filter((column) => column.name !== '')
    .map((column) => quoteVisible(column.name));
  const unnamed = ignored.filter((column) => column.name === '' && column.used).length;
  const shown = named.slice(0, MAX_NAMED_COLUMNS);
  if (named.length > shown.length) shown.push(`${named.length - shown.length} more`);
  if (unnamed > 0) shown.push(`${unnamed} without a name`);
  return shown;
}

/**
 * One line per ignored column with a name, with its fix (`"Plan": did you mean properties.Plan or
 * mapping.Plan? --column Plan=properties.Plan maps it`), up to MAX_NAMED_COLUMNS.
 */
export function ignoredColumnFixes(
  ignored: readonly { name: string; fix?: string | undefined }[],
): string[] {
  const named = ignored.filter((column) => column.name !== '');
  const lines = named
    .slice(0, MAX_NAMED_COLUMNS)
    .map((column) => `${quoteVisible(column.name)}: ${column.fix ?? ''}`);
  if (named.length > lines.length) lines.push(`and ${named.length - lines.length} more`);
  return lines;
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
