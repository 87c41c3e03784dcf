/**
 * A real pseudo-terminal for the built binary, through util-linux `script`:
 * `script -q -e -c "<command>" /dev/null` runs the command on a new pty whose master side is
 * script's stdin/stdout, so ugs sees terminals on stdin, stdout and stderr exactly as it would
 * at a keyboard. Keys are written to script's stdin; everything the terminal shows comes back on
 * script's stdout (stdout and stderr of ugs merged, as on a screen).
 *
 * Robustness: every session is killed after an overall deadline, every wait has its own
 * deadline and reports what the screen showed, and matching is done on the text with ANSI
 * escape sequences removed.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { BIN, type EnvChanges, type Sandbox, sandboxEnv, stripAnsi } from './binary.js';

/** Fails (never skips) when `script` is missing: CI installs it (see .ci/run). */
export function requireScript(): void {
  const probe = spawnSync('script', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0 || !/util-linux/.test(probe.stdout + probe.stderr)) {
    throw new Error(
      'the interactive tests need `script` from util-linux (Debian/Ubuntu package bsdutils or ' +
        'util-linux) to run ugs on a real pseudo-terminal, and it was not found or is not the ' +
        `util-linux one (${probe.error?.message ?? (probe.stdout + probe.stderr).trim()}); ` +
        'install it, e.g. `apt-get install bsdutils` (.ci/run does this)',
    );
  }
}

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

export interface PtyExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface PtyOptions {
  env?: EnvChanges;
  /** The whole session, from spawn to exit. */
  timeoutMs?: number;
  /** Width of the terminal; default 120. */
  columns?: number;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export class PtySession {
  /** Everything the terminal showed, escape sequences included. */
  raw = '';
  private cursor = 0;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly listeners = new Set<() => void>();
  private exitResult: PtyExit | undefined;
  private readonly deadline: NodeJS.Timeout;
  private timedOut = false;
  readonly exited: Promise<PtyExit>;

  constructor(
    sandbox: Sandbox,
    readonly args: readonly string[],
    options: PtyOptions = {},
  ) {
    const timeoutMs = options.timeoutMs ?? 15_000;
    const command = [process.execPath, BIN, ...args].map(shellQuote).join(' ');
    // A fixed, realistic window size: a pty started from a pipe has 0 columns otherwise.
    const columns = options.columns ?? 120;
    const shell = `stty cols ${columns} rows 40 2>/dev/null; exec ${command}`;
    this.child = spawn('script', ['-q', '-e', '-c', shell, '/dev/null'], {
      cwd: sandbox.root,
      env: sandboxEnv(sandbox, { TERM: 'xterm', SHELL: '/bin/sh', ...options.env }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdin.on('error', () => {});
    const collect = (chunk: Buffer) => {
      this.raw += chunk.toString('utf8');
      for (const listener of this.listeners) listener();
    };
    this.child.stdout.on('data', collect);
    this.child.stderr.on('data', collect);
    this.exited = new Promise((done) => {
      this.child.on('close', (code, signal) => {
        clearTimeout(this.deadline);
        this.exitResult = { code, signal };
        for (const listener of this.listeners) listener();
        done(this.exitResult);
      });
    });
    this.deadline = setTimeout(() => {
      this.timedOut = true;
      this.kill();
    }, timeoutMs);
  }

  /** The screen's text so far, without escape sequences. */
  text(): string {
    return stripAnsi(this.raw);
  }

  /** What was shown after the last match (for messages and for `expect`). */
  rest(): string {
    return this.text().slice(this.cursor);
  }

  /**
   * Waits until `pattern` appears after the previous match, then moves past it. Rejects with
   * the screen's text if it does not appear in time or the session ends first.
   */
  waitFor(pattern: string | RegExp, timeoutMs = 8_000): Promise<string> {
    return new Promise((resolveWait, reject) => {
      const check = () => {
        const text = this.text();
        const from = text.slice(this.cursor);
        let index = -1;
        let matched = '';
        if (typeof pattern === 'string') {
          index = from.indexOf(pattern);
          matched = pattern;
        } else {
          const found = new RegExp(pattern.source, pattern.flags.replace('g', '')).exec(from);
          if (found) {
            index = found.index;
            matched = found[0];
          }
        }
        if (index >= 0) {
          finish();
          this.cursor += index + matched.length;
          resolveWait(matched);
        } else if (this.exitResult || this.timedOut) {
          finish();
          reject(this.failure(`the session ended before ${String(pattern)} appeared`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(this.failure(`${String(pattern)} did not appear within ${timeoutMs} ms`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  /** Types `text` as keys (a small pause first, as a person would). */
  async type(text: string): Promise<void> {
    await sleep(30);
    this.child.stdin.write(text);
  }

  /**
   * Answers an @inquirer/prompts prompt: waits for it, types the answer, presses Enter, and waits
   * for the prompt's "done" mark so that the next wait cannot match a re-render of this one.
   */
  async answer(prompt: string, value: string): Promise<void> {
    await this.waitFor(prompt);
    if (value !== '') await this.type(value);
    await this.type('\r');
    await this.waitFor(/[✔√]/);
  }

  /** Closes the keyboard side and waits for the exit; fails the test on the overall timeout. */
  async finish(): Promise<PtyExit> {
    const result = await this.exited;
    this.child.stdin.end();
    if (this.timedOut) throw this.failure('the session was killed after its overall timeout');
    return result;
  }

  kill(): void {
    if (this.exitResult === undefined) this.child.kill('SIGKILL');
  }

  private failure(message: string): Error {
    return new Error(
      `pty: ugs ${this.args.join(' ')}: ${message}\n--- screen (ANSI stripped) ---\n${this.text()}\n--- raw ---\n${JSON.stringify(this.raw)}`,
    );
  }
}

const sessions = new Set<PtySession>();

export function startPty(
  sandbox: Sandbox,
  args: readonly string[],
  options: PtyOptions = {},
): PtySession {
  const session = new PtySession(sandbox, args, options);
  sessions.add(session);
  return session;
}

/** Kills whatever a failed test left running. */
export function killAllPtys(): void {
  for (const session of sessions) session.kill();
  sessions.clear();
}
