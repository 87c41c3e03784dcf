/**
 * What a get or a rotation came to, as a history entry: the commands and the bulk engine call
 * these around their requests. An event is written for every request that got an answer, and for
 * a rotation whose outcome is unknown; a request that never reached the service (refused
 * connection, DNS) writes none.
 */
import { ApiError, AuthError, OutcomeUnknownError } from '../errors.js';
import { formatBaseUrl } from '../input/parse.js';
import { DEFAULT_DIALECT } from '../service/dialect.js';
import type { Target } from '../service/target.js';
import { isUnrotated, otherGroupOf, type ServiceResult } from '../service/user-group.js';
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

type Fields = Omit<HistoryEntry, keyof EntryBase | 'time'>;

/** A get's answer: `created` or `found`; an answer about another group is `failed`, tokenless. */
export function getAnswerFields(
  result: ServiceResult,
  request: { user_group_id: string; name: string },
): Fields {
  if (otherGroupOf(result, request.user_group_id) !== undefined) {
    return { userGroupId: request.user_group_id, name: request.name, outcome: 'failed' };
  }
  const name = result.userGroup.name;
  return {
    userGroupId: request.user_group_id,
    name: typeof name === 'string' ? name : request.name,
    // A service that does not say whether it created the group found one, as far as ugs knows.
    outcome: result.created === true ? 'created' : 'found',
    token: result.userGroup.token,
  };
}

/** A rotation's answer: `rotated` to the answered token, or `failed` when nothing changed. */
export function rotateAnswerFields(result: ServiceResult, sentToken: string): Fields {
  const group = result.userGroup;
  const id = group.provided_id;
  const tag = group.api_environment_tag;
  const fields: Fields = {
    userGroupId: typeof id === 'string' || typeof id === 'number' ? String(id) : null,
    name: typeof group.name === 'string' ? group.name : null,
    outcome: 'rotated',
    sentToken,
    token: group.token,
    ...(typeof tag === 'string' && { environmentTag: tag }),
  };
  if (isUnrotated(result, sentToken)) return { ...fields, outcome: 'failed', token: null };
  return fields;
}

/**
 * What an error of the call says, or undefined when the request never reached the service (no
 * event). A rotation refused with 404 is `stale`: the service does not know the token (rotated
 * already, or mistyped).
 */
export function errorOutcome(error: unknown, rotation: boolean): HistoryOutcome | undefined {
  if (error instanceof OutcomeUnknownError) return 'unknown';
  if (rotation && error instanceof ApiError && error.status === 404) return 'stale';
  if (error instanceof ApiError || error instanceof AuthError) {
    // AuthError without a status: no token to send, nothing was sent.
    return error instanceof AuthError && error.status === undefined ? undefined : 'failed';
  }
  return undefined;
}

/** Runs a single get and appends its event; the result or error passes through unchanged. */
export async function recordedGet(
  deps: RecordDeps,
  target: Target,
  request: { user_group_id: string; name: string },
  call: () => Promise<ServiceResult>,
): Promise<ServiceResult> {
  const base = entryBase(deps, target);
  try {
    const result = await call();
    await deps.history.append([{ ...base, time: new Date(), ...getAnswerFields(result, request) }]);
    return result;
  } catch (error) {
    const outcome = errorOutcome(error, false);
    if (outcome !== undefined) {
      await deps.history.append([
        {
          ...base,
          time: new Date(),
          userGroupId: request.user_group_id,
          name: request.name,
          outcome,
        },
      ]);
    }
    throw error;
  }
}

/** Runs a single rotation and appends its event; the result or error passes through unchanged. */
export async function recordedRotate(
  deps: RecordDeps,
  target: Target,
  sentToken: string,
  call: () => Promise<ServiceResult>,
): Promise<ServiceResult> {
  const base = entryBase(deps, target);
  try {
    const result = await call();
    await deps.history.append([
      { ...base, time: new Date(), ...rotateAnswerFields(result, sentToken) },
    ]);
    return result;
  } catch (error) {
    const outcome = errorOutcome(error, true);
    if (outcome !== undefined) {
      await deps.history.append([
        { ...base, time: new Date(), userGroupId: null, name: null, outcome, sentToken },
      ]);
    }
    throw error;
  }
}
