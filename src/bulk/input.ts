/**
 * Reading a bulk input file (`--from`) into row candidates: one per data row, with its 1-based
 * row number and the line of the file where it starts. Nothing here judges the values (that is
 * validate.ts); this only splits the bytes into rows, streaming (byte sources: input-source.ts; text:
 * input-text.ts; rows: json-candidates.ts, csv-candidates.ts).
 */
import type { InputFormat } from '../input/bulk-options.js';
import { type CsvReading, csvCandidates } from './csv-candidates.js';
import type { ByteSource } from './input-source.js';
import { decodeText } from './input-text.js';
import { jsonArrayCandidates, ndjsonCandidates } from './json-candidates.js';
import type { InputItem } from './row-candidates.js';

export { type InputFormat, inputFormatFor } from '../input/bulk-options.js';

/**
 * Candidates in file order, in batches (the rows of one chunk read, roughly): a bulk run of
 * 100,000 rows pays per batch, not per row, for the steps between the file and the requests.
 * Errors in the file's structure (not its values) throw UsageError.
 */
export function readCandidates(
  source: ByteSource,
  format: InputFormat,
  csv: CsvReading = {},
): AsyncIterable<InputItem[]> {
  const text = decodeText(source());
  switch (format) {
    case 'ndjson':
      return ndjsonCandidates(text);
    case 'json':
      return jsonArrayCandidates(text);
    case 'csv':
      return csvCandidates(text, csv.delimiter);
  }
}
