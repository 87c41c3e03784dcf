/**
 * `ugs delete`: removes a user group, named by its current token (`--current-token-stdin`, `-`,
 * `--current-token`, or a masked prompt) or by its id (`--id`: its token is read first). Only the
 * vendor's APIs have a delete, so the command is offered in the explo and customer dialects alone.
 * Nothing can bring a deleted group back, so a person confirms it at a terminal (the question
 * names the group) and a script says `--yes`; without either nothing is sent.
 */
import type { Command } from 'commander';
import { addBulkFlags, type BulkFlags, parseBulkFlags } from '../../cli/bulk-flags.js';
import {
  checkTokenSource,
  parseCurrentTokenFlags,
  readCurrentToken,
  type TokenCommandWords,
} from '../../cli/current-token.js';
import { checkOffered, offeredIn } from '../../cli/dialects.js';
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
import { CancelledError, InterruptedError, OutcomeUnknownError, UsageError } from '../../errors.js';
import { recorded } from '../../history/record.js';
import { confirmNewId } from '../../history/typo.js';
import type { BulkFlagSpec } from '../../input/bulk-options.js';
import { checkGroupText, quoteVisible, shellWord } from '../../input/parse.js';
import { type OutputFormat, printResult, withJsonErrorBody } from '../../output/results.js';
import { canPrompt, InFlight } from '../../platform/io.js';
import type { ServiceClient } from '../../service/client.js';
import type { Target } from '../../service/target.js';
import { otherGroupOf } from '../../service/user-group.js';
import { message } from '../../text/message.js';
import { fingerprint, REDACTED } from '../../text/redact.js';
import { readExisting, readsWithoutCreating } from '../get-customer/operation.js';
import { answeredForAnother } from '../get-user/command.js';
import { getUser } from '../get-user/operation.js';
// Shared with `rotate --id` (and, through the registry, `whois --check --id`).
import { deleteByIdCommand, deleteLookupsGroup } from './lookup.js';
import {
  DELETE_CHECK,
  type DeleteResult,
  type DeleteUserGroupRequest,
  deleteUserGroup,
  sendDelete,
} from './operation.js';

export interface DeleteOptions {
  /** From --current-token; undefined when it is read from stdin, prompted for, or read by id. */
  currentToken: string | undefined;
  currentTokenFromStdin: boolean;
  /** `--id`: the group's token is read first (get_customer/, or get-or-create in explo). */
  id: string | undefined;
  yes: boolean;
  format: OutputFormat;
}

interface DeleteFlags extends BulkFlags {
  currentToken?: string;
  currentTokenStdin?: boolean;
  id?: string;
  yes?: boolean;
  json?: boolean;
  field?: string;
}

/** Its name, as the dialect refusal says it. */
const DELETE = 'delete';

/** `delete --from`: its flags' words (the spec itself, bulk.ts, loads only for --from). */
const BULK: BulkFlagSpec = {
  command: DELETE,
  fromHelp: 'one current_token per row from a CSV, NDJSON or JSON file (- for stdin)',
  // Every row is at risk (deleteUserGroup's `risk`): its `sending` record must be on disk before
  // it is sent. That journal is what lets --resume send no answered row again and settle one
  // whose answer was lost (a 404 to the repeat is then "deleted", not "no group has that token").
  outputRequired:
    'each delete is journaled there before it is sent, so that --resume never sends an answered row again and settles one whose answer was lost',
};

/** What `--field` can print of a delete (the service answers nothing but `success`). */
const DELETE_FIELDS = ['user_group_id', 'outcome', 'token_last4'] as const;

export function deleteCommand(makeDeps: DepsFactory, run = runDelete): Command {
  const command = newCommand(DELETE, 'Delete a user group (its token stops working at once)', [
    'ugs delete --id acme                        # reads its token, then asks',
    'printenv USER_GROUP_TOKEN | ugs delete --current-token-stdin --yes',
    'ugs delete - --yes --json < token.txt         # - reads the token from stdin',
    'ugs delete --from tokens.csv --output deleted.csv --yes   # one current_token per row',
  ])
    .argument('[token]', '- to read the token to delete from stdin (as --current-token-stdin)')
    .option(
      '--current-token <token>',
      'the token of the user group to delete, or - to read it from stdin (a token here is visible in process lists)',
    )
    .option('--current-token-stdin', 'read the token of the user group to delete from stdin')
    .option(
      '--id <user_group_id>',
      'delete the group of this id: its token is read first (explo: with get, which creates a missing group; ugs then deletes that one again and says so)',
    )
    .option('-y, --yes', 'delete without asking for confirmation (required without a terminal)');
  // In the vendor's dialects only (its descriptor has no interface wire): the help says so.
  addBulkFlags(addOutputFlags(offeredIn(command, deleteUserGroup)), BULK).action(
    async (token: string | undefined, given: DeleteFlags, cmd: Command) => {
      const flags = withTokenArgument(given, token);
      const bulk = parseBulkFlags(flags, BULK, singleRowFlags(flags), flags.yes === true);
      if (bulk === undefined) {
        await run(parseDeleteFlags(flags), makeDeps(cmd));
        return;
      }
      const deps = makeDeps(cmd);
      // The interface has no delete: exit 2 before the input is read or anything is sent.
      checkOffered(deps, DELETE, deleteUserGroup);
      // The bulk engine and this operation's spec load only for --from.
      const [{ runBulk }, { spec }] = await Promise.all([
        import('../../bulk/run.js'),
        import('./bulk.js'),
      ]);
      await runBulk({ ...bulk, spec }, deps);
    },
  );
  return command;
}

/**
 * `ugs delete -` reads the token from stdin, as `whois -` does; a token typed there instead is
 * taken as `--current-token` would take it (visible in process lists, warned about at a
 * terminal). Given with a token flag as well, it is a usage error: which one was meant?
 */
function withTokenArgument(flags: DeleteFlags, token: string | undefined): DeleteFlags {
  if (token === undefined) return flags;
  if (flags.currentToken !== undefined || flags.currentTokenStdin === true) {
    throw new UsageError(
      'give the token once: as the argument (- for stdin) or with --current-token/--current-token-stdin',
    );
  }
  return token === '-' ? { ...flags, currentTokenStdin: true } : { ...flags, currentToken: token };
}

/** The single-row flags given: none goes with --from (each row names its group). */
function singleRowFlags(flags: DeleteFlags): string[] {
  return givenFlags([
    ['--current-token', flags.currentToken !== undefined],
    ['--current-token-stdin', flags.currentTokenStdin === true],
    ['--id', flags.id !== undefined],
    ['--json', flags.json === true],
    ['--field', flags.field !== undefined],
  ]);
}

/** Flags to options: every usage error of the flags is found here, before any request. */
export function parseDeleteFlags(flags: DeleteFlags): DeleteOptions {
  const source = parseCurrentTokenFlags(flags);
  if (
    flags.id !== undefined &&
    (source.currentToken !== undefined || source.currentTokenFromStdin)
  ) {
    throw new UsageError(
      'use either --id or a token (--current-token, --current-token-stdin), not both: with --id the token is read first',
    );
  }
  const format = outputFormat(flags);
  if (format.kind === 'field' && !(DELETE_FIELDS as readonly string[]).includes(format.name)) {
    throw new UsageError(
      message`--field "${format.name}" is not a field of a delete's result; nothing was sent`,
      { hint: `fields: ${DELETE_FIELDS.join(', ')}` },
    );
  }
  return {
    ...source,
    id: flags.id === undefined ? undefined : checkGroupText(flags.id, '--id', 'id'),
    yes: flags.yes === true,
    format,
  };
}

/** A delete cannot be undone: nothing brings the group back, and its dashboards break. */
const DELETE_WORDS: TokenCommandWords = {
  yesRequired: {
    message: '--yes is required to delete a user group when not running interactively',
    hint: 'a delete cannot be undone and breaks every dashboard that embeds the token; add --yes to confirm in scripts',
  },
  missing: {
    message: 'missing the group to delete: its token or its id is required',
    hint: 'pass --current-token-stdin and pipe the token in, --current-token <token>, or --id <user_group_id>',
  },
  tokenInArgv:
    'warning: a token on the command line lands in your shell history and in process lists; leave it out to type it at a masked prompt, or pipe it in with `ugs delete -`',
};

export async function runDelete(opts: DeleteOptions, deps: Deps): Promise<void> {
  // The interface has no delete: exit 2 before any prompt or request.
  checkOffered(deps, DELETE, deleteUserGroup);
  const interactive = canPrompt(deps.io, deps.settings.noInput);
  await checkTokenSource({ ...opts, byId: opts.id !== undefined }, interactive, deps, DELETE_WORDS);
  const target = await resolveTarget(deps);
  const asks = interactive && !opts.yes;
  // By id where the only read is a get-or-create (explo), every question comes before anything
  // is sent, as for `rotate --id`: the typo guard, then the delete itself, naming the group and
  // the service; the token is then read and deleted without a second question.
  const askFirst = asks && opts.id !== undefined && !readsWithoutCreating(target.dialect);
  if (askFirst && opts.id !== undefined) {
    await confirmNewId(opts.id, deps, { action: 'delete' });
    const place = placeOf(deps, target);
    const confirmed = await deps.prompter.confirm(
      message`Delete user group "${opts.id}" on profile "${place.profile}" at ${place.baseUrl}? ugs reads its token, then deletes the group: its token stops working at once (dashboards that embed it break), and a delete cannot be undone.`,
      { default: false },
    );
    if (!confirmed) throw new CancelledError('delete cancelled; nothing was sent');
  }
  let client: ServiceClient | undefined;
  let currentToken: string;
  if (opts.id === undefined)
    currentToken = await readCurrentToken(opts, deps, 'Token of the user group to delete:');
  else {
    client = await deps.connect(target);
    currentToken = await readGroupToken(opts.id, opts.format, client, deps, target);
  }
  deps.tracer.addSecret(currentToken);
  deps.output.maskSecret(currentToken);

  if (asks && !askFirst) {
    const where = onPlace(placeOf(deps, target));
    const confirmed = await deps.prompter.confirm(
      confirmationQuestion(currentToken, opts.id, where),
      { default: false },
    );
    if (!confirmed) {
      throw new CancelledError(
        opts.id === undefined
          ? 'delete cancelled; nothing was sent'
          : 'delete cancelled; the token was only read, nothing was deleted',
      );
    }
  }

  client ??= await deps.connect(target);
  const connected = client;
  const request: DeleteUserGroupRequest = {
    current_token: currentToken,
    ...(opts.id !== undefined && { user_group_id: opts.id }),
  };
  const inFlight = deps.io.inFlight ?? new InFlight();
  const result = await withProgress(
    deps,
    opts.format,
    opts.id === undefined ? `Deleting ${tokenPhrase(currentToken)}` : message`Deleting ${opts.id}`,
    () =>
      inFlight.during(
        () => interruptedDelete(opts.id, target),
        () =>
          withJsonErrorBody(deps.output, opts.format, () =>
            lostAnswerNamed(opts.id, target, () =>
              recorded(deps, target, deleteUserGroup, request, () =>
                sendDelete(connected, request),
              ),
            ),
          ),
      ),
  );
  await printDeleted(deps, opts, result, currentToken, onPlace(placeOf(deps, target)));
}

/** What a delete printed: the service's answer for `--json`, a line and a table otherwise. */
async function printDeleted(
  deps: Deps,
  opts: DeleteOptions,
  result: DeleteResult,
  token: string,
  where: string,
): Promise<void> {
  const print = fingerprint(token);
  const last4 = print === REDACTED ? null : print.replace(/^…/, '');
  await printResult(deps.output, {
    format: opts.format,
    body: result.body,
    record: {
      name: 'delete',
      fields: { user_group_id: opts.id ?? null, outcome: 'deleted', token_last4: last4 },
      order: DELETE_FIELDS,
    },
    headline: (style) => [
      style.green(
        opts.id === undefined
          ? `Deleted the user group of ${tokenPhrase(token)}${where}`
          : message`Deleted user group ${opts.id}${where}`,
      ),
    ],
  });
}

/**
 * `delete --id`: the group's current token. Where the dialect reads a group without creating it
 * (the Customer API's get_customer/), a mistyped id is "no user group" and nothing is created.
 * The End User Group API has only get-or-create: a group it did not know is created by the
 * lookup, so nothing existed to delete; that new group is ugs's own doing, and is deleted again
 * at once (no question asked: nobody holds its token), and the run ends with exit 1 saying so.
 */
async function readGroupToken(
  id: string,
  format: OutputFormat,
  client: ServiceClient,
  deps: Deps,
  target: Target,
): Promise<string> {
  const readOnly = readsWithoutCreating(target.dialect);
  // The explo lookup sends the id as the name: an existing group keeps its own, and a group
  // created by the lookup is deleted at once, so its name is never seen.
  const lookup = { user_group_id: id, name: id };
  const result = await withProgress(deps, format, message`Reading the token of ${id}`, () =>
    withJsonErrorBody(deps.output, format, () =>
      readOnly
        ? readExisting(client, id)
        : recorded(deps, target, getUser, lookup, () => client.getUser(lookup)),
    ),
  );
  const other = otherGroupOf(result, id);
  if (other !== undefined) throw answeredForAnother(id, other, result.status);
  if (result.created === true)
    await deleteLookupsGroup(id, result.userGroup.token, client, deps, target);
  return result.userGroup.token;
}

/** A delete sent with no usable answer (exit 5): the hint names the group when it is known. */
async function lostAnswerNamed<T>(
  id: string | undefined,
  target: Target,
  send: () => Promise<T>,
): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof OutcomeUnknownError)) throw error;
    throw new OutcomeUnknownError(error.message, { hint: checkHint(id, target), cause: error });
  }
}

/** How to find out whether a delete happened: the group read by its id, or the delete again. */
function checkHint(id: string | undefined, target: Target): string {
  if (id === undefined) return DELETE_CHECK;
  if (readsWithoutCreating(target.dialect)) {
    return `check with \`ugs show --id ${shellWord(id)}\`: "no user group" means it was deleted; if it is still there, run the delete again`;
  }
  // The End User Group API has no read that creates nothing: the same delete by id tells.
  return `check with \`${deleteByIdCommand(id, target)}\`: "no user group ... existed" means it was deleted (that check creates the group and deletes it again)`;
}

/**
 * Names what is about to go: the group (by id, or by the last 4 of its token, as `--debug`
 * shows it), and what a delete does to the dashboards that embed it.
 */
function confirmationQuestion(currentToken: string, id: string | undefined, where: string): string {
  const print = fingerprint(currentToken);
  const what =
    id === undefined
      ? `the user group of ${tokenPhrase(currentToken)}`
      : `user group ${quoteVisible(id)}${print === REDACTED ? '' : message` (token ending in ${print})`}`;
  return `Delete ${what}${where}? Its token stops working at once (dashboards that embed it break), and a delete cannot be undone.`;
}

/** "the token ending in …a1b2", or "this token" for a token too short to show any of. */
function tokenPhrase(token: string): string {
  const print = fingerprint(token);
  return print === REDACTED ? 'this token' : message`the token ending in ${print}`;
}

function interruptedDelete(id: string | undefined, target: Target): InterruptedError {
  return new InterruptedError(
    'interrupted while the delete request was in flight: the user group may or may not have been deleted',
    { hint: checkHint(id, target) },
  );
}
