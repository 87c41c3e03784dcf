/**
 * The built binary on a real pseudo-terminal: terminals on its stdin, stdout and stderr as at a
 * keyboard; keys are written to the pty, and the screen (stdout and stderr merged) read back.
 * Every session is killed after an overall deadline, every wait has its own deadline and reports
 * the screen, and matching is done on the text without ANSI escape sequences.
 */
import { EventEmitter, once } from 'node:events';
import { constants } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
// node-pty: the binary itself on a pty of a set size, with its own exit status (no script/sh/stty).
import { type IPty, spawn } from '@lydell/node-pty';
import { BIN, type EnvChanges, type Sandbox, sandboxEnv, stripAnsi } from './binary.js';

export interface PtyExit {
  /** A death by signal N reads 128 + N, as a shell (and `script -e`) reports it. */
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

function signalName(signal: number): NodeJS.Signals | null {
  const names = Object.keys(constants.signals) as NodeJS.Signals[];
  return names.find((name) => constants.signals[name] === signal) ?? null;
}

export class PtySession {
  /** Everything the terminal showed, escape sequences included. */
  raw = '';
  private cursor = 0;
  private readonly pty: IPty;
  private readonly changes = new EventEmitter();
  private exitResult: PtyExit | undefined;
  private timedOut = false;
  readonly exited: Promise<PtyExit>;

  constructor(
    sandbox: Sandbox,
    readonly args: readonly string[],
    options: PtyOptions = {},
  ) {
    this.pty = spawn(process.execPath, [PTY_HOLD, BIN, ...args], {
      cwd: sandbox.root,
      env: sandboxEnv(sandbox, { TERM: 'xterm', SHELL: '/bin/sh', ...options.env }),
      cols: options.columns ?? 120,
      rows: 40,
    });
    this.pty.onData((text) => {
      this.raw += text;
      this.changes.emit('change');
    });
    const deadline = setTimeout(() => {
      this.timedOut = true;
      this.kill();
    }, options.timeoutMs ?? 15_000);
    // node-pty means to report the exit once the pty has given all its output, but on a loaded
    // machine the last chunk can still arrive after it (a help text seen cut short): the exit
    // counts once the output has been quiet for a moment.
    this.exited = new Promise((done) => {
      this.pty.onExit(({ exitCode, signal }) => {
        clearTimeout(deadline);
        const exit: PtyExit = signal
          ? { code: 128 + signal, signal: signalName(signal) }
          : { code: exitCode, signal: null };
        void untilQuiet(this.changes, QUIET_MS).then(() => {
          this.exitResult = exit;
          this.changes.emit('change');
          done(exit);
        });
      });
    });
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
  async waitFor(pattern: string | RegExp, timeoutMs = 8_000): Promise<string> {
    const regex =
      typeof pattern === 'string'
        ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        : new RegExp(pattern.source, pattern.flags.replace('g', ''));
    const signal = AbortSignal.timeout(timeoutMs);
    for (;;) {
      const found = regex.exec(this.rest());
      if (found) {
        this.cursor += found.index + found[0].length;
        return found[0];
      }
      if (this.exitResult || this.timedOut) {
        throw this.failure(`the session ended before ${String(pattern)} appeared`);
      }
      // Data and exit arrive in I/O callbacks, never between the check above and this wait.
      await once(this.changes, 'change', { signal }).catch(() => {
        throw this.failure(`${String(pattern)} did not appear within ${timeoutMs} ms`);
      });
    }
  }

  /** Types `text` as keys (a small pause first, as a person would). */
  async type(text: string): Promise<void> {
    await sleep(30);
    this.pty.write(text);
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

  /** Waits for the exit; fails the test on the overall timeout. */
  async finish(): Promise<PtyExit> {
    const result = await this.exited;
    if (this.timedOut) throw this.failure('the session was killed after its overall timeout');
    return result;
  }

  kill(): void {
    if (this.exitResult === undefined) this.pty.kill('SIGKILL');
  }

  private failure(message: string): Error {
    return new Error(
      `pty: ugs ${this.args.join(' ')}: ${message}\n--- screen (ANSI stripped) ---\n${this.text()}\n--- raw ---\n${JSON.stringify(this.raw)}`,
    );
  }
}

/** Runs ugs and holds the pty open a moment after it exits (pty-hold.cjs says why). */
const PTY_HOLD = fileURLToPath(new URL('./pty-hold.cjs', import.meta.url));

/** How long the output must be quiet after the exit before the session counts as ended. */
const QUIET_MS = 100;

/** Resolves once `changes` has emitted nothing for `ms` (at most 2 s after the call). */
async function untilQuiet(changes: EventEmitter, ms: number): Promise<void> {
  const end = Date.now() + 2_000;
  for (;;) {
    const waiting = new AbortController();
    const quiet = await Promise.race([
      once(changes, 'change', { signal: waiting.signal }).then(
        () => false,
        () => true,
      ),
      sleep(ms).then(() => true),
    ]);
    waiting.abort();
    if (quiet || Date.now() >= end) return;
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
