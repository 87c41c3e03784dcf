/**
 * What a request came to, as a history entry: the commands and the bulk engine call these around
 * their requests, and each operation says what its answers and errors mean (`HistoryRecording`).
 * An event is written for every request that got an answer, and for one whose outcome is
 * unknown; a request that never reached the service (refused connection, DNS) writes none.
 */
import { ApiError, AuthError, OutcomeUnknownError } from '../errors.js';
import { formatBaseUrl } from '../input/parse.js';
import { DEFAULT_DIALECT } from '../service/dialect.js';
import type { Target } from '../service/target.js';
import type { HistoryEntry, HistoryOutcome } from './event.js';
import type { HistoryLog } from './log.js';

/** What recording needs of a run's dependencies (a command's `Deps` has all of it). */
export interface RecordDeps {
  settings: { profile: string };
  history: Pick<HistoryLog, 'append'>;
}

/** The fields every entry of a run shares: when, which profile, which service. */
export type EntryBase = Pick<HistoryEntry, 'profile' | 'baseUrl' | 'dialect'>;

export function entryBase(deps: RecordDeps, target: Target): EntryBase {
  return {
    profile: target.profile ?? deps.settings.profile,
    baseUrl: formatBaseUrl(target.baseUrl),
    // The dialect the requests spoke: flag, UGS_DIALECT or the profile's, as the target resolved it.
    dialect: target.dialect ?? DEFAULT_DIALECT,
  };
}

/** An entry's own fields: what the operation's answer or error says (`HistoryRecording`). */
export type Fields = Omit<HistoryEntry, keyof EntryBase | 'time'>;

/**
 * How an operation's requests become history entries: declared by the operation itself (its
 * descriptor, `operations/<op>/operation.ts`), read by `recorded` and the bulk engine.
 */
export interface HistoryRecording<Input, Result> {
  /** The entry of an answer. */
  answer(result: Result, input: Input): Fields;
  /** The entry of an error that reached the service, whose `outcome` errorOutcome found. */
  error(outcome: HistoryOutcome, input: Input): Fields;
  /**
   * What a refusal with 404 means: a rotation's 404 is `stale` (the service does not know the
   * token: rotated already, or mistyped). Absent: `failed`, as any refusal.
   */
  notFound?: HistoryOutcome;
}

/**
 * What an error of the call says, or undefined when the request never reached the service (no
 * event). A 404 is `notFound` when the operation says what it means.
 */
export function errorOutcome(
  error: unknown,
  notFound: HistoryOutcome | undefined,
): HistoryOutcome | undefined {
  if (error instanceof OutcomeUnknownError) return 'unknown';
  if (notFound !== undefined && error instanceof ApiError && error.status === 404) return notFound;
  if (error instanceof ApiError || error instanceof AuthError) {
    // AuthError without a status: no token to send, nothing was sent.
    return error instanceof AuthError && error.status === undefined ? undefined : 'failed';
  }
  return undefined;
}

/**
 * Runs a single request of `operation` and appends its event, as the operation's `history`
 * says; the result or error passes through unchanged. An operation without one writes none.
 */
export async function recorded<Input, Result>(
  deps: RecordDeps,
  target: Target,
  operation: { history?: HistoryRecording<Input, Result> | undefined },
  input: Input,
  call: () => Promise<Result>,
): Promise<Result> {
  const recording = operation.history;
  if (recording === undefined) return call();
  const base = entryBase(deps, target);
  try {
    const result = await call();
    await deps.history.append([{ ...base, time: new Date(), ...recording.answer(result, input) }]);
    return result;
  } catch (error) {
    const outcome = errorOutcome(error, recording.notFound);
    if (outcome !== undefined) {
      await deps.history.append([
        { ...base, time: new Date(), ...recording.error(outcome, input) },
      ]);
    }
    throw error;
  }
}
