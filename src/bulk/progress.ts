/**
 * What a bulk run says about itself on stderr: a bar redrawn at a terminal, a plain line every
 * few seconds in logs, and a summary at the end. Pure text; the caller decides where and when.
 */
import { RECORD_STATUSES, type RecordStatus } from './records.js';

export type StatusCounts = Partial<Record<RecordStatus, number>>;

export interface ProgressState {
  /** Rows with an outcome so far (skipped ones included). */
  done: number;
  total: number;
  counts: StatusCounts;
  elapsedMs: number;
  /** ms left of a Retry-After wait; 0 or absent when not waiting. */
  waitingMs?: number;
  /**
   * `--rate`: the time one request takes of the schedule (window / n). A row costs at least
   * that, however fast the first answers came: the eta is never shorter than rows left × it.
   */
  minMsPerRow?: number;
  /**
   * `--resume`: ms left before the rows an earlier run sent are checked (its requests may still
   * be in flight); absent when not waiting.
   */
  inFlightWaitMs?: number;
  /**
   * The service is unavailable and the run is paused (outage.ts): since when (a time of day),
   * and ms to the next probe (0 while one is on its way); absent otherwise.
   */
  unavailable?: { since: string; retryInMs: number };
}

/** "1 row", "2 rows". */
export function rowsText(count: number): string {
  return `${count} ${count === 1 ? 'row' : 'rows'}`;
}

/** `1m05s`, `2h03m`, `12.3s`, `850ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  const totalSeconds = Math.floor(ms / 1000);
  if (totalSeconds < 3600) {
    return `${Math.floor(totalSeconds / 60)}m${String(totalSeconds % 60).padStart(2, '0')}s`;
  }
  const minutes = Math.floor(totalSeconds / 60);
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

function rate(rows: number, elapsedMs: number): number | undefined {
  return elapsedMs >= 1 ? rows / (elapsedMs / 1000) : undefined;
}

function formatRate(rows: number, elapsedMs: number): string | undefined {
  const perSecond = rate(rows, elapsedMs);
  if (perSecond === undefined) return undefined;
  return `${perSecond >= 100 ? Math.round(perSecond) : perSecond.toFixed(1)} rows/s`;
}

/** Non-zero counts in the order of the statuses, e.g. `40 created, 2 failed`. */
function formatCounts(counts: StatusCounts, include: (status: RecordStatus) => boolean): string[] {
  const parts: string[] = [];
  for (const status of RECORD_STATUSES) {
    const count = counts[status] ?? 0;
    if (count > 0 && include(status)) parts.push(`${count} ${status}`);
  }
  return parts;
}

/** The facts of a progress line, shortest first to drop. */
function progressFacts(state: ProgressState, troubleCounts: boolean): string[] {
  const facts = [`${state.done}/${state.total}`];
  const percent = state.total > 0 ? Math.floor((state.done / state.total) * 100) : 100;
  facts.push(`${percent}%`);
  const perSecond = rate(state.done, state.elapsedMs);
  const speed = formatRate(state.done, state.elapsedMs);
  if (speed) facts.push(speed);
  if (perSecond !== undefined && perSecond > 0 && state.done < state.total) {
    const left = state.total - state.done;
    const byRate = left * (state.minMsPerRow ?? 0);
    facts.push(`eta ${formatDuration(Math.max((left / perSecond) * 1000, byRate))}`);
  }
  // Trouble is worth the space; successes are in the summary.
  if (troubleCounts) {
    facts.push(
      ...formatCounts(
        state.counts,
        (s) => s === 'failed' || s === 'mismatch' || s === 'stale' || s === 'unknown',
      ),
    );
  }
  if (state.inFlightWaitMs !== undefined) {
    facts.push(
      `waiting ${formatDuration(state.inFlightWaitMs)} for an earlier run's requests to end`,
    );
  }
  if (state.unavailable !== undefined) {
    const { since, retryInMs } = state.unavailable;
    // Whole seconds, rounded up: the wait is 1, 2, 4, 8 ... s, and "retrying in 0 s" is no wait.
    const retry = retryInMs > 0 ? `retrying in ${Math.ceil(retryInMs / 1000)} s` : 'retrying now';
    facts.push(`service unavailable since ${since}, ${retry}`);
  }
  if ((state.waitingMs ?? 0) > 0) {
    facts.push(`throttled, waiting ${formatDuration(state.waitingMs ?? 0)}`);
  }
  return facts;
}

/**
 * One terminal line of at most `width` characters: a bar, then as many facts as fit. Below
 * about 30 columns the bar goes first, then facts from the end.
 */
export function formatProgress(state: ProgressState, width: number): string {
  const facts = progressFacts(state, true);
  let text = facts.join('  ');
  while (text.length > width && facts.length > 1) {
    facts.pop();
    text = facts.join('  ');
  }
  if (text.length > width) return text.slice(0, Math.max(0, width));
  const barWidth = Math.min(40, width - text.length - 3);
  if (barWidth < 10) return text;
  const fraction = state.total > 0 ? Math.min(1, state.done / state.total) : 1;
  const filled = Math.floor(fraction * barWidth);
  return `[${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}] ${text}`;
}

/** The line written every 10 s when stderr is not a terminal: every count, no bar. */
export function formatProgressLog(state: ProgressState): string {
  const facts = progressFacts(state, false);
  const counts = formatCounts(state.counts, () => true);
  return `progress: ${facts.join(', ')}${counts.length > 0 ? ` (${counts.join(', ')})` : ''}`;
}

/**
 * The last line: `1200 rows in 1.5s (800 rows/s): 1000 created, 150 found, 50 failed`. Rows
 * settled by reading their group back (their rotation's answer was lost) are said after the
 * counts: `10 rotated, 2 failed; 3 settled by reading the group back`; so are the empty rows of
 * a CSV input (`; 4 empty rows skipped`), which are no rows and have no records. A delete settles
 * otherwise (its operation's `settledHow`). Where the profile could be mistaken for another, the
 * place comes before the counts: `5 rows in 2s (2.5 rows/s) on prod (https://...): 5 created`.
 */
export function formatSummary(
  counts: StatusCounts,
  elapsedMs: number,
  more: { settledByGet?: number; blankRows?: number; settledHow?: string; where?: string } = {},
): string {
  const {
    settledByGet = 0,
    blankRows = 0,
    settledHow = 'by reading the group back',
    where = '',
  } = more;
  let rows = 0;
  for (const status of RECORD_STATUSES) {
    if (status !== 'sending') rows += counts[status] ?? 0;
  }
  const speed = formatRate(rows, elapsedMs);
  const parts = formatCounts(counts, (s) => s !== 'sending');
  const settled = settledByGet > 0 ? `; ${settledByGet} settled ${settledHow}` : '';
  const blank =
    blankRows > 0 ? `; ${blankRows} empty ${blankRows === 1 ? 'row' : 'rows'} skipped` : '';
  return `${rows} ${rows === 1 ? 'row' : 'rows'} in ${formatDuration(elapsedMs)}${speed ? ` (${speed})` : ''}${where}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}${settled}${blank}`;
}
