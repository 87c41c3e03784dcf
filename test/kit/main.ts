/**
 * `main(argv, io, system)` called in the test process, with the same sandbox, environment and
 * result shape as `runUgs`: a test that checks output and exit codes costs milliseconds instead
 * of a Node start (~340 ms on two cores). What it cannot show, and what stays with `runUgs`: the
 * built bundle and `bin/ugs.js` (early `--help`, lazy loading), signals, real terminals, file
 * descriptors (`/dev/full`), another uid, and a working directory other than the test's own
 * (relative paths resolve against `process.cwd()`).
 */
import { Readable, Writable } from 'node:stream';
import { main } from '../../src/main.js';
import {
  makeSandbox,
  RUN_TIMEOUT_MS,
  type RunOptions,
  type RunResult,
  sandboxEnv,
} from './binary.js';

export interface MainOptions extends Pick<RunOptions, 'sandbox' | 'env' | 'timeoutMs'> {
  /** Text for stdin (closed after it). Default: an empty stdin. */
  stdin?: string;
  /** Every stream a terminal (a person at a keyboard): decoration, prompts allowed. */
  tty?: boolean;
  /** The terminal's width, when `tty`. */
  columns?: number;
  /** With `tty`: stdout redirected (`ugs ... > file` typed at a terminal); stderr stays one. */
  stdoutRedirected?: boolean;
  /** The platform main is told it runs on (`win32`, `darwin`); default: this one. */
  platform?: NodeJS.Platform;
}

class Collected extends Writable {
  text = '';
  constructor(readonly columns: number | undefined) {
    super();
  }
  override _write(chunk: Buffer | string, _encoding: string, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
  /**
   * Never ended, as process.stdout and process.stderr are not: `stream.pipe()` leaves those two
   * open when its source ends (the prompts pipe their output stream into stderr and end it when
   * a prompt closes), and a later error line must still be written.
   */
  override end(...args: unknown[]): this {
    const callback = args.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    const chunk = args[0];
    if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) this.text += chunk.toString();
    if (callback) queueMicrotask(callback);
    return this;
  }
}

/** Runs `ugs ...argv` in-process and collects its exit code and output. */
export async function runMain(
  argv: readonly string[],
  options: MainOptions = {},
): Promise<RunResult> {
  const sandbox = options.sandbox ?? makeSandbox();
  const tty = options.tty === true;
  const stdoutTty = tty && options.stdoutRedirected !== true;
  const stdout = new Collected(stdoutTty ? options.columns : undefined);
  const stderr = new Collected(tty ? options.columns : undefined);
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? RUN_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  // "Never hangs" is part of what is tested: a run that outlives its bound fails the test.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`ugs ${argv.join(' ')} did not finish within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  const run = main(
    argv,
    {
      stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
      stdout,
      stderr,
      stdinIsTTY: tty,
      stdoutIsTTY: stdoutTty,
      stderrIsTTY: tty,
      env: sandboxEnv(sandbox, options.env),
    },
    {
      platform: options.platform ?? process.platform,
      homedir: sandbox.home,
      nodeVersion: process.version,
      uid: process.getuid?.(),
      waitForShutdown: () => new Promise(() => {}),
    },
  );
  const code = await Promise.race([run, deadline]).finally(() => clearTimeout(timer));
  return {
    args: argv,
    code,
    signal: null,
    stdout: stdout.text,
    stderr: stderr.text,
    elapsedMs: performance.now() - started,
  };
}
