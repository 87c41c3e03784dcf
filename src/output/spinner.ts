/**
 * Progress for a person at a terminal: a request that has not answered after 300 ms gets a
 * spinner on stderr saying what is happening (`Creating or finding acme...`, `Rate limited,
 * retrying in 3 s...`), erased before anything else is printed. Nothing in pipes, in CI, with
 * `--debug` (its trace lines would fight the spinner for the line), with `--quiet`, or on a
 * terminal that cannot erase a line (TERM=dumb). The spinner library is imported only when the
 * timer fires: a quick answer, and every start-up, never load it.
 */

import { colorEnabled, type IO, isSet } from '../platform/io.js';
import type { Color, Spinner } from '../vendor/spinner.js';
import { silentTracer, type Tracer } from './debug.js';
import type { OutputPreferences } from './output.js';

/** How long a request may take before the spinner appears. */
const SPINNER_DELAY_MS = 300;

export interface Progress {
  /** Runs `work`; if it has not settled after 300 ms, a spinner says `text` until it does. */
  during<T>(text: string, work: () => Promise<T>): Promise<T>;
  /** Told of retries by the HTTP client, so the spinner says why it is still waiting. */
  readonly tracer: Tracer;
}

export const noProgress: Progress = {
  during: (_text, work) => work(),
  tracer: silentTracer,
};

export function createProgress(
  io: IO,
  preferences: OutputPreferences,
  delayMs = SPINNER_DELAY_MS,
): Progress {
  const wanted =
    io.stderrIsTTY &&
    !isSet(io.env.CI) &&
    io.env.TERM !== 'dumb' &&
    !preferences.debug &&
    preferences.quiet !== true;
  if (!wanted) return noProgress;
  return new TerminalProgress(io, colorEnabled(io, preferences.noColor, 'stderr'), delayMs);
}

// yoctocolors' `reset` (SGR 0) changes nothing on screen; yocto-spinner has no "no colour" name,
// and it falls back to cyan for a name it does not know.
const NO_COLOR = 'reset' as unknown as Color;

interface Task {
  /** What the command is doing, e.g. `Creating or finding acme`. */
  readonly base: string;
  /** What the spinner says now (the base, or a retry). */
  text: string;
  spinner: Spinner | undefined;
}

class TerminalProgress implements Progress {
  private task: Task | undefined;
  readonly tracer: Tracer;

  constructor(
    private readonly io: IO,
    private readonly colour: boolean,
    private readonly delayMs: number,
  ) {
    this.tracer = {
      ...silentTracer,
      request: (request) => {
        const task = this.task;
        if (task !== undefined && request.attempt > 0) {
          this.say(`${task.base} (attempt ${request.attempt + 1})`);
        }
      },
      retry: (delayMs, reason) =>
        this.say(`${retryReason(reason)}, retrying in ${seconds(delayMs)}`),
    };
  }

  async during<T>(text: string, work: () => Promise<T>): Promise<T> {
    // One spinner at a time: an inner call only does its work.
    if (this.task !== undefined) return work();
    const task: Task = { base: text, text, spinner: undefined };
    this.task = task;
    const timer = setTimeout(() => void this.show(task), this.delayMs);
    // A signal ends the command at once (main prints one line and exits): the spinner and the
    // hidden cursor must be gone first. Listeners run in order, before main's report is written.
    const unsubscribe = this.io.onSignal?.(() => this.end(task));
    try {
      return await work();
    } finally {
      clearTimeout(timer);
      unsubscribe?.();
      this.end(task);
    }
  }

  private async show(task: Task): Promise<void> {
    let library: typeof import('../vendor/spinner.js');
    try {
      library = await import('../vendor/spinner.js');
    } catch {
      return; // A spinner is a courtesy: never a reason to fail a command.
    }
    // The answer may have come while the library loaded.
    if (this.task !== task) return;
    task.spinner = library
      .yoctoSpinner({
        stream: this.io.stderr,
        text: `${task.text}...`,
        color: this.colour ? 'cyan' : NO_COLOR,
        handleSignals: false,
      })
      .start();
  }

  private say(text: string): void {
    const task = this.task;
    if (task === undefined) return;
    task.text = text;
    if (task.spinner !== undefined) task.spinner.text = `${text}...`;
  }

  private end(task: Task): void {
    if (this.task === task) this.task = undefined;
    task.spinner?.stop();
    task.spinner = undefined;
  }
}

/** The HTTP client's retry reason (`HTTP 429`, `ECONNREFUSED`) in words. */
export function retryReason(reason: string): string {
  switch (reason) {
    case 'HTTP 429':
      return 'Rate limited';
    case 'HTTP 503':
      return 'Service unavailable (HTTP 503)';
    case 'HTTP 502':
    case 'HTTP 504':
      return `Gateway error (${reason})`;
    case 'ECONNREFUSED':
      return 'Connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'Connection lost';
    default:
      return reason;
  }
}

/** `3 s`, or `0.2 s` under a second. */
export function seconds(ms: number): string {
  return ms < 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}
