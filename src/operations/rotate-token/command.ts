import type { Command } from 'commander';
import { addBulkFlags, type BulkFlags, parseBulkFlags } from '../../cli/bulk-flags.js';
import {
  type CurrentTokenSource,
  checkTokenSource,
  parseCurrentTokenFlags,
  readCurrentToken,
  type TokenCommandWords,
} from '../../cli/current-token.js';
import {
  addOutputFlags,
  type DepsFactory,
  givenFlags,
  newCommand,
  outputFormat,
  withProgress,
} from '../../cli/shared.js';
import { resolveTarget } from '../../context/credentials.js';
import type { Deps } from '../../context/factory.js';
import { onPlace, placeOf } from '../../context/production.js';
import {
  ApiError,
  CancelledError,
  CiMarkerError,
  InterruptedError,
  OutcomeUnknownError,
  OutputError,
  UsageError,
} from '../../errors.js';
import { recorded } from '../../history/record.js';
import { confirmNewId } from '../../history/typo.js';
import type { BulkFlagSpec } from '../../input/bulk-options.js';
import {
  checkGroupText,
  commandWordFor,
  curlJsonCommand,
  endpointUrl,
  formatBaseUrl,
  pasteProblem,
  quoteVisible,
  UNPASTEABLE,
} from '../../input/parse.js';
import { printMessage } from '../../output/messages.js';
import {
  formatValue,
  type OutputFormat,
  printResult,
  withJsonErrorBody,
} from '../../output/results.js';
import { shellOf } from '../../platform/host.js';
import { canPrompt, flushOutput, InFlight, unicodeEscape } from '../../platform/io.js';
import type { ServiceClient } from '../../service/client.js';
import type { Target } from '../../service/target.js';
import { USER_PATH } from '../../service/target.js';
import { isUnrotated, otherGroupOf, userGroupRecord } from '../../service/user-group.js';
import { message } from '../../text/message.js';
import { fingerprint, REDACTED } from '../../text/redact.js';
import { deleteLookupsGroup, deletesLookupsGroup } from '../delete-user-group/lookup.js';
import { getCustomer, readExisting, readsWithoutCreating } from '../get-customer/operation.js';
import { answeredForAnother } from '../get-user/command.js';
import { getUser } from '../get-user/operation.js';
import { withKnownTokenHint } from './known-token.js';
import { READ_CURRENT_TOKEN_HINT, ROTATION_ANSWER_FIELDS, rotateToken } from './operation.js';

export interface RotateOptions {
  /** From --current-token; undefined when it is to be read from stdin or prompted for. */
  currentToken: string | undefined;
  currentTokenFromStdin: boolean;
  yes: boolean;
  format: OutputFormat;
  /**
   * `--id` and `--name`: the current token is read first (Get User, or Get Customer where the
   * dialect has it; that one sends no name, so `--name` may be left out there).
   */
  group?: { id: string; name: string | undefined };
}

interface RotateFlags extends BulkFlags {
  currentToken?: string;
  currentTokenStdin?: boolean;
  id?: string;
  name?: string;
  yes?: boolean;
  json?: boolean;
  field?: string;
}

export const PREVIOUS_TOKEN_WARNING =
  'The previous token may stop working at once: update every dashboard that embeds it.';

/** `rotate --from`: its flags' words (the spec itself, bulk.ts, loads only for --from). */
const BULK: BulkFlagSpec = {
  command: 'rotate',
  fromHelp: 'one current_token per row from a CSV, NDJSON or JSON file (- for stdin)',
  // Every row is at risk (rotateToken's `risk`): its record must reach a file before it is sent.
  outputRequired:
    'new tokens must never exist only on a terminal: they are appended to the file as rows finish',
};

export function rotateCommand(makeDeps: DepsFactory, run = runRotate): Command {
  const command = newCommand('rotate', "Replace a user group's token with a new one", [
    'ugs rotate                                   # asks for the token, then for confirmation',
    'printenv USER_GROUP_TOKEN | ugs rotate --current-token-stdin --yes --field token',
    'ugs rotate --current-token "$OLD_TOKEN" --yes --json',
    'ugs rotate --id acme --name "Acme Corp"      # asks, then reads its token with get and rotates it',
    'ugs rotate --from tokens.csv --output rotated.csv --yes   # one current_token per row',
  ])
    .option(
      '--current-token <token>',
      'the user group token to replace, or - to read it from stdin (a token here is visible in process lists)',
    )
    .option('--current-token-stdin', 'read the user group token to replace from stdin')
    .option(
      '--id <user_group_id>',
      "rotate this group's token, read first with get (needs --name, except with --dialect customer)",
    )
    .option('--name <name>', 'with --id: the name get sends (an existing group keeps its own)')
    .option('-y, --yes', 'rotate without asking for confirmation (required without a terminal)');
  addBulkFlags(addOutputFlags(command), BULK).action(async (flags: RotateFlags, cmd: Command) => {
    const bulk = parseBulkFlags(flags, BULK, singleRowFlags(flags), flags.yes === true);
    // The bulk engine and this operation's spec load only for --from.
    if (bulk) {
      const [{ runBulk }, { spec }] = await Promise.all([
        import('../../bulk/run.js'),
        import('./bulk.js'),
      ]);
      await runBulk({ ...bulk, spec }, makeDeps(cmd));
    } else await run(parseRotateFlags(flags), makeDeps(cmd));
  });
  return command;
}

function singleRowFlags(flags: RotateFlags): string[] {
  return givenFlags([
    ['--current-token', flags.currentToken !== undefined],
    ['--current-token-stdin', flags.currentTokenStdin === true],
    ['--id', flags.id !== undefined],
    ['--name', flags.name !== undefined],
    ['--json', flags.json === true],
    ['--field', flags.field !== undefined],
  ]);
}

export function parseRotateFlags(given: RotateFlags): RotateOptions {
  const source = parseCurrentTokenFlags(given);
  const group = parseGroupFlags(given, source);
  const format = outputFormat(given);
  if (
    format.kind === 'field' &&
    !(ROTATION_ANSWER_FIELDS as readonly string[]).includes(format.name)
  ) {
    throw new UsageError(
      message`--field "${format.name}" is not a field of the rotation answer; nothing was sent`,
      {
        hint: `fields: ${ROTATION_ANSWER_FIELDS.join(', ')} (e.g. --field token)`,
      },
    );
  }
  return {
    ...source,
    yes: given.yes === true,
    format,
    ...(group && { group }),
  };
}

/**
 * `--id` with `--name`: Get User needs both (the name is only stored for a new group, and a new
 * group is refused below), and the token then comes from its answer, so no token flag goes with them.
 */
function parseGroupFlags(
  flags: RotateFlags,
  source: CurrentTokenSource,
): { id: string; name: string | undefined } | undefined {
  if (flags.id === undefined && flags.name === undefined) return undefined;
  if (source.currentToken !== undefined || source.currentTokenFromStdin) {
    const token = source.currentToken !== undefined ? '--current-token' : '--current-token-stdin';
    throw new UsageError(
      `use either --id/--name or ${token}, not both: with --id the token is read with get`,
    );
  }
  if (flags.id === undefined) {
    throw new UsageError("--name needs --id: rotate reads the group's token by its id", {
      hint: 'pass --id <user_group_id> --name <name> (an existing group keeps its stored name)',
    });
  }
  // A missing --name is known to be wrong only once the dialect is (runRotate): the Customer
  // API reads the group by its id alone.
  return {
    id: checkGroupText(flags.id, '--id', 'id'),
    name: flags.name === undefined ? undefined : checkGroupText(flags.name, '--name', 'name'),
  };
}

/** `--id` without `--name` where the group is read with get, which sends both. */
function idNeedsName(): UsageError {
  return new UsageError(
    "--id needs --name: rotate reads the group's token with get, which sends both",
    {
      hint: 'pass --id <user_group_id> --name <name> (an existing group keeps its stored name); the customer dialect needs no --name',
    },
  );
}

/** Rotation replaces the token at once: the dashboards that embed the old one break. */
const ROTATE_WORDS: TokenCommandWords = {
  yesRequired: {
    message: '--yes is required to rotate a token when not running interactively',
    hint: 'rotation replaces the token at once; add --yes to confirm in scripts',
  },
  missing: {
    message: 'missing --current-token: the user group token to rotate is required',
    hint: 'pass --current-token-stdin and pipe the token in, --current-token <token>, or --id <id> --name <name>',
  },
  tokenInArgv:
    'warning: --current-token puts the token in your shell history and in process lists; leave it out to type it at a masked prompt, or pipe it to --current-token-stdin',
};

export async function runRotate(opts: RotateOptions, deps: Deps): Promise<void> {
  const { io } = deps;
  const interactive = canPrompt(io, deps.settings.noInput);
  await checkTokenSource(
    { ...opts, byId: opts.group !== undefined },
    interactive,
    deps,
    ROTATE_WORDS,
  );
  const target = await resolveTarget(deps);
  const readOnly = readsWithoutCreating(target.dialect);
  if (opts.group !== undefined && opts.group.name === undefined && !readOnly) throw idNeedsName();
  const asks = interactive && !opts.yes;
  let client: ServiceClient | undefined;
  let currentToken: string;
  if (opts.group === undefined) {
    currentToken = await readCurrentToken(opts, deps, 'Current user group token:');
    deps.tracer.addSecret(currentToken);
    deps.output.maskSecret(currentToken);
    if (asks) {
      await confirmOrCancel(
        deps,
        confirmationQuestion(currentToken, onPlace(placeOf(deps, target))),
        'rotation cancelled; nothing was sent',
      );
    }
  } else {
    // By id, every question comes before anything is sent: the lookup of the token is a get,
    // which creates a group it does not know (a typo). First the typo guard, as for `get`, then
    // the rotation itself, naming the group and the service. The token is then read and
    // rotated without a second question, unless the answer cannot vouch that the group existed.
    if (asks) {
      await confirmNewId(opts.group.id, deps, { action: 'rotate the token of' });
      await confirmOrCancel(
        deps,
        groupQuestion(opts.group.id, target, deps),
        'rotation cancelled; nothing was sent',
      );
    }
    client = await deps.connect(target);
    const read = await readGroupToken(opts.group, opts.format, client, deps, target, readOnly);
    currentToken = read.token;
    deps.tracer.addSecret(currentToken);
    deps.output.maskSecret(currentToken);
    if (asks && read.created === undefined) {
      await confirmOrCancel(
        deps,
        message`The service did not say whether user group "${opts.group.id}" existed (its answer has no new_user_group): a mistyped id may have been created now. Rotate ${tokenPhrase(currentToken, 'its token')} anyway?`,
        'rotation cancelled; the token was only read, nothing was rotated',
      );
    }
  }

  client ??= await deps.connect(target);
  const inFlight = io.inFlight ?? new InFlight();
  const result = await withProgress(
    deps,
    opts.format,
    `Rotating ${tokenPhrase(currentToken, 'the token')}`,
    () =>
      inFlight.during(interruptedRotation, () =>
        withJsonErrorBody(deps.output, opts.format, () =>
          withKnownTokenHint(currentToken, target, deps, recoveryHint, () =>
            recorded(deps, target, rotateToken, currentToken, () =>
              client.rotateToken(currentToken),
            ),
          ),
        ),
      ),
  );
  if (isUnrotated(result, currentToken)) throw notRotated(result.status);
  const id = formatValue(result.userGroup.provided_id ?? '');
  try {
    if (opts.format.kind !== 'table') {
      await printMessage(deps.output, PREVIOUS_TOKEN_WARNING, 'warning');
    }
    await printResult(deps.output, {
      format: opts.format,
      body: result.body,
      record: userGroupRecord(result),
      headline: (style) => [
        style.green(message`Rotated token of user group ${id}${onPlace(placeOf(deps, target))}`),
        // Not one template: the bold styling must stay ANSI, only the token is escaped.
        `New token: ${style.bold(message`${result.userGroup.token}`)}`,
        style.yellow(PREVIOUS_TOKEN_WARNING),
      ],
    });
    // The old token is dead now: a new one that never reached its reader must be recoverable.
    await flushOutput(io.stdout);
  } catch (error) {
    if (error instanceof CiMarkerError) {
      // The rotation has happened: the new token must still be reachable, and --json gives it.
      throw new OutcomeUnknownError(
        `${error.message}; the token WAS rotated, and the new token is now only with the service`,
        {
          hint: `read it with \`${recoveryCommand(result.userGroup, deps, '--json')}\``,
          cause: error,
        },
      );
    }
    // A field the answer lacks (ApiError from --field) or stdout failing: either way the new
    // token did not reach its reader, and the old one is dead.
    if (!(error instanceof OutputError) && !(error instanceof ApiError)) throw error;
    const what =
      error instanceof OutputError ? `could not write the output: ${error.reason}` : error.message;
    throw new OutcomeUnknownError(
      `${what}; the token WAS rotated, and the new token is now only with the service`,
      { hint: recoveryHint(result.userGroup, deps, target), cause: error },
    );
  }
}

/** Asks `question`; a no ends the run with `cancelled` (exit 130). */
async function confirmOrCancel(deps: Deps, question: string, cancelled: string): Promise<void> {
  const confirmed = await deps.prompter.confirm(question, { default: false });
  if (!confirmed) throw new CancelledError(cancelled);
}

/**
 * Says what is about to happen to which token: its last 4 characters (as `--debug` shows it),
 * and that the old one stops working, which is what breaks dashboards.
 */
/** `where`: the profile and service, as headlines say it (` on prod (https://...)`, or ''). */
function confirmationQuestion(currentToken: string, where: string): string {
  return `Rotate ${tokenPhrase(currentToken, 'this token')}${where}? ${OLD_TOKEN_STOPS}`;
}

const OLD_TOKEN_STOPS =
  'The old token stops working once it is rotated: dashboards that embed it need the new one.';

/**
 * `rotate --id`, asked before anything is sent: the group, the profile and the service, since
 * the same id on another profile is another customer's group. Its token is not known yet.
 */
function groupQuestion(id: string, target: Target, deps: Deps): string {
  const profile = target.profile ?? deps.settings.profile;
  const where = message`on profile "${profile}" at ${formatBaseUrl(target.baseUrl)}`;
  return `Rotate the token of user group ${quoteVisible(id)} ${where}? ugs reads its current token, then rotates it. ${OLD_TOKEN_STOPS}`;
}

/**
 * `rotate --id`: the group's current token, read with Get User (or Get Customer where the
 * dialect has it), and recorded in the history as a get is. The service creates a group it does
 * not know, so a mistyped id gets a new group here: that one is not rotated (its token is new
 * anyway, and nobody embeds it). Where the dialect has a delete (explo), ugs deletes that new
 * group again, as `delete --id` does; elsewhere the message says it exists now.
 */
async function readGroupToken(
  group: { id: string; name: string | undefined },
  format: OutputFormat,
  client: ServiceClient,
  deps: Deps,
  target: Target,
  readOnly: boolean,
): Promise<{ token: string; created: boolean | undefined }> {
  // Where the service can read a group without creating it (the Customer API's get_customer),
  // a mistyped id is "no user group" and nothing is created.
  // runRotate refused --id without --name where the read is a get.
  const request = { name: group.name ?? '', user_group_id: group.id };
  const result = await withProgress(deps, format, message`Reading the token of ${group.id}`, () =>
    withJsonErrorBody(deps.output, format, () =>
      readOnly
        ? recorded(deps, target, getCustomer, group.id, () => readExisting(client, group.id))
        : recorded(deps, target, getUser, request, () => client.getUser(request)),
    ),
  );
  const other = otherGroupOf(result, group.id);
  if (other !== undefined) throw answeredForAnother(group.id, other, result.status);
  if (result.created === true) {
    if (deletesLookupsGroup(target.dialect)) {
      await deleteLookupsGroup(
        group.id,
        result.userGroup.token,
        client,
        deps,
        target,
        'nothing was rotated',
      );
    }
    throw new ApiError(
      message`user group "${group.id}" did not exist and was created now (the get that reads its token creates a new group); nothing was rotated, and ugs cannot remove the new group`,
      {
        ...(result.status !== undefined && { status: result.status }),
        hint: 'check the id for a typo (ugs history lists the ids used before); this service has no delete: only its owner can remove the group',
      },
    );
  }
  return { token: result.userGroup.token, created: result.created };
}

/** "the token ending in …a1b2", or `unnamed` for a token too short to show any of. */
function tokenPhrase(token: string, unnamed: string): string {
  const print = fingerprint(token);
  return print === REDACTED ? unnamed : message`the token ending in ${print}`;
}

/**
 * A "success" that hands back the token that was sent changed nothing: reporting it as rotated
 * would have a person update every dashboard to the same token and believe the old one is dead.
 * The answer is not printed, `--json` included: it holds only the token the caller already has.
 */
export function notRotated(status: number | undefined): ApiError {
  return new ApiError(
    'not rotated: the service answered success but returned the token that was sent',
    {
      ...(status !== undefined && { status }),
      hint: 'the current token still works; try again later, or ask the service owner why it did not rotate',
    },
  );
}

function interruptedRotation(): InterruptedError {
  return new InterruptedError(
    'interrupted while the rotation request was in flight: the token may or may not have been rotated',
    {
      hint: `${READ_CURRENT_TOKEN_HINT}; if the old token still works, nothing changed`,
    },
  );
}

/**
 * How to read a rotated token whose output was lost. Normally the `ugs get` command below. An id
 * that cannot be pasted as it is (a control character, U+2028, a bidi control, ...) would be
 * shown escaped, and pasting that escaped text would read, or create, another group: then no
 * command line is given, but a JSON request, whose `\uXXXX` escapes carry the id exactly (ugs
 * itself refuses such ids on input). The name only matters to a group that does not exist yet.
 */
export function recoveryHint(group: Record<string, unknown>, deps: Deps, target: Target): string {
  const id = group.provided_id;
  const problem = typeof id === 'string' ? pasteProblem(id) : undefined;
  if (typeof id !== 'string' || problem === undefined) {
    return `read it with \`${recoveryCommand(group, deps)}\``;
  }
  const body = asciiJson({ user_group_id: id, name: group.name });
  const url = endpointUrl(target.baseUrl, target.apiPath ?? USER_PATH).href;
  return (
    `the group's id ${quoteVisible(id)} ${problem}, which a terminal or shell would not paste as it is, so no \`ugs get\` command is given (pasted, it would read or create another group); ` +
    'read the token with a JSON request, whose escapes carry the id exactly: ' +
    `\`${curlJsonCommand(url, body, shellOf(deps.system.platform))}\``
  );
}

/** JSON in printable ASCII only: everything else as `\uXXXX`, so the text survives any paste. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[^\x20-\x7e]/g, unicodeEscape);
}

/**
 * `ugs get` returns an existing group as it is, token included: the way back to a rotated token
 * whose output was lost. Same profile and --base-url, so it asks the same service. Only for an
 * id and name that `pasteProblem` passes (see recoveryHint).
 */
export function recoveryCommand(
  group: Record<string, unknown>,
  deps: Deps,
  output = '--field token',
): string {
  // Quoted for the shell it is pasted into: a POSIX word keeps its quotes in PowerShell.
  const word = commandWordFor(deps.system.platform);
  const text = (value: unknown, placeholder: string) =>
    typeof value === 'string' || typeof value === 'number' ? word(String(value)) : placeholder;
  // The group exists, so `get` finds it by id whatever name is sent: characters of the name
  // that would not paste as they are (bidi controls could also reorder the line on screen)
  // are written as visible \uXXXX text instead. Nothing reads this name back: it is escaped as
  // the error messages escape it (a surrogate pair above U+FFFF), so a person sees one form.
  const name =
    typeof group.name === 'string' ? group.name.replace(UNPASTEABLE, unicodeEscape) : group.name;
  const parts = [
    'ugs get --id',
    text(group.provided_id, '<user_group_id>'),
    '--name',
    text(name, '<name>'),
    // The group was just rotated, so it exists: if the id is mangled on its way through a
    // shell, `get` would create a group and print that token as the recovered one. Fail instead.
    '--must-exist',
    output,
  ];
  if (deps.settings.profile !== 'default') parts.push('--profile', word(deps.settings.profile));
  if (deps.settings.baseUrlSource === 'flag' && deps.settings.baseUrl !== undefined) {
    parts.push('--base-url', word(deps.settings.baseUrl));
  }
  if (deps.settings.apiPathSource === 'flag' && deps.settings.apiPath !== undefined) {
    parts.push('--api-path', word(deps.settings.apiPath));
  }
  return parts.join(' ');
}
