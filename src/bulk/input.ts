/**
 * Reading a bulk input file (`--from`) into row candidates: one per data row, with its 1-based
 * row number and the line of the file where it starts. Nothing here judges the values (that is
 * validate.ts); this only splits the bytes into rows, streaming, so a file of any length is never
 * held whole in memory.
 */
import { close, constants, createReadStream, fstat, open, type Stats } from 'node:fs';
import { promisify, TextDecoder } from 'node:util';
import { UsageError } from '../errors.js';
import type { InputFormat } from '../input/bulk-options.js';
import { quote } from '../input/parse.js';
import { errorCode } from '../platform/guards.js';
import { escapeControls, formatBytes, readChunksCapped, stripBom } from '../platform/io.js';
import { JsonLexer } from '../text/json-lexer.js';

const openAsync = promisify(open) as (path: string, flags: number) => Promise<number>;
const fstatAsync = promisify(fstat) as (fd: number) => Promise<Stats>;
const closeAsync = promisify(close);

export { type InputFormat, inputFormatFor } from '../input/bulk-options.js';

/**
 * One row's text or cells. A row bigger than this cannot be valid (two 1 MiB JSON values and
 * two ids fit well below it); stopping there keeps a file without line breaks from filling memory.
 */
const MAX_ROW_CHARS = 4 * 1024 * 1024;

/**
 * Where the bytes come from; called once per read, so it must be able to start over (a rotate
 * input is read once to tell a results file of ugs from rows, then once to validate it).
 */
export type ByteSource = () => AsyncIterable<Uint8Array | string>;

/**
 * Every open of a `--from` path: O_NONBLOCK, so that a FIFO without a writer (or a path swapped
 * for one after ugs looked at it) cannot block the open. A blocked open or read sits in libuv's
 * thread pool, and a process with such a thread never exits, not even on a second Ctrl+C.
 */
const OPEN_INPUT = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * A rotate input (see `inputSource`) may be this large: at about 100 bytes a row, some 2.5
 * million rows, all held in memory once validated. Larger inputs are split, each part with its
 * own `--output`.
 */
const MAX_KEPT_BYTES = 256 * 1024 * 1024;

/**
 * Names of this process's stdin. They are read as `--from -`: through the stdin stream, which
 * works whatever stdin is (a pipe, a file, or a socket, which Linux cannot open by its path).
 */
export function isStdinPath(path: string): boolean {
  return path === '/dev/stdin' || path === '/dev/fd/0' || path === '/proc/self/fd/0';
}

/**
 * The source of `--from <path>` (not `-`):
 * - a regular file is streamed; with `keep` (rotate) up to the most a rotate run holds in
 *   memory (the validated rows are held, not the file's bytes: see validate.ts);
 * - a FIFO or a pipe (`<(cat rows.csv)`, `/dev/stdin`) can be read only once: it is read as stdin
 *   is, through the event loop (never a blocking read), and kept in memory up to the same cap;
 * - anything else (a terminal, a device, a directory) is refused, naming `--from -`.
 */
export async function inputSource(path: string, options: { keep: boolean }): Promise<ByteSource> {
  const fd = await openInput(path);
  let stats: Stats;
  try {
    stats = await fstatAsync(fd);
  } catch (error) {
    await closeAsync(fd).catch(() => undefined);
    throw unreadable(path, error);
  }
  if (stats.isFile()) {
    await closeAsync(fd);
    if (!options.keep) return fileSource(path);
    if (stats.size > MAX_KEPT_BYTES) throw tooLargeToKeep(path);
    return cappedSource(fileSource(path), MAX_KEPT_BYTES, () => tooLargeToKeep(path));
  }
  if (stats.isFIFO() || stats.isSocket()) {
    const { Socket } = await import('node:net');
    const pipe = new Socket({ fd, readable: true, writable: false });
    try {
      const chunks = await readChunksCapped(
        pipe as AsyncIterable<Buffer>,
        MAX_STDIN_BYTES,
        () =>
          new UsageError(
            `--from ${quote(path)}: the pipe gives more than ${formatBytes(MAX_STDIN_BYTES)}`,
            {
              hint: 'save the rows to a file and pass its path: --from rows.csv',
            },
          ),
      );
      return async function* () {
        yield* chunks;
      };
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw unreadable(path, error);
    } finally {
      pipe.destroy();
    }
  }
  await closeAsync(fd).catch(() => undefined);
  const what = stats.isDirectory()
    ? 'is a directory'
    : stats.isCharacterDevice()
      ? 'is a terminal or a device'
      : 'is not a regular file';
  throw new UsageError(`--from ${quote(path)} ${what}`, {
    hint: 'pass a file of rows, or pipe them in with --from - (ugs ... --from - --format csv < rows.csv)',
  });
}

function tooLargeToKeep(path: string): UsageError {
  return new UsageError(
    `--from ${quote(path)} is larger than ${formatBytes(MAX_KEPT_BYTES)}, the most a rotate run holds in memory`,
    { hint: 'split the rows into smaller files and rotate each with its own --output' },
  );
}

/** The chunks of `source`, refused with `tooLarge()` once they pass `maxBytes` (a growing file). */
function cappedSource(source: ByteSource, maxBytes: number, tooLarge: () => Error): ByteSource {
  return async function* () {
    let size = 0;
    for await (const chunk of source()) {
      size += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
      if (size > maxBytes) throw tooLarge();
      yield chunk;
    }
  };
}

/** A file, streamed anew on each read; a read error becomes a UsageError that names the file. */
export function fileSource(path: string): ByteSource {
  return () => readFileChunks(path);
}

async function* readFileChunks(path: string): AsyncGenerator<Uint8Array> {
  const fd = await openInput(path);
  let regular = false;
  try {
    regular = (await fstatAsync(fd)).isFile();
  } catch (error) {
    await closeAsync(fd).catch(() => undefined);
    throw unreadable(path, error);
  }
  if (!regular) {
    // It was a regular file when ugs looked: something replaced it since.
    await closeAsync(fd).catch(() => undefined);
    throw new UsageError(`--from ${quote(path)} is no longer a regular file`, {
      hint: 'run again on a file that nothing else writes, or pipe the rows in with --from -',
    });
  }
  yield* readFd(path, fd);
}

async function openInput(path: string): Promise<number> {
  try {
    return await openAsync(path, OPEN_INPUT);
  } catch (error) {
    throw unreadable(path, error);
  }
}

/** The bytes of an open regular file (closed at the end, or when the reader stops early). */
async function* readFd(path: string, fd: number): AsyncGenerator<Uint8Array> {
  // Small chunks: a chunk's rows (a batch) stay alive until each is checked or sent. Measured
  // against 256 KiB chunks: a 200,000-row run peaked 30 MiB lower with 64 KiB, and a
  // 50,000-row run took a further 5% less CPU with 16 KiB.
  const stream = createReadStream('', { fd, highWaterMark: 16 * 1024 });
  try {
    for await (const chunk of stream) yield chunk as Buffer;
  } catch (error) {
    throw unreadable(path, error);
  } finally {
    stream.destroy();
  }
}

function unreadable(path: string, error: unknown): UsageError {
  if (error instanceof UsageError) return error;
  return new UsageError(`--from ${quote(path)}: cannot read the file (${reasonOf(error)})`, {
    ...(errorCode(error) === 'ENXIO' && {
      hint: 'to read the rows from stdin, pass --from - (with --format)',
    }),
  });
}

function reasonOf(error: unknown): string {
  const code = errorCode(error);
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  // /dev/stdin when stdin is a socket: Linux cannot open a socket by its path.
  if (code === 'ENXIO') return 'a socket cannot be opened by its path';
  return escapeControls(error instanceof Error ? error.message : String(error));
}

/** The default cap on a bulk input read from stdin (see `stdinSource`). */
const MAX_STDIN_BYTES = 64 * 1024 * 1024;

/**
 * stdin can be read only once, and a source must be able to start over (see ByteSource). It is
 * kept in memory (as the chunks read) up to a cap, rather than spooled to a temp file: a rotate
 * input holds current tokens, and a spool file left behind by kill -9 would keep those secrets on disk.
 * Past the cap the user is told to pass a file path instead.
 */
export async function stdinSource(
  stdin: AsyncIterable<Uint8Array | string>,
  stdinIsTTY: boolean,
  maxBytes = MAX_STDIN_BYTES,
): Promise<ByteSource> {
  if (stdinIsTTY) {
    throw new UsageError('--from - reads the rows from stdin, but stdin is a terminal', {
      hint: 'pipe the file in (ugs ... --from - < rows.csv), or pass its path: --from rows.csv',
    });
  }
  const chunks = await readChunksCapped(
    stdin,
    maxBytes,
    () =>
      new UsageError(`--from -: stdin is larger than ${formatBytes(maxBytes)}`, {
        hint: 'save the rows to a file and pass its path: --from rows.csv',
      }),
  );
  return async function* () {
    yield* chunks;
  };
}

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
 * Text, chunk by chunk, in the encoding the file's byte-order mark names: UTF-8 (with or without
 * its BOM), or UTF-16 LE or BE with one (Excel's "Unicode Text", LibreOffice's "Unicode"). Invalid
 * bytes stop the read: decoded as U+FFFD they would turn two different ids into one; the message
 * then says what the file looks like instead (UTF-16 without a BOM, a legacy 8-bit code page).
 */
async function* decodeText(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  let decoder: TextDecoder | undefined;
  let encoding = 'UTF-8';
  // The first bytes are held until there are enough to tell the encoding by.
  let head: Uint8Array | undefined;
  let first = true;
  const decode = function* (bytes: Uint8Array, stream: boolean): Generator<string> {
    if (decoder === undefined) {
      const start = startOf(bytes);
      encoding = start.encoding;
      decoder = new TextDecoder(start.label, { fatal: true, ignoreBOM: true });
      bytes = bytes.subarray(start.bomLength);
    }
    let text: string;
    try {
      text = decoder.decode(bytes, { stream });
    } catch {
      throw notText(encoding, bytes);
    }
    if (first && text.length > 0) {
      first = false;
      text = stripBom(text);
    }
    if (text.length > 0) yield text;
  };
  for await (const chunk of source) {
    if (typeof chunk === 'string') {
      let text = chunk;
      if (first && text.length > 0) {
        first = false;
        text = stripBom(text);
      }
      if (text.length > 0) yield text;
      continue;
    }
    if (decoder === undefined) {
      head = head === undefined ? chunk : Buffer.concat([head, chunk]);
      if (head.length < 4) continue;
      const bytes = head;
      head = undefined;
      yield* decode(bytes, true);
      continue;
    }
    yield* decode(chunk, true);
  }
  if (head !== undefined) yield* decode(head, true);
  if (decoder === undefined) return;
  let rest: string;
  try {
    rest = decoder.decode();
  } catch {
    throw new UsageError(`--from: the input ends inside a ${encoding} character`);
  }
  if (rest.length > 0) yield rest;
}

/** The encoding the first bytes name (a BOM), or UTF-8; UTF-16 without a BOM is refused. */
function startOf(bytes: Uint8Array): { label: string; encoding: string; bomLength: number } {
  const [b0, b1, b2, b3] = bytes;
  if (b0 === 0xff && b1 === 0xfe) return { label: 'utf-16le', encoding: 'UTF-16', bomLength: 2 };
  if (b0 === 0xfe && b1 === 0xff) return { label: 'utf-16be', encoding: 'UTF-16', bomLength: 2 };
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) {
    return { label: 'utf-8', encoding: 'UTF-8', bomLength: 3 };
  }
  // A workbook saved as is, or renamed to .csv: a ZIP (.xlsx, .ods) or an OLE file (.xls).
  const zip = b0 === 0x50 && b1 === 0x4b && b2 === 0x03 && b3 === 0x04;
  const ole = b0 === 0xd0 && b1 === 0xcf && b2 === 0x11 && b3 === 0xe0;
  if (zip || ole) {
    throw new UsageError(
      `--from: the input is a spreadsheet workbook (${zip ? '.xlsx or .ods' : '.xls'}), not text`,
      {
        hint: 'save the sheet as CSV first (Excel: "CSV UTF-8"; LibreOffice: "Text CSV"), then pass that file',
      },
    );
  }
  // "u\0s\0" or "\0u\0s": valid UTF-8 bytes, but a NUL is never in a CSV, JSON or NDJSON input;
  // read as UTF-8 it would give a header of "u\u0000s\u0000..." and nothing useful.
  if ((b1 === 0 && b3 === 0 && b0 !== 0) || (b0 === 0 && b2 === 0 && b1 !== 0)) {
    throw new UsageError('--from: the input looks like UTF-16 text without a byte-order mark', {
      hint: 'save it as UTF-8 (in Excel: "CSV UTF-8"; in LibreOffice: character set "Unicode (UTF-8)"), or as UTF-16 with a BOM',
    });
  }
  return { label: 'utf-8', encoding: 'UTF-8', bomLength: 0 };
}

/** The text is not valid in its encoding; for UTF-8, a guess at what it is instead. */
function notText(encoding: string, bytes: Uint8Array): UsageError {
  const saveAs =
    'save it as UTF-8 (in Excel: "CSV UTF-8"; in LibreOffice: character set "Unicode (UTF-8)")';
  if (encoding !== 'UTF-8') {
    return new UsageError(`--from: the input is not valid ${encoding} text`, { hint: saveAs });
  }
  // Bytes 0x80-0xFF that are not UTF-8 sequences: a one-byte code page (Excel's plain "CSV"
  // saves Windows-1252 in western locales), where "ü" is the single byte 0xFC.
  const legacy = bytes.some((byte) => byte >= 0x80);
  return new UsageError('--from: the input is not valid UTF-8 text', {
    hint: legacy
      ? `it looks like a one-byte encoding such as Windows-1252 or Latin-1 (Excel's plain "CSV"): ${saveAs}`
      : saveAs,
  });
}

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

function rowTooLarge(line: number): UsageError {
  return new UsageError(
    `--from: the row at line ${line} is larger than ${formatBytes(MAX_ROW_CHARS)}`,
    { hint: 'is this the right file, in the right format?' },
  );
}

/** One JSON text per line; blank lines are not rows. */
async function* ndjsonCandidates(chunks: AsyncIterable<string>): AsyncGenerator<RowCandidate[]> {
  let pending = '';
  let line = 0;
  let row = 0;
  const take = (text: string): RowCandidate | undefined => {
    line++;
    const body = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (body.trim() === '') return undefined;
    row++;
    return { row, line, kind: 'json', text: body };
  };
  for await (const chunk of chunks) {
    const batch: RowCandidate[] = [];
    let start = 0;
    let at = chunk.indexOf('\n');
    while (at !== -1) {
      const candidate = take(pending + chunk.slice(start, at));
      pending = '';
      if (candidate) batch.push(candidate);
      start = at + 1;
      at = chunk.indexOf('\n', start);
    }
    pending += chunk.slice(start);
    if (batch.length > 0) yield batch;
    if (pending.length > MAX_ROW_CHARS) throw rowTooLarge(line + 1);
  }
  const last = pending === '' ? undefined : take(pending);
  if (last) yield [last];
}

/**
 * The elements of one top-level JSON array, each as its own text, without parsing the whole
 * array (which would hold it all in memory). The lexer reads only the structure, chunk by chunk:
 * a row is checked when it is parsed on its own, so a broken row is that row's problem, reported
 * with the others, not the file's. An element that is not an object ends the read, as the file
 * is then not a list of rows at all.
 */
async function* jsonArrayCandidates(chunks: AsyncIterable<string>): AsyncGenerator<RowCandidate[]> {
  const lexer = new JsonLexer('', { checked: false });
  let state: 'before' | 'inside' | 'after' = 'before';
  let expectElement = true;
  let line = 1;
  let row = 0;
  let element = '';
  let elementLine = 0;
  const unexpected = (what: string) =>
    new UsageError(`--from: not a JSON array of objects: ${what} at line ${line}`, {
      hint: 'a .json input is one array: [{"user_group_id": "...", ...}, ...]',
    });
  for await (const chunk of chunks) {
    lexer.continueWith(chunk);
    const batch: RowCandidate[] = [];
    // Inside an element (the array is depth 1): where its text starts in this chunk.
    let pieceStart = lexer.depth > 1 ? 0 : -1;
    // Lines are counted up to a token only when one needs its line: most tokens are in rows.
    let counted = 0;
    const countLines = (to: number) => {
      for (let at = chunk.indexOf('\n', counted); at !== -1 && at < to; ) {
        line++;
        at = chunk.indexOf('\n', at + 1);
      }
      counted = to;
    };
    for (;;) {
      if (pieceStart !== -1) {
        // A row's text, to its closing bracket (of either kind) back at the array's level.
        if (lexer.skipTo(1) === 'end') break;
        element += chunk.slice(pieceStart, lexer.end);
        row++;
        batch.push({ row, line: elementLine, kind: 'json', text: element });
        element = '';
        pieceStart = -1;
      }
      const kind = lexer.next();
      if (kind === 'end') break;
      countLines(lexer.start);
      if (state === 'before' && kind === '[') {
        state = 'inside';
      } else if (state !== 'inside') {
        throw unexpected(state === 'before' ? 'it does not start with "["' : 'text after "]"');
      } else if (kind === ']') {
        if (expectElement && row > 0) throw unexpected('"," before "]"');
        state = 'after';
      } else if (kind === ',') {
        if (expectElement) throw unexpected('"," without a row before it');
        expectElement = true;
      } else if (kind === '{') {
        if (!expectElement) throw unexpected('a missing ","');
        pieceStart = lexer.start;
        elementLine = line;
        expectElement = false;
      } else {
        throw unexpected(`row ${row + 1} is not a JSON object`);
      }
    }
    countLines(chunk.length);
    if (batch.length > 0) yield batch;
    if (pieceStart !== -1) {
      element += chunk.slice(pieceStart);
      if (element.length > MAX_ROW_CHARS) throw rowTooLarge(elementLine);
    }
  }
  if (state === 'before') throw unexpected('no "["');
  if (state === 'inside') throw unexpected('the input ends before "]"');
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
async function* csvCandidates(
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
            : `the CSV cannot be read (${escapeControls(code || String(error))})`;
  return new UsageError(`--from: ${what}${where}`, {
    hint:
      other !== undefined
        ? `the header line looks separated by ${delimiterName(other)}: pass --delimiter ${delimiterFlag(other)}`
        : 'quote cells that hold commas, quotes or line breaks, and double the quotes inside them',
  });
}
