/** What a reader of any input format yields: row candidates, a CSV header, blank CSV rows. */
import { UsageError } from '../errors.js';
import { formatBytes } from '../platform/io.js';

/**
 * One row's text or cells. A row bigger than this cannot be valid (two 1 MiB JSON values and
 * two ids fit well below it); stopping there keeps a file without line breaks from filling memory.
 */
export const MAX_ROW_CHARS = 4 * 1024 * 1024;

/** A data row as read: JSON text (ndjson, json) or the cells of a CSV record. */
export type RowCandidate =
  | { row: number; line: number; kind: 'json'; text: string }
  | { row: number; line: number; kind: 'csv'; cells: string[] };

/**
 * The CSV header (`kind: 'header'`, with the delimiter it was split by and its text) comes first,
 * then the rows. A CSV record whose cells are all empty (Excel's `,,,` rows, a blank line) is
 * `kind: 'blank'`: no row, but counted.
 */
export type InputItem =
  | RowCandidate
  | { kind: 'header'; cells: string[]; delimiter: string }
  | { kind: 'blank'; line: number };

export function rowTooLarge(line: number): UsageError {
  return new UsageError(
    `--from: the row at line ${line} is larger than ${formatBytes(MAX_ROW_CHARS)}`,
    { hint: 'is this the right file, in the right format?' },
  );
}
