/**
 * CSV inputs as row candidates: the delimiter (`--delimiter`, or the one the header line shows),
 * RFC 4180 records through csv-parse with the line each starts on, and CSV errors that never
 * quote a cell.
 */
import { UsageError } from '../errors.js';
import { errorCode } from '../platform/guards.js';
import { formatBytes } from '../platform/io.js';
import { message, quote } from '../text/message.js';
import { type InputItem, MAX_ROW_CHARS } from './row-candidates.js';

/**
 * How a CSV input is split: `--delimiter`, or undefined to detect it from the header line.
 * (NDJSON and JSON ignore it.)
 */
export interface CsvReading {
  delimiter?: string | undefined;
}

/** The delimiters told apart by looking at the header line, in the order that wins a tie. */
const DETECTED_DELIMITERS = [',', ';', '\t'] as const;
/** Also recognised in a header that cannot be read, to suggest `--delimiter`. */
const HINTED_DELIMITERS = [',', ';', '\t', '|'] as const;

/** A delimiter as a person reads it in a message: `";"`, `tab`. */
export function delimiterName(delimiter: string): string {
  return delimiter === '\t' ? 'tab' : quote(delimiter);
}

/** `--delimiter` as typed in a shell: `tab` or `\t` for a tab, otherwise the character itself. */
export function delimiterFlag(delimiter: string): string {
  return delimiter === '\t' ? 'tab' : `'${delimiter}'`;
}

/**
 * The delimiter of a CSV input, from its header line: of comma, semicolon and tab, the one found
 * most often outside quotes (a tie goes to the earlier; none at all is a one-column comma file).
 * Spreadsheets in locales with a decimal comma write semicolons, and "Unicode Text" writes tabs;
 * the header is where a delimiter is surest, since names hold no decimal commas.
 */
export function detectDelimiter(headerLine: string): string {
  const counts = delimiterCounts(headerLine, DETECTED_DELIMITERS);
  let best: string = ',';
  let most = 0;
  for (const delimiter of DETECTED_DELIMITERS) {
    const count = counts.get(delimiter) ?? 0;
    if (count > most) {
      best = delimiter;
      most = count;
    }
  }
  return best;
}

/** How often each of `delimiters` occurs in `line` outside double quotes. */
function delimiterCounts(line: string, delimiters: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && delimiters.includes(c)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  return counts;
}

/**
 * Another delimiter that the header line seems to be split by, when the one used left it
 * unreadable: the one found most often there outside quotes (pipes included, which are never
 * detected), or undefined.
 */
export function otherDelimiterIn(headerLine: string, used: string): string | undefined {
  const counts = delimiterCounts(headerLine, HINTED_DELIMITERS);
  let best: string | undefined;
  let most = counts.get(used) ?? 0;
  for (const delimiter of HINTED_DELIMITERS) {
    const count = counts.get(delimiter) ?? 0;
    if (delimiter !== used && count > most) {
      best = delimiter;
      most = count;
    }
  }
  return best;
}

/** The first line that is not blank, once the text read so far holds all of it. */
function firstLineOf(text: string, complete: boolean): string | undefined {
  let start = 0;
  for (;;) {
    const end = text.indexOf('\n', start);
    if (end === -1) {
      const line = text.slice(start);
      return complete || line.length > MAX_ROW_CHARS ? line : undefined;
    }
    const line = text.slice(start, end);
    if (line.trim() !== '') return line;
    start = end + 1;
  }
}

/**
 * The chunks again, after the first non-blank line was read ahead: the delimiter must be known
 * before csv-parse sees a byte.
 */
async function peekFirstLine(
  chunks: AsyncIterable<string>,
): Promise<{ line: string; chunks: AsyncIterable<string> }> {
  const iterator = chunks[Symbol.asyncIterator]();
  let head = '';
  let ended = false;
  let line = firstLineOf(head, false);
  while (line === undefined) {
    const next = await iterator.next();
    if (next.done === true) ended = true;
    else head += next.value;
    line = firstLineOf(head, ended);
  }
  return {
    line,
    chunks: (async function* () {
      if (head !== '') yield head;
      if (ended) return;
      for (;;) {
        const next = await iterator.next();
        if (next.done === true) return;
        yield next.value;
      }
    })(),
  };
}

/**
 * RFC 4180 records through csv-parse, split by `delimiter` or by the one the header line shows.
 * A record starts after the line breaks read before it: each record's `raw` text holds every CR
 * and LF csv-parse read for it (its own record delimiter included, of which a CRLF gives only
 * the CR). A CRLF inside a quoted cell is two of those but one line break, so each such CRLF seen
 * so far is subtracted. (csv-parse's `info.lines` gives the same count, but `info` copies a dozen
 * fields into a new object per record: 36 MiB more at the peak of a 200,000-row CSV.)
 */
export async function* csvCandidates(
  text: AsyncIterable<string>,
  delimiterFlag: string | undefined,
): AsyncGenerator<InputItem[]> {
  const { line: headerLine, chunks } = await peekFirstLine(text);
  const delimiter = delimiterFlag ?? detectDelimiter(headerLine);
  const { parse } = await import('../vendor/csv.js');
  const parser = parse({
    raw: true,
    delimiter,
    relax_column_count: true,
    skip_empty_lines: false,
    record_delimiter: ['\r\n', '\n'],
    max_record_size: MAX_ROW_CHARS,
  });
  const feeding = (async () => {
    try {
      for await (const chunk of chunks) {
        if (parser.destroyed) return;
        if (!parser.write(chunk)) {
          // 'close' too: a reader that stops early destroys the parser, which then never drains.
          // Whichever comes first removes both listeners: a wait that left its 'close' listener
          // behind added one per wait (MaxListenersExceededWarning on stderr, even with -q).
          await new Promise<void>((resolve) => {
            const done = () => {
              parser.off('drain', done);
              parser.off('close', done);
              resolve();
            };
            parser.on('drain', done);
            parser.on('close', done);
          });
        }
      }
      parser.end();
    } catch (error) {
      parser.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  })();
  let lineBreaks = 0;
  let crlfInCells = 0;
  let header = true;
  let row = 0;
  try {
    for await (const item of parser as AsyncIterable<{
      record: string[];
      raw: string;
    }>) {
      const cells = item.record;
      const start = lineBreaks - crlfInCells + 1;
      for (const cell of cells) {
        if (cell.indexOf('\r') !== -1) crlfInCells += cell.split('\r\n').length - 1;
      }
      lineBreaks += lineBreaksIn(item.raw);
      // Spreadsheets write the empty rows inside their used range as `,,,`: no row, but counted
      // (a blank line too; above the header, neither). Cells of spaces only carry nothing either.
      if (cells.every((cell) => cell.trim() === '')) {
        if (!header) yield [{ kind: 'blank', line: start }];
        continue;
      }
      if (header) {
        header = false;
        yield [{ kind: 'header', cells, delimiter }];
        continue;
      }
      row++;
      yield [{ row, line: start, kind: 'csv', cells }];
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw csvError(error, otherDelimiterIn(headerLine, delimiter));
  } finally {
    parser.destroy();
    await feeding;
  }
}

/** How many CR and LF characters `text` holds. */
function lineBreaksIn(text: string): number {
  let count = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 10 || code === 13) count++;
  }
  return count;
}

/**
 * csv-parse's own messages quote cell contents (maybe a token); only its code and line are kept.
 * `other`: a delimiter the header line seems split by instead, suggested in the hint.
 */
function csvError(error: unknown, other: string | undefined): UsageError {
  const code = errorCode(error) ?? '';
  const lines =
    typeof error === 'object' && error !== null && 'lines' in error ? Number(error.lines) : NaN;
  const where = Number.isFinite(lines) ? ` near line ${lines}` : '';
  const what =
    code === 'CSV_QUOTE_NOT_CLOSED'
      ? 'a quoted cell is never closed'
      : code === 'CSV_INVALID_CLOSING_QUOTE'
        ? 'a quote inside a quoted cell is not doubled ("")'
        : code === 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE'
          ? 'text follows a closing quote'
          : code === 'CSV_MAX_RECORD_SIZE'
            ? `a row is larger than ${formatBytes(MAX_ROW_CHARS)}`
            : message`the CSV cannot be read (${code || String(error)})`;
  return new UsageError(`--from: ${what}${where}`, {
    hint:
      other !== undefined
        ? `the header line looks separated by ${delimiterName(other)}: pass --delimiter ${delimiterFlag(other)}`
        : 'quote cells that hold commas, quotes or line breaks, and double the quotes inside them',
  });
}
