/**
 * `ugs show --id <id>`: reads one user group as it is, and never creates one. Only the Customer
 * API has such a read (`get` creates a missing group), so the command is offered in that dialect
 * alone. It prints what it read as `get` prints a group (table, `--json`, `--field`).
 */
import type { Command } from 'commander';
import { checkOffered, offeredIn } from '../../cli/dialects.js';
import {
  addOutputFlags,
  type DepsFactory,
  newCommand,
  outputFormat,
  withProgress,
} from '../../cli/shared.js';
import { resolveTarget } from '../../context/credentials.js';
import type { Deps } from '../../context/factory.js';
import { onPlace, placeOf } from '../../context/production.js';
import { recorded } from '../../history/record.js';
import { checkGroupText } from '../../input/parse.js';
import { type OutputFormat, withJsonErrorBody } from '../../output/results.js';
import { canPrompt } from '../../platform/io.js';
import { otherGroupOf } from '../../service/user-group.js';
import { message } from '../../text/message.js';
import { answeredForAnother, missingFlag, printGroup, promptForId } from '../get-user/command.js';
import { getCustomer, readExisting } from './operation.js';

export interface ShowOptions {
  /** Undefined: asked at a terminal, a usage error elsewhere. */
  id: string | undefined;
  format: OutputFormat;
}

interface ShowFlags {
  id?: string;
  json?: boolean;
  field?: string;
}

/** Its name, as the dialect refusal says it. */
const SHOW = 'show';

export function showCommand(makeDeps: DepsFactory, run = runShow): Command {
  const command = newCommand(SHOW, 'Show a user group as it is, without creating it', [
    'ugs show --id acme',
    'ugs show --id acme --field token',
    'ugs show --id acme --json | jq .customer',
  ]).option('--id <user_group_id>', 'your id for the user group (provided_id)');
  // In the Customer API only (its descriptor has no other wire): the help says so.
  addOutputFlags(offeredIn(command, getCustomer)).action(async (flags: ShowFlags, cmd: Command) => {
    await run(parseShowFlags(flags), makeDeps(cmd));
  });
  return command;
}

/** Flags to options: every usage error of the flags is found here, before any request. */
export function parseShowFlags(flags: ShowFlags): ShowOptions {
  const format = outputFormat(flags);
  return {
    id: flags.id === undefined ? undefined : checkGroupText(flags.id, '--id', 'id'),
    format,
  };
}

export async function runShow(opts: ShowOptions, deps: Deps): Promise<void> {
  // Another dialect has no such read: exit 2 before any prompt or request.
  checkOffered(deps, SHOW, getCustomer);
  const interactive = canPrompt(deps.io, deps.settings.noInput);
  if (!interactive && opts.id === undefined) throw missingFlag('--id', 'the user group id');
  const target = await resolveTarget(deps);
  const id = opts.id ?? (await promptForId(deps.prompter));
  const client = await deps.connect(target);
  // A 404 is "no user group" (exit 1): the read creates nothing, so there is nothing to undo.
  const result = await withProgress(deps, opts.format, message`Reading ${id}`, () =>
    withJsonErrorBody(deps.output, opts.format, () =>
      recorded(deps, target, getCustomer, id, () => readExisting(client, id)),
    ),
  );
  const other = otherGroupOf(result, id);
  if (other !== undefined) throw answeredForAnother(id, other, result.status);
  await printGroup(deps, opts.format, result, id, undefined, onPlace(placeOf(deps, target)));
}
