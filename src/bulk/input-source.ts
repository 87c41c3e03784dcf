/**
 * Where the bytes of a bulk input (`--from`) come from: a file, streamed; a FIFO or a pipe, read
 * once and kept; stdin, kept up to a cap. Errors name the path and what it is.
 */
import { close, constants, createReadStream, fstat, open, type Stats } from 'node:fs';
import { promisify } from 'node:util';
import { UsageError } from '../errors.js';
import { errorCode } from '../platform/guards.js';
import { escapeControls, formatBytes, readChunksCapped } from '../platform/io.js';
import { message } from '../text/message.js';

const openAsync = promisify(open) as (path: string, flags: number) => Promise<number>;
const fstatAsync = promisify(fstat) as (fd: number) => Promise<Stats>;
const closeAsync = promisify(close);

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
            message`--from "${path}": the pipe gives more than ${formatBytes(MAX_STDIN_BYTES)}`,
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
  throw new UsageError(message`--from "${path}" ${what}`, {
    hint: 'pass a file of rows, or pipe them in with --from - (ugs ... --from - --format csv < rows.csv)',
  });
}

function tooLargeToKeep(path: string): UsageError {
  return new UsageError(
    message`--from "${path}" is larger than ${formatBytes(MAX_KEPT_BYTES)}, the most a rotate run holds in memory`,
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
    throw new UsageError(message`--from "${path}" is no longer a regular file`, {
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
  return new UsageError(message`--from "${path}": cannot read the file (${reasonOf(error)})`, {
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
