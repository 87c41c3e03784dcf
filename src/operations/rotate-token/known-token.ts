/**
 * A rotation refused with 404 (the service does not know the token) whose token the history
 * knows: the hint then says whose it was, on which profile, and what became of it (who rotated
 * it, when), and gives the exact `ugs get` that reads that group's current token. Without a
 * history, a key or a match, the operation's own hint stays. The history's reading code is
 * loaded only here, on such a 404.
 */
import type { Deps } from '../../context/factory.js';
import { ApiError } from '../../errors.js';
import type { HistoryEvent } from '../../history/event.js';
import { fingerprintWith } from '../../history/log.js';
import type { TokenGroup } from '../../history/read.js';
import { formatBaseUrl } from '../../input/parse.js';
import type { Target } from '../../service/target.js';
import { message } from '../../text/message.js';

/**
 * How to read a group's current token, as the command words it (its `recoveryHint`, passed in:
 * the command imports this file).
 */
export type ReadHint = (group: Record<string, unknown>, deps: Deps, target: Target) => string;

/** Runs the rotation; a 404 from it comes back with the history's word in its hint. */
export async function withKnownTokenHint<T>(
  token: string,
  target: Target,
  deps: Deps,
  readHint: ReadHint,
  rotate: () => Promise<T>,
): Promise<T> {
  try {
    return await rotate();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    const hint = await knownTokenHint(token, target, deps, readHint);
    if (hint === undefined) throw error;
    throw new ApiError(error.message, {
      status: 404,
      hint,
      cause: error,
      ...(error.body !== undefined && { body: error.body }),
      ...(error.retryAfter !== undefined && { retryAfter: error.retryAfter }),
    });
  }
}

/**
 * What the history says of this token at this service (the 404 came from it: a group seen
 * elsewhere says nothing about this one), or undefined when it says nothing. A history that
 * cannot be read says nothing either: the refusal itself is the error to report.
 */
export async function knownTokenHint(
  token: string,
  target: Target,
  deps: Deps,
  readHint: ReadHint,
): Promise<string | undefined> {
  const location = deps.history.location;
  if (location === undefined) return undefined;
  try {
    const read = await import('../../history/read.js');
    const key = await read.readKey(location);
    if (key === undefined) return undefined;
    const answer = read.whois(await read.readHistory(location), [
      await fingerprintWith(key, token),
    ]);
    const here = formatBaseUrl(target.baseUrl);
    // The last group seen with it, should one token have been answered twice.
    const group = answer.groups.filter((seen) => seen.base_url === here).at(-1);
    return group === undefined ? undefined : describe(group, deps, target, readHint);
  } catch {
    return undefined;
  }
}

function who(event: HistoryEvent): string {
  return `${event.user}@${event.host}`;
}

function when(event: HistoryEvent): string {
  return event.time.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

function describe(group: TokenGroup, deps: Deps, target: Target, readHint: ReadHint): string {
  // Every value here was read from the history file: each part is one template, so none of
  // them reaches the terminal unescaped.
  const name = group.name === null ? '' : message` (${group.name})`;
  const whose = message`the history knows this token: it was the token of user group "${group.user_group_id}"${name}, profile "${group.profile}"`;
  const end = group.ended_by;
  let fate = '';
  if (end !== undefined && group.status === 'deleted') {
    // A get would create the group again: no command is offered.
    return `${whose}; the group was deleted ${message`${when(end)} by ${who(end)} (profile "${end.profile}")`}, so none of its tokens works`;
  }
  if (end !== undefined && group.status === 'rotated') {
    const to = end.token_last4 === null ? '' : message` to …${end.token_last4}`;
    fate = message`; it was rotated ${when(end)} by ${who(end)} (profile "${end.profile}")${to}`;
  } else if (end !== undefined && group.status === 'superseded') {
    fate = message`; the group answered another token ${when(end)} (${who(end)}, ${end.outcome})`;
  } else {
    fate = '; this history saw no rotation of it (another machine or tool may have rotated it)';
  }
  // The command reads the group on the profile the history saw it on.
  const groupDeps: Deps = { ...deps, settings: { ...deps.settings, profile: group.profile } };
  const read = readHint(
    { provided_id: group.user_group_id, name: group.name ?? group.user_group_id },
    groupDeps,
    target,
  );
  return `${whose}${fate}; the group's current token: ${read}`;
}
