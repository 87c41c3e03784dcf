/**
 * The end of a bulk run: its exit, the worst of its outcomes, with what the person does next.
 */
import { ApiError, InterruptedError, OutcomeUnknownError, OutputError } from '../errors.js';
import { errorCode } from '../platform/guards.js';
import { escapeControls } from '../platform/io.js';
import { message } from '../text/message.js';
import { type ResultFile, type ResultFileFailure, StdoutLostError } from './journal.js';
import { type BulkOptions, resumeHint } from './options.js';
import { rowsText } from './progress.js';
import type { RunStop } from './stop.js';
import type { Tally } from './tally.js';

/** What a run's exit is made of. */
export interface EndOfRun {
  opts: BulkOptions;
  file: ResultFile | undefined;
  tally: Tally;
  stop: RunStop;
}

/** The run's exit: the worst of its outcomes. */
export function throwOutcome(end: EndOfRun): void {
  // New tokens that exist only in this process come first; a get's lost records are sent again.
  const failure = end.file?.failed;
  if (failure !== undefined) throwLostRotations(end, failure);
  if (end.stop.reason === 'auth' || end.stop.reason === 'network') {
    if (end.stop.error !== undefined) throw end.stop.error;
  }
  if (end.stop.reason === 'interrupt') {
    throw new InterruptedError('interrupted: rows not sent yet were skipped', {
      hint: resumeHint(end.opts),
    });
  }
  const unknown = end.tally.counts.unknown ?? 0;
  if (unknown > 0) {
    // Worded by the operation at risk (`3 rotations have ...: the token may or may not ...`).
    const risk = end.opts.spec.risk;
    const noun = risk?.noun ?? { one: 'row', many: 'rows' };
    const outcome = risk?.delivery.outcome ?? 'the request may or may not have happened';
    throw new OutcomeUnknownError(
      `${unknown} ${unknown === 1 ? `${noun.one} has` : `${noun.many} have`} an unknown outcome: ${outcome}`,
      { hint: unknownHint(end) },
    );
  }
  if (failure !== undefined) {
    throw new OutputError(
      message`${end.opts.output ?? ''}: ${describeWriteError(failure.error)}; no row was started after that`,
      {
        hint: `${fixFirst(failure.error)}, then run the same command with --resume to do the rest (rows done are not sent again)`,
        cause: failure.error,
      },
    );
  }
  const mismatched = end.tally.counts.mismatch ?? 0;
  const stale = end.tally.counts.stale ?? 0;
  const failed = (end.tally.counts.failed ?? 0) + mismatched + stale;
  if (failed > 0) {
    const details: string[] = [];
    if (mismatched > 0) {
      details.push(
        `${mismatched} ${mismatched === 1 ? 'was a mismatch' : 'were mismatches'}: rotated, but the answer named another group`,
      );
    }
    if (stale > 0) {
      details.push(
        `${stale} ${stale === 1 ? 'was' : 'were'} stale: not rotated by ugs, ${stale === 1 ? 'its token was' : 'their tokens were'} not current`,
      );
    }
    const detail = details.length > 0 ? ` (${details.join('; ')})` : '';
    const staleHint =
      stale > 0
        ? "the stale rows were not rotated by ugs: their token was not the group's current one, which their records carry; "
        : '';
    throw new ApiError(`${failed} of ${rowsText(end.tally.rowCount)} failed${detail}`, {
      hint: `${staleHint}the error field of their records says why; ${resumeHint(end.opts)}`,
    });
  }
}

/**
 * The results file failed (a full disk): a rotation whose record never reached it has its new
 * token only in this process, which is about to end. That is exit 5, naming the rows: their
 * groups' tokens can be read back (`--resume` does so, since their last record on disk is
 * `sending`). Anything else lost (records of `get`, skipped rows) is sent again by `--resume`.
 */
function throwLostRotations(end: EndOfRun, failure: ResultFileFailure): void {
  const path = end.opts.output ?? '';
  const reason = describeWriteError(failure.error);
  const rotations = failure.lostWithToken.filter(
    (record) => record.status === 'rotated' || record.status === 'mismatch',
  );
  if (rotations.length > 0) {
    const rows = rotations.map((record) => record.row).sort((a, b) => a - b);
    const anonymous = rotations.filter(
      (record) => record.user_group_id === null || record.name === null,
    );
    const shown =
      rows.length > 20
        ? `${rows.slice(0, 20).join(', ')} and ${rows.length - 20} more`
        : rows.join(', ');
    throw new OutcomeUnknownError(
      message`could not write the results to ${path} (${reason}): ${rows.length === 1 ? 'row' : 'rows'} ${shown} ${rows.length === 1 ? 'was' : 'were'} rotated, but ${rows.length === 1 ? 'its record' : 'their records'} with the new ${rows.length === 1 ? 'token is' : 'tokens are'} not in the file`,
      {
        hint: `${fixFirst(failure.error)}, then run the same command with --resume: it settles ${rows.length === 1 ? 'that row' : 'those rows'} by reading ${rows.length === 1 ? "the group's" : "each group's"} current token back${anonymous.length > 0 ? ` (${anonymous.length} of them ${anonymous.length === 1 ? 'has' : 'have'} no user_group_id and name to read it with: ${readBackHint(end.opts)})` : ''}`,
        cause: failure.error,
      },
    );
  }
}

/**
 * What the `unknown` rows' records say: the cause of the first (and how many others), and a
 * request for user_group_id and name only for the rows that lack them.
 */
function unknownHint(end: EndOfRun): string {
  const first = end.tally.unknowns[0];
  const others = end.tally.unknowns.length - 1;
  const cause =
    first === undefined
      ? ''
      : `row ${first.row}: ${first.error ?? 'no answer'}${others > 0 ? ` (and ${others} more: the error field of their records says why)` : ''}; `;
  const lacks =
    end.opts.spec.risk?.lacksCheck ??
    ((record) => record.user_group_id === null || record.name === null);
  const anonymous = end.tally.unknowns.filter(lacks).length;
  const missing =
    anonymous === 0
      ? ''
      : `give ${anonymous === end.tally.unknowns.length ? (anonymous === 1 ? 'that row' : 'those rows') : `the ${anonymous} ${anonymous === 1 ? 'row' : 'rows'} without them`} user_group_id and name so ugs can check, then `;
  return `${cause}${missing}run again with --resume to settle ${end.tally.unknowns.length === 1 ? 'it' : 'them'}; or ${readBackHint(end.opts)}`;
}

/** How to find out what a request at risk did (its operation's `risk.check`). */
export function readBackHint(opts: BulkOptions): string {
  return opts.spec.risk?.delivery.check ?? '';
}

/** What to mend before `--resume`: the disk, or the reader of stdout. */
function fixFirst(error: unknown): string {
  return error instanceof StdoutLostError
    ? 'send stdout to a reader that takes every line'
    : 'free space';
}

/** A write error as a person reads it: `no space left on the device (ENOSPC)`. */
function describeWriteError(error: unknown): string {
  if (error instanceof StdoutLostError) return error.message;
  const code = errorCode(error);
  if (code === 'ENOSPC') return 'no space left on the device (ENOSPC)';
  if (code === 'EDQUOT') return 'disk quota exceeded (EDQUOT)';
  if (code === 'EIO') return 'input/output error (EIO)';
  return escapeControls(code ?? messageOf(error));
}

/** An error's message, or what was thrown as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
