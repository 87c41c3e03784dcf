/**
 * `ugs whois <token | …last4 | fingerprint>`: which user group(s) a token belonged to in the
 * token history, and whether it was rotated (when, by whom, to what). A whole token is read from
 * stdin with `-` (or asked for, hidden, at a terminal): it never has to be in argv. `--check`
 * asks the service with `get` whether the token is still the group's current one; with `--id`
 * (and `--name`) it asks about that group, for a token the history never saw too.
 *
 * Like `history`, it accepts any `-p` (a profile only the history knows) and resolves no target
 * unless `--check` needs one.
 */
import type { Command } from 'commander';
import { type DepsFactory, newCommand } from '../cli/shared.js';
import { resolveTarget } from '../context/credentials.js';
import type { Deps } from '../context/factory.js';
import { ApiError, UsageError } from '../errors.js';
import { type HistoryEvent, lastFour } from '../history/event.js';
import { fingerprintWith } from '../history/log.js';
import { recorded } from '../history/record.js';
import { confirmNewId } from '../history/typo.js';
import { checkGroupText, commandWordFor, formatBaseUrl } from '../input/parse.js';
import { printNote } from '../output/messages.js';
import { canPrompt, readStdin } from '../platform/io.js';
import type { Target } from '../service/target.js';
import { otherGroupOf, type ServiceResult } from '../service/user-group.js';
import { message } from '../text/message.js';
import { requireHistoryLocation, shortTime } from './history.js';
import { deleteCreatedGroup, deletesLookupsGroup, groupReader } from './operations.js';

export interface WhoisOptions {
  /** The argument as given; `-` reads stdin; undefined asks at a terminal. */
  query: string | undefined;
  check: boolean;
  json: boolean;
  /**
   * `--check --id` (and `--name`): ask the service about this group, whether or not the history
   * saw the token. The name is what a get sends (not needed where the read creates nothing).
   */
  group?: { id: string; name: string | undefined };
}

interface WhoisFlags {
  check?: boolean;
  json?: boolean;
  id?: string;
  name?: string;
}

export function whoisCommand(makeDeps: DepsFactory, run = runWhois): Command {
  return newCommand('whois', 'Tell which user group a token belonged to, and what became of it', [
    'printenv USER_GROUP_TOKEN | ugs whois -',
    'ugs whois …a1b2                  # by its last 4 characters',
    'ugs whois 3fa2b1c0d9e8           # by its fingerprint (ugs history shows them)',
    'ugs whois - --check < token.txt  # ask the service whether it is still current',
    "ugs whois --check --id acme --name Acme - < token.txt   # is it acme's current token?",
  ])
    .argument('[token]', 'a fingerprint, the last 4 characters (…a1b2), or - to read a token')
    .option('--check', "ask the service (a get of the group) whether it is the group's token now")
    .option(
      '--id <user_group_id>',
      'with --check: ask about this group, even for a token the history never saw (a whole token, from stdin)',
    )
    .option(
      '--name <name>',
      'with --id: the name the get sends (not needed with --dialect customer)',
    )
    .option('--json', 'print the answer as JSON on stdout')
    .action(async (query: string | undefined, flags: WhoisFlags, cmd) => {
      await run(
        parseWhoisFlags(query, flags),
        makeDeps(cmd as Command, { acceptsUnknownProfile: true }),
      );
    });
}

/** Flags to options: every usage error of the flags is found here, before anything is read. */
export function parseWhoisFlags(query: string | undefined, flags: WhoisFlags): WhoisOptions {
  if (flags.name !== undefined && flags.id === undefined) {
    throw new UsageError('--name goes with --id: whois --check --id <id> --name <name> -');
  }
  if (flags.id !== undefined && flags.check !== true) {
    throw new UsageError('--id goes with --check: it names the group to ask the service about', {
      hint: 'ugs whois --check --id <user_group_id> --name <name> - < token.txt',
    });
  }
  return {
    query,
    check: flags.check === true,
    json: flags.json === true,
    ...(flags.id !== undefined && {
      group: {
        id: checkGroupText(flags.id, '--id', 'id'),
        name: flags.name === undefined ? undefined : checkGroupText(flags.name, '--name', 'name'),
      },
    }),
  };
}

interface CheckResult {
  user_group_id: string;
  base_url: string;
  current: boolean;
  /** The group's current token, as a fingerprint; null when it could not be asked. */
  current_fingerprint: string | null;
  current_last4: string | null;
  created?: boolean;
  /** The group the check created was deleted again (a dialect with a delete: explo). */
  deleted_again?: boolean;
  /** Read with a read that creates nothing, the service has no such group. */
  missing?: boolean;
}

export async function runWhois(opts: WhoisOptions, deps: Deps): Promise<void> {
  if (opts.group !== undefined) {
    await checkById(opts, opts.group, deps);
    return;
  }
  const location = requireHistoryLocation(deps);
  const text = await readQuery(opts, deps);
  const read = await import('../history/read.js');
  const query = read.parseTokenQuery(text);
  if (query.kind === 'token') deps.output.maskSecret(query.token);
  if (query.kind === 'token' && opts.query !== undefined && opts.query !== '-') {
    printNote(
      deps.output,
      'a token in the command line lands in shell history and process lists; `ugs whois -` reads it from stdin',
    );
  }
  const events = await read.readHistory(location);
  const key = await read.readKey(location);
  const fingerprints = await read.queryFingerprints(query, events, key);
  const answer = read.whois(events, fingerprints);
  const seen = answer.events.length > 0;
  const checks: CheckResult[] = [];
  if (opts.check && seen) {
    for (const group of answer.groups) {
      checks.push(await checkGroup(deps, group, key));
    }
    if (answer.groups.length === 0) {
      throw new UsageError(
        'the history does not say which user group this token belonged to, so --check has no group to ask about',
      );
    }
  }
  if (opts.json) {
    deps.io.stdout.write(
      `${JSON.stringify({ seen, ...answer, ...(opts.check && { checks }) }, null, 2)}\n`,
    );
  } else {
    deps.io.stdout.write(describeAnswer(answer, checks, location.path));
  }
  if (!seen) throw new NotSeen();
  if (opts.check && !checks.some((check) => check.current)) throw new NotCurrent();
}

/** Exit 1: "not seen in this history" (already printed on stdout). */
class NotSeen extends ApiError {
  constructor() {
    super('the token was not seen in this history', {
      hint: 'another history (--history-file) may know it; only tokens ugs sent or received are in it',
    });
  }
}

/** Exit 1 with --check: the token is not the group's current one. */
class NotCurrent extends ApiError {
  constructor() {
    super('the token is not the current token of its user group', {
      hint: "the group's current token is what dashboards need; ugs get --id <id> --name <name> --must-exist --field token reads it",
    });
  }
}

async function readQuery(opts: WhoisOptions, deps: Deps): Promise<string> {
  let text: string;
  if (opts.query === '-') {
    text = (await readStdin(deps.io, 'whois -')).trim();
    if (text === '') throw new UsageError('whois -: stdin was empty');
  } else if (opts.query !== undefined) {
    text = opts.query.trim();
  } else if (canPrompt(deps.io, deps.settings.noInput)) {
    text = (
      await deps.prompter.password('Token, its last 4 characters, or its fingerprint:', {
        validate: (value) => value.trim() !== '' || 'a token, …last4 or a fingerprint is required',
      })
    ).trim();
  } else {
    throw new UsageError('missing token: which token to look up?', {
      hint: 'pipe the token in with `ugs whois -`, or give its last 4 (…a1b2) or its fingerprint',
    });
  }
  if (text === '') throw new UsageError('the token to look up cannot be empty');
  return text;
}

/**
 * A get of the group (its id and last known name), against the service of this run: only when
 * that is the service the history saw the group at, since a get elsewhere would create a group.
 */
async function checkGroup(
  deps: Deps,
  group: { user_group_id: string; name: string | null; base_url: string; fingerprint: string },
  key: Buffer | undefined,
): Promise<CheckResult> {
  const target = await resolveTarget(deps);
  const here = formatBaseUrl(target.baseUrl);
  if (here !== group.base_url) {
    throw new UsageError(
      message`the token's group "${group.user_group_id}" was seen at ${group.base_url}, not at ${here}: --check would ask (and a get could create it at) another service`,
      { hint: message`pass --base-url ${group.base_url} or the -p profile of that service` },
    );
  }
  const asked = await askGroup(
    deps,
    target,
    group.user_group_id,
    group.name ?? group.user_group_id,
  );
  if (asked.kind === 'missing') {
    return {
      user_group_id: group.user_group_id,
      base_url: group.base_url,
      current: false,
      current_fingerprint: null,
      current_last4: null,
      missing: true,
    };
  }
  const token = asked.result.userGroup.token;
  const print = key === undefined ? null : await fingerprintWith(key, token);
  return {
    user_group_id: group.user_group_id,
    base_url: group.base_url,
    current: asked.result.created !== true && print === group.fingerprint,
    current_fingerprint: print,
    current_last4: lastFour(token),
    ...(asked.result.created === true && { created: true }),
    ...(asked.deletedAgain && { deleted_again: true }),
  };
}

type Asked = { kind: 'missing' } | { kind: 'read'; result: ServiceResult; deletedAgain: boolean };

/**
 * The group as the service has it now, read by its id with the operation that reads a group
 * (its descriptor's `readsGroup`), recorded as any single request of it is. In a dialect with a
 * read that creates nothing (the Customer API), that one is asked: a 404 is "no such group".
 * A get-or-create that reports a new group made it now: where the dialect has a delete (explo),
 * ugs deletes it again at once, as `delete --id` does.
 */
async function askGroup(
  deps: Deps,
  target: Target,
  id: string,
  /** Undefined: none was given, which only a read that creates nothing can do without. */
  name: string | undefined,
): Promise<Asked> {
  const client = await deps.connect(target);
  const reader = groupReader(client, target.dialect, id, name ?? id);
  if (reader === undefined) throw new UsageError('no operation of the service reads a group');
  if (reader.createsMissing && name === undefined) {
    throw new UsageError(
      '--id needs --name here: the check reads the group with get, which sends both',
      {
        hint: 'pass --name <name> (an existing group keeps its own); the customer dialect needs none',
      },
    );
  }
  let result: ServiceResult;
  try {
    result = await recorded(deps, target, reader.operation, reader.input, reader.send);
  } catch (error) {
    // A read that creates nothing answers 404 for a group the service does not have: the token
    // is not current there, and nothing was created.
    if (reader.createsMissing || !(error instanceof ApiError) || error.status !== 404) throw error;
    return { kind: 'missing' };
  }
  const other = otherGroupOf(result, id);
  if (other !== undefined) {
    throw new ApiError(
      message`the service answered for user group "${other}", not "${id}": its answer is not used`,
      {
        ...(result.status !== undefined && { status: result.status }),
        hint: "the answer's provided_id must be the user_group_id sent; report this to the service owner",
      },
    );
  }
  deps.output.maskSecret(result.userGroup.token);
  let deletedAgain = false;
  if (result.created === true && deletesLookupsGroup(target.dialect)) {
    const failed = await deleteCreatedGroup(id, result.userGroup.token, client, deps, target);
    if (failed !== undefined) {
      throw new ApiError(
        message`user group "${id}" did not exist: the get that checks it created one, and deleting that new group failed: ${failed instanceof Error ? failed.message : String(failed)}`,
        {
          hint: `check the id for a typo; the group "${id}" may exist now: \`ugs delete --id ${commandWordFor(deps.system.platform)(id)} --yes\` deletes it`,
          cause: failed,
        },
      );
    }
    deletedAgain = true;
  }
  return { kind: 'read', result, deletedAgain };
}

/**
 * `whois --check --id <id> [--name <name>] -`: is this whole token (stdin, or a masked prompt)
 * the group's current token at the service of this run? The token itself is compared, so the
 * history need not know it (nor be on). Exit 0 when it is; 1 when it is not, when there is no
 * such group, or when the check's get created the group (deleted again where it can be).
 */
async function checkById(
  opts: WhoisOptions,
  group: { id: string; name: string | undefined },
  deps: Deps,
): Promise<void> {
  const text = await readQuery(opts, deps);
  const { parseTokenQuery } = await import('../history/read.js');
  const query = parseTokenQuery(text);
  if (query.kind !== 'token') {
    throw new UsageError(
      '--check --id compares a whole token: its last 4 or fingerprint is not enough',
      {
        hint: 'pipe the token in: ugs whois --check --id <id> --name <name> - < token.txt',
      },
    );
  }
  deps.output.maskSecret(query.token);
  const target = await resolveTarget(deps);
  const baseUrl = formatBaseUrl(target.baseUrl);
  // A get creates a group it does not know: a likely typo of a known id is asked about first.
  if (canPrompt(deps.io, deps.settings.noInput))
    await confirmNewId(group.id, deps, { action: 'check' });
  const asked = await askGroup(deps, target, group.id, group.name);
  const token = asked.kind === 'read' ? asked.result.userGroup.token : null;
  const check: CheckResult = {
    user_group_id: group.id,
    base_url: baseUrl,
    current: asked.kind === 'read' && asked.result.created !== true && token === query.token,
    current_fingerprint: null,
    current_last4: lastFour(token),
    ...(asked.kind === 'missing' && { missing: true }),
    ...(asked.kind === 'read' && asked.result.created === true && { created: true }),
    ...(asked.kind === 'read' && asked.deletedAgain && { deleted_again: true }),
  };
  if (opts.json) deps.io.stdout.write(`${JSON.stringify(check, null, 2)}\n`);
  else deps.io.stdout.write(`${checkLine(check).trimStart()}\n`);
  if (!check.current) throw new NotCurrent();
}

/** What a check found, as one indented line under its group. */
function checkLine(check: CheckResult): string {
  if (check.missing === true) {
    return message`  checked: the group does not exist at ${check.base_url} (nothing was created): the token is not current`;
  }
  if (check.created === true) {
    return check.deleted_again === true
      ? message`  checked: the group did not exist at ${check.base_url}: the get created it now, and ugs deleted that new group again; the token is not current`
      : message`  checked: the group did not exist at ${check.base_url} (the get created it now, and ugs cannot remove it): the token is not current`;
  }
  return check.current
    ? message`  checked: it IS the group's current token at ${check.base_url}`
    : message`  checked: it is NOT the group's current token, which is …${check.current_last4 ?? '?'} (${check.current_fingerprint ?? '?'})`;
}

function who(event: HistoryEvent): string {
  return `${event.user}@${event.host}`;
}

function describeAnswer(
  answer: Awaited<ReturnType<typeof import('../history/read.js').whois>>,
  checks: readonly CheckResult[],
  path: string,
): string {
  // Every value here was read from the history file, which anyone who can write it may fill:
  // each line is one template, so none of them can reach the terminal unescaped.
  if (answer.events.length === 0) return message`not seen in this history (${path})\n`;
  const lines: string[] = [];
  for (const group of answer.groups) {
    const token = `${group.last4 === null ? '' : `…${group.last4} `}(${group.fingerprint})`;
    const name = group.name === null ? '' : message` (${group.name})`;
    lines.push(
      message`token ${token} belonged to user group "${group.user_group_id}"${name} at ${group.base_url}, profile ${group.profile}; first seen ${shortTime(group.first_seen)}`,
    );
    const end = group.ended_by;
    if (group.status === 'rotated' && end !== undefined) {
      const to = end.token_last4 === null ? '' : `…${end.token_last4} `;
      lines.push(
        message`  rotated ${shortTime(end.time)} by ${who(end)} to ${to}(${end.token_fingerprint ?? '?'})`,
      );
    } else if (group.status === 'superseded' && end !== undefined) {
      lines.push(
        message`  not current: the group answered another token ${shortTime(end.time)} (${who(end)}, ${end.outcome}): …${end.token_last4 ?? '?'} (${end.token_fingerprint ?? '?'})`,
      );
    } else if (group.status === 'deleted' && end !== undefined) {
      lines.push(
        message`  deleted ${shortTime(end.time)} by ${who(end)} (profile ${end.profile}): the group is gone, and none of its tokens works`,
      );
    } else if (group.status === 'stale' && end !== undefined) {
      lines.push(
        message`  not current: a rotation of it was refused ${shortTime(end.time)} (${who(end)}): the service did not know it`,
      );
    } else {
      lines.push(
        `  current as far as this history knows (last seen ${shortTime(group.last_seen)}); --check asks the service`,
      );
    }
    for (const check of checks.filter((c) => c.user_group_id === group.user_group_id)) {
      lines.push(checkLine(check));
    }
  }
  // A delete by token that ended a group above is said there already.
  const said = new Set(answer.groups.map((group) => group.ended_by));
  const loose = answer.events.filter((event) => event.user_group_id === null && !said.has(event));
  for (const event of loose) {
    // Sent with no id known: a rotation, or a delete by token (whose event says `deleted`).
    lines.push(
      event.outcome === 'deleted'
        ? message`its user group was deleted ${shortTime(event.time)} by ${who(event)} (profile ${event.profile}) at ${event.base_url}`
        : message`sent ${shortTime(event.time)} by ${who(event)} (profile ${event.profile}): ${event.outcome}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
