/**
 * What a bulk run is given: its options (the flags of `--from`) and the hooks tests replace.
 */
import type { ColumnRename, InputFormat } from '../input/bulk-options.js';
import type { Rate } from '../service/rate.js';
import type { AppendFs } from './append-fs.js';
import type { Clock } from './clock.js';
import type { Every } from './progress-line.js';
import type { OutputTokens } from './records.js';
import type { BulkSpec } from './spec.js';

export interface BulkOptions {
  /** The operation's bulk spec (its folder's bulk.ts). */
  spec: BulkSpec;
  /** A path, or `-` for stdin. */
  from: string;
  format: InputFormat;
  concurrency: number;
  output: string | undefined;
  resume: boolean;
  /** rotate: no confirmation. */
  yes: boolean;
  /**
   * For a command whose runs confirm nothing elsewhere (`get` and `update` pass `yes: true`): on
   * a production profile the run asks `<verb> N user groups on production profile ...?`, or needs
   * `--yes` without a terminal. `yes` is `--yes` as typed; `verb` is `get or create`, `update`.
   * Absent: the spec's own confirmation (`risk`) is the one asked.
   */
  production?: { yes: boolean; verb: string };
  /** `--delimiter`: the CSV delimiter; undefined to detect it from the header line. */
  delimiter?: string | undefined;
  /** `--strict-columns`: a CSV column ugs does not know is refused instead of ignored. */
  strictColumns?: boolean | undefined;
  /** `--column SRC=DEST` (CSV only): columns read as the fields they are mapped to. */
  columns?: readonly ColumnRename[] | undefined;
  /**
   * Whether a run at a terminal that would leave columns out asks before sending (not after
   * `--yes`): a column dropped is data the service never gets, and a rerun cannot add it.
   */
  askColumns?: boolean | undefined;
  /**
   * `--dry-run`: the input validated and each row's request shown, never sent: no results file
   * written, no API token read, no connection made, no question asked.
   */
  dryRun?: boolean | undefined;
  /** With `--dry-run`: one JSON line per row instead of the summary. */
  json?: boolean | undefined;
  /**
   * `--give-up-after`: the run stops as for a service that is down (exit 4) once no request has
   * succeeded for this long, so a service that throttles without end cannot hold it for days.
   * Default DEFAULT_GIVE_UP_AFTER_MS.
   */
  giveUpAfterMs?: number;
  /**
   * `--rate`: every request of the run starts on one schedule, one every window / n. Absent: the
   * dialect's default (the vendor's 180/min with `explo`, none with `interface`).
   */
  rate?: Rate | undefined;
  /**
   * `--output-tokens`: what the results file keeps of each token. `last4`: the last 4 and the
   * SHA-256 (records.ts `tokenTail`), the whole records going to stdout; default `full`.
   */
  outputTokens?: OutputTokens | undefined;
}

export interface BulkHooks {
  clock?: Clock;
  /**
   * Calls `tick` every `ms` until the returned function is called: the progress line's timer.
   * Tests pass their own, to see the 10-second log line without waiting 10 seconds.
   */
  every?: Every;
  /** The file system under `--output` (tests fill the disk). */
  fs?: AppendFs;
  /**
   * How long a run waits for a service that became unavailable before it stops (exit 4); default
   * OUTAGE_LIMIT_MS (2 minutes). `--give-up-after` ends the wait sooner when it is shorter.
   */
  outageLimitMs?: number;
}

/** How to carry on after a run that stopped. */
export function resumeHint(opts: BulkOptions): string {
  return opts.output === undefined
    ? 'with --output FILE a later run can --resume where this one stopped'
    : `run the same command with --resume to try the rest (rows done are not sent again)`;
}
