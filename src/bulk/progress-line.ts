/**
 * The progress line of a bulk run on stderr, drawn from the run's state (progress.ts formats
 * it): when and where it is written.
 */
import { printLine } from '../output/messages.js';
import type { Output } from '../output/output.js';
import { formatProgress, formatProgressLog, type ProgressState } from './progress.js';

const BAR_INTERVAL_MS = 100;
const LOG_INTERVAL_MS = 10_000;

/** Calls `tick` every `ms` until the returned function is called. */
export type Every = (tick: () => void, ms: number) => () => void;

/** setInterval, not keeping the process alive. */
export function realEvery(tick: () => void, ms: number): () => void {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Progress on stderr: a bar redrawn at most 10 times a second at a terminal; in a log, one plain
 * line every 10 s (so short runs print only their summary).
 */
/** What the line shows: the run's state, and how many rows it has to do. */
export interface ProgressView {
  state: () => ProgressState;
  total: number;
  /** While true, the bar is redrawn at every tick: it counts down to the next probe. */
  counting?: () => boolean;
}

export class ProgressLine {
  readonly total: number;
  private readonly state: () => ProgressState;
  private readonly counting: () => boolean;
  private cancel: (() => void) | undefined;
  private dirty = false;
  private drawn = false;

  constructor(
    private readonly out: Output,
    view: ProgressView,
    every: Every,
  ) {
    this.state = view.state;
    this.total = view.total;
    this.counting = view.counting ?? (() => false);
    // --quiet: no progress at all, so no timer waking the run to print nothing.
    if (out.quiet) return;
    const interval = out.stderrIsTTY ? BAR_INTERVAL_MS : LOG_INTERVAL_MS;
    this.cancel = every(() => this.tick(), interval);
  }

  changed(): void {
    this.dirty = true;
  }

  private tick(): void {
    if (this.out.stderrIsTTY) {
      if (!this.dirty && !this.counting()) return;
      this.dirty = false;
      const width = this.out.stderrColumns();
      this.out.stderr.write(`\r${formatProgress(this.state(), Math.max(1, width - 1))}\u001b[K`);
      this.drawn = true;
    } else {
      printLine(this.out, formatProgressLog(this.state()));
    }
  }

  /** Takes the bar off the terminal for other lines; the next tick draws it again. */
  erase(): void {
    if (!this.drawn) return;
    this.out.stderr.write('\r\u001b[K');
    this.drawn = false;
    this.dirty = true;
  }

  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
    if (this.drawn) this.out.stderr.write('\r\u001b[K');
  }
}
