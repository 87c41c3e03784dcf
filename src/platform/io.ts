import type { Readable, Writable } from 'node:stream';
import { OutputError, type UgsError, UsageError } from '../errors.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** The process's streams and environment, injected so that nothing below `main` reads `process`. */
export interface IO {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  env: Env;
  /**
   * Subscribes to SIGINT/SIGTERM (outside prompts, which see Ctrl+C as a key); returns the
   * unsubscribe function. Absent in tests that do not need it.
   */
  onSignal?: (listener: (signal: string) => void) => () => void;
  /** What a signal would interrupt right now, when that needs more than "interrupted". */
  inFlight?: InFlight;
}

/**
 * The work a signal would cut short, for main's message: a rotation sent and not yet answered
 * may or may not have happened, and the user must be told how to find out.
 */
export class InFlight {
  private describe: (() => UgsError) | undefined;
  private stopper: ((signal: string) => void) | undefined;

  /**
   * While `work` runs, the first signal calls `stop` (a bulk run stops sending and waits for the
   * answers in flight) instead of ending the command; a second signal ends it at once.
   */
  async stoppable<T>(stop: (signal: string) => void, work: () => Promise<T>): Promise<T> {
    this.stopper = stop;
    try {
      return await work();
    } finally {
      this.stopper = undefined;
    }
  }

  /** Hands a signal to the running stoppable work, once; false when there is none to take it. */
  takeSignal(signal: string): boolean {
    const stop = this.stopper;
    if (stop === undefined) return false;
    this.stopper = undefined;
    stop(signal);
    return true;
  }

  async during<T>(describe: () => UgsError, work: () => Promise<T>): Promise<T> {
    this.describe = describe;
    try {
      return await work();
    } finally {
      this.describe = undefined;
    }
  }

  /** The error to report for an interrupt now, or undefined when nothing special is running. */
  current(): UgsError | undefined {
    return this.describe?.();
  }
}

/** First write error of each output stream, recorded by `watchOutput`. */
const outputErrors = new WeakMap<Writable, Error>();

/**
 * Keeps a stream's write errors from crashing the process (an unhandled 'error' event) and keeps
 * the first one for `flushOutput`: later writes to a failed stream report secondary errors.
 */
export function watchOutput(stream: Writable): void {
  stream.on('error', (error: Error) => {
    if (!outputErrors.has(stream)) outputErrors.set(stream, error);
  });
}

/** EPIPE: whoever read our output has gone (`ugs ... | head -1`); that is their choice, not a fault. */
function readerGone(error: Error): boolean {
  return (error as NodeJS.ErrnoException).code === 'EPIPE';
}

/**
 * Waits until everything written so far has reached the stream's target and throws OutputError
 * if any of it could not be written (ENOSPC, EIO, ...). A reader who closed the pipe early is not
 * an error: the command's own result stands.
 */
export async function flushOutput(stream: Writable): Promise<void> {
  const late = await new Promise<Error | null | undefined>((resolve) => {
    try {
      stream.write('', resolve);
    } catch (error) {
      resolve(error instanceof Error ? error : new Error(String(error)));
    }
  });
  const error = outputErrors.get(stream) ?? late ?? undefined;
  if (error === undefined || readerGone(error)) return;
  throw new OutputError(escapeControls(error.message), { cause: error });
}

/**
 * Prompts need a person at both ends: keys on stdin and the prompt visible on stderr (stdout may
 * be piped to a file). CI sets `CI`; a prompt there would block the pipeline until it times out.
 */
export function canPrompt(
  io: Pick<IO, 'stdinIsTTY' | 'stderrIsTTY' | 'env'>,
  noInput: boolean,
): boolean {
  return io.stdinIsTTY && io.stderrIsTTY && !isSet(io.env.CI) && !noInput;
}

/**
 * Colour for one stream. NO_COLOR, FORCE_COLOR=0 and --no-color win everywhere; FORCE_COLOR
 * (any other value) turns it on even into a pipe, as chalk and most CLIs do; otherwise only a
 * terminal gets colour. TERM=dumb terminals cannot show it.
 */
export function colorEnabled(
  io: Pick<IO, 'stdoutIsTTY' | 'stderrIsTTY' | 'env'>,
  noColor: boolean,
  stream: 'stdout' | 'stderr',
): boolean {
  if (noColor || isSet(io.env.NO_COLOR) || io.env.FORCE_COLOR === '0') return false;
  if (io.env.FORCE_COLOR !== undefined && io.env.FORCE_COLOR !== 'false') return true;
  if (io.env.TERM === 'dumb') return false;
  return stream === 'stdout' ? io.stdoutIsTTY : io.stderrIsTTY;
}

/** Columns of the terminal on stdout; 80 when it is not a terminal or does not say. */
export function stdoutColumns(io: Pick<IO, 'stdout' | 'stdoutIsTTY'>): number {
  return terminalColumns(io.stdoutIsTTY ? io.stdout : undefined);
}

/** The width of stderr's terminal, for messages; 80 when unknown. */
export function stderrColumns(io: Pick<IO, 'stderr' | 'stderrIsTTY'>): number {
  return terminalColumns(io.stderrIsTTY ? io.stderr : undefined);
}

function terminalColumns(stream: Writable | undefined): number {
  const columns = (stream as { columns?: unknown } | undefined)?.columns;
  return typeof columns === 'number' && Number.isInteger(columns) && columns > 0 ? columns : 80;
}

/**
 * Whether the terminal can draw box characters: not `TERM=dumb`, and a UTF-8 locale when one is
 * set (the first of LC_ALL, LC_CTYPE, LANG, as the C library looks them up). No locale at all is
 * taken as UTF-8: that is what terminals use today, and Windows sets none.
 */
export function unicodeTerminal(env: Env): boolean {
  if (env.TERM === 'dumb') return false;
  const locale = [env.LC_ALL, env.LC_CTYPE, env.LANG].find((value) => isSet(value));
  return locale === undefined || /utf-?8/i.test(locale);
}

/** An environment variable given a value (set to empty counts as unset). */
export function isSet(value: string | undefined): boolean {
  return value !== undefined && value !== '';
}

export function writeLine(stream: Writable, line: string): void {
  stream.write(`${line}\n`);
}

/**
 * Resolves once `stream` wants more (at once when it does already), so a writer of a long
 * output holds no more than one chunk in memory when its reader is slow. A stream that failed or
 * closed never drains: main reports its error, and the writer is not held up waiting.
 */
export function drained(stream: Writable): Promise<void> {
  if (!stream.writableNeedDrain || stream.destroyed || stream.errored !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      stream.off('error', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
    stream.on('error', done);
  });
}

/**
 * Reads all of stdin for `--with-token`, `--current-token-stdin` and `-` JSON sources. A terminal
 * on stdin would wait for the user to type and press Ctrl+D, which scripts never do and people
 * rarely know: refuse instead of hanging.
 */
export async function readStdin(
  io: IO,
  what: string,
  maxBytes = 10 * 1024 * 1024,
): Promise<string> {
  if (io.stdinIsTTY) {
    throw new UsageError(`${what} reads from stdin, but stdin is a terminal`, {
      hint: `pipe the value in, e.g. \`printenv VALUE | ugs ...\``,
    });
  }
  const chunks = await readChunksCapped(
    io.stdin,
    maxBytes,
    () => new UsageError(`${what}: stdin is larger than ${formatBytes(maxBytes)}`),
  );
  return stripBom(Buffer.concat(chunks).toString('utf8'));
}

/** Every chunk of a stream, failing with `tooLarge()` as soon as more than `maxBytes` arrived. */
export async function readChunksCapped(
  stream: AsyncIterable<Uint8Array | string>,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    size += buf.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(buf);
  }
  return chunks;
}

export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** C0 and C1 control characters: text from a server must not drive the user's terminal. */
export function controlCharacters(): RegExp {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  return /[\u0000-\u001f\u007f-\u009f]/g;
}

/**
 * Text from a server or a file, made safe for a terminal: every C0, DEL and C1 character (ESC,
 * CSI U+009B, OSC U+009D, newlines too) is written as a visible `\uXXXX` escape, never obeyed.
 */
export function escapeControls(text: string): string {
  return text.replace(controlCharacters(), unicodeEscape);
}

/**
 * Characters as the `\uXXXX` escapes JSON and JavaScript read back as them: one escape per
 * UTF-16 code unit, so a character above U+FFFF (U+E0041, an emoji) is its surrogate pair,
 * `\udb40\udc41`. `\u{E0041}` would be shorter, but JSON has no such form and most of what is
 * escaped sits inside JSON quotes (`quote`, `--json`); one form everywhere also shows a person
 * the same text for the same character. Takes a character, a lone surrogate, or any text.
 */
export function unicodeEscape(text: string): string {
  let escaped = '';
  for (let i = 0; i < text.length; i++) {
    escaped += `\\u${text.charCodeAt(i).toString(16).padStart(4, '0')}`;
  }
  return escaped;
}

/** A file (or device, fifo, /dev/stdin) that holds more than the cap allows. */
export class FileTooLargeError extends Error {
  readonly code = 'EFBIG';
  constructor(readonly maxBytes: number) {
    super(`larger than ${formatBytes(maxBytes)}`);
  }
}

/**
 * Reads at most `maxBytes` of a file in chunks and fails past that, whatever the file is: stat
 * sizes lie for /dev/zero, fifos, /dev/stdin and /proc files (0 or unbounded), so the cap is
 * enforced on the bytes actually read, never on what stat says.
 */
export async function readFileCapped(path: string, maxBytes: number): Promise<Buffer> {
  const { open } = await import('node:fs/promises');
  const handle = await open(path, 'r');
  try {
    if ((await handle.stat()).isDirectory()) {
      throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw new FileTooLargeError(maxBytes);
      chunks.push(chunk.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks);
  } finally {
    await handle.close();
  }
}
