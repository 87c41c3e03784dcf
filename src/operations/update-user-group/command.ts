/**
 * `ugs update --id <id>`: changes an existing user group's data. Only the vendor's APIs have an
 * update (the interface has none), so the command is offered in the explo and customer dialects
 * alone; the Customer API's own fields (`--new-id`, `--email`, `--tag`, `--level`, `--parent`)
 * in that dialect alone. Only what is given is sent: a field left out stays as it is.
 */
import type { Command } from 'commander';
import { addBulkFlags, type BulkFlags, parseBulkFlags } from '../../cli/bulk-flags.js';
import { checkOffered, offeredIn } from '../../cli/dialects.js';
import {
  addOutputFlags,
  collect,
  type DepsFactory,
  givenFlags,
  newCommand,
  outputFormat,
  withProgress,
} from '../../cli/shared.js';
import { resolveTarget } from '../../context/credentials.js';
import type { Deps } from '../../context/factory.js';
import { confirmOnProduction, onPlace, placeOf } from '../../context/production.js';
import { UsageError } from '../../errors.js';
import { recorded } from '../../history/record.js';
import type { BulkFlagSpec } from '../../input/bulk-options.js';
import { checkGroupText } from '../../input/parse.js';
import { type OutputFormat, withJsonErrorBody } from '../../output/results.js';
import { wrapText } from '../../output/text.js';
import { canPrompt } from '../../platform/io.js';
import { otherGroupOf } from '../../service/user-group.js';
import { message } from '../../text/message.js';
import {
  addDataFlags,
  answeredForAnother,
  type DataFlags,
  missingFlag,
  parseDataFlags,
  printGroup,
  promptForId,
} from '../get-user/command.js';
import { sendUpdate, type UpdateUserGroupRequest, updateUserGroup } from './operation.js';

/** What the update changes: only the fields given (the request's, without its id). */
export type UpdateChanges = Omit<UpdateUserGroupRequest, 'user_group_id'>;

export interface UpdateOptions {
  /** Undefined: asked at a terminal, a usage error elsewhere. */
  id: string | undefined;
  changes: UpdateChanges;
  /** The Customer API's own flags given, as typed (refused in another dialect). */
  customerFlags: readonly string[];
  format: OutputFormat;
  /** `--yes`: no question on a production profile (required there without a terminal). */
  yes?: boolean;
}

interface UpdateFlags extends DataFlags, BulkFlags {
  id?: string;
  name?: string;
  /** `--demo` true, `--no-demo` false, neither undefined. */
  demo?: boolean;
  newId?: string;
  email: string[];
  tag: string[];
  /** `--no-tags`: false; true (commander's default for a lone --no- flag) otherwise. */
  tags: boolean;
  level?: string;
  parent?: string;
  json?: boolean;
  field?: string;
  yes?: boolean;
}

/** Its name, as the dialect refusal says it. */
const UPDATE = 'update';

/** `update --from`: its flags' words (the spec itself, bulk.ts, loads only for --from). */
const BULK: BulkFlagSpec = {
  command: UPDATE,
  fromHelp:
    'one group per row (user_group_id, then the fields to change; an empty cell changes nothing) from a CSV, NDJSON or JSON file (- for stdin)',
  // Every row is at risk (updateUserGroup's `risk`): its record reaches a file before it is sent.
  outputRequired:
    'each row is written to the file before it is sent, so a run stopped midway can be resumed without sending a row twice',
};

export function updateCommand(makeDeps: DepsFactory, run = runUpdate): Command {
  const command = addDataFlags(
    newCommand(UPDATE, "Change an existing user group's data", [
      'ugs update --id acme --name "Acme Corp"',
      'ugs update --id acme --property plan=enterprise --mapping sales=acme_db',
      'ugs update --id acme --tag eu --tag paying      # customer dialect: replaces the tags',
      'ugs update --id acme --new-id acme-corp         # customer dialect: renames the id',
      'ugs update --from changes.csv --output updated.csv   # one group per row',
    ])
      .option('--id <user_group_id>', 'your id for the user group to change')
      .option('--name <name>', 'the new name'),
  )
    .option('--demo', 'make it a demo group (is_demo_group: true)')
    .option('--no-demo', 'make it a billed group (is_demo_group: false)')
    .option('--new-id <user_group_id>', 'rename the group to this id (customer dialect only)')
    .option(
      '--email <address>',
      'an email of the group (repeatable; customer dialect only)',
      collect,
      [],
    )
    .option(
      '--tag <tag>',
      "a tag; the tags given replace the group's (repeatable; customer dialect only)",
      collect,
      [],
    )
    .option('--no-tags', 'remove every tag of the group (customer dialect only)')
    .option('--level <name>', 'its hierarchy level (customer dialect only)')
    .option('--parent <user_group_id>', 'the id of its parent group (customer dialect only)')
    .option(
      '-y, --yes',
      'update without asking on a production profile (required there without a terminal)',
    );
  const note =
    'Only the fields given are sent; the others stay as they are. The vendor does not document whether --property/--properties merge into the stored properties or replace them (nor --mapping the mapping): give the whole object to be sure.';
  // Fitted to the help's width (main sets it, at most 80 columns), as the examples are.
  command.addHelpText('after', ({ command: shown }) => {
    const width = shown.configureHelp().helpWidth ?? 80;
    return `\n${wrapText(note, width, width)
      .map((piece) => piece.text)
      .join('\n')}\n`;
  });
  // In the vendor's dialects only (its descriptor has no interface wire): the help says so.
  addBulkFlags(addOutputFlags(offeredIn(command, updateUserGroup)), BULK).action(
    async (flags: UpdateFlags, cmd: Command) => {
      // No confirmation, as for the single update: the file is what the person asked for.
      const bulk = parseBulkFlags(flags, BULK, singleRowFlags(flags), true);
      const deps = makeDeps(cmd);
      if (bulk) {
        // The interface has no update: exit 2 before the file is read or anything is sent.
        checkOffered(deps, UPDATE, updateUserGroup);
        // The bulk engine and this operation's spec load only for --from.
        const [{ runBulk }, { spec }] = await Promise.all([
          import('../../bulk/run.js'),
          import('./bulk.js'),
        ]);
        await runBulk(
          { ...bulk, spec, production: { yes: flags.yes === true, verb: 'update' } },
          deps,
        );
      } else await run(await parseUpdateFlags(flags, deps), deps);
    },
  );
  return command;
}

/**
 * The single update's flags given with --from: refused (exit 2), since each row carries its own
 * values; a flag for every row (say `--demo`) would hide which rows it changed.
 */
function singleRowFlags(flags: UpdateFlags): string[] {
  return givenFlags([
    ['--id', flags.id !== undefined],
    ['--name', flags.name !== undefined],
    ['--mapping', flags.mapping.length > 0],
    ['--mapping-json', flags.mappingJson !== undefined],
    ['--property', flags.property.length > 0],
    ['--properties', flags.properties !== undefined],
    ['--demo', flags.demo === true],
    ['--no-demo', flags.demo === false],
    ...customerFlagPairs(flags),
    ['--json', flags.json === true],
    ['--field', flags.field !== undefined],
  ]);
}

/** The Customer API's own flags, each with whether it was given. */
function customerFlagPairs(flags: UpdateFlags): [string, boolean][] {
  return [
    ['--new-id', flags.newId !== undefined],
    ['--email', flags.email.length > 0],
    ['--tag', flags.tag.length > 0],
    ['--no-tags', !flags.tags],
    ['--level', flags.level !== undefined],
    ['--parent', flags.parent !== undefined],
  ];
}

/** Flags to options: every usage error of the flags is found here, before any request. */
export async function parseUpdateFlags(flags: UpdateFlags, deps: Deps): Promise<UpdateOptions> {
  const format = outputFormat(flags);
  for (const [flag, value, kind] of [
    ['--id', flags.id, 'id'],
    ['--name', flags.name, 'name'],
    ['--new-id', flags.newId, 'id'],
    ['--parent', flags.parent, 'id'],
    ['--level', flags.level, 'name'],
  ] as const) {
    if (value !== undefined) checkGroupText(value, flag, kind);
  }
  if (flags.tag.length > 0 && !flags.tags) {
    throw new UsageError('--tag and --no-tags cannot be given together', {
      hint: "the tags given replace the group's: --tag alone sets them, --no-tags alone clears them",
    });
  }
  const { mapping, properties } = await parseDataFlags(flags, deps);
  const changes: UpdateChanges = {
    ...(flags.name !== undefined && { name: flags.name }),
    ...(mapping !== undefined && { mapping }),
    ...(properties !== undefined && { properties }),
    ...(flags.demo !== undefined && { is_demo_group: flags.demo }),
    ...(flags.newId !== undefined && { new_provided_id: flags.newId }),
    ...(flags.email.length > 0 && { emails: flags.email }),
    ...(flags.tag.length > 0 && { group_tags: flags.tag }),
    // An empty list: the tags are replaced by none.
    ...(!flags.tags && { group_tags: [] }),
    ...(flags.level !== undefined && { hierarchy_level: flags.level }),
    ...(flags.parent !== undefined && { parent_provided_id: flags.parent }),
  };
  const customerFlags = givenFlags(customerFlagPairs(flags));
  return {
    id: flags.id,
    changes,
    customerFlags,
    format,
    ...(flags.yes === true && { yes: true }),
  };
}

export async function runUpdate(opts: UpdateOptions, deps: Deps): Promise<void> {
  // The interface has no update: exit 2 before any prompt or request.
  checkOffered(deps, UPDATE, updateUserGroup);
  if (Object.keys(opts.changes).length === 0) {
    // An update of nothing would still be a request that changes data: refused, nothing sent.
    throw new UsageError('nothing to update: give at least one field to change', {
      hint: 'pass --name, --mapping, --property, --demo/--no-demo (and in the customer dialect --new-id, --email, --tag, --no-tags, --level or --parent)',
    });
  }
  const interactive = canPrompt(deps.io, deps.settings.noInput);
  if (!interactive && opts.id === undefined) throw missingFlag('--id', 'the user group id');
  const target = await resolveTarget(deps);
  if (target.dialect !== 'customer' && opts.customerFlags.length > 0) {
    // The vendor's older API has no such fields: sent, they would be ignored, or refused.
    throw new UsageError(
      `${opts.customerFlags.join(', ')}: the ${target.dialect ?? 'interface'} dialect's update has no such field; nothing was sent`,
      { hint: 'pass --dialect customer (or log in with it) if the service speaks it' },
    );
  }
  const id = opts.id ?? (await promptForId(deps.prompter));
  const request: UpdateUserGroupRequest = { user_group_id: id, ...opts.changes };
  await confirmOnProduction(deps, target, {
    yes: opts.yes === true,
    action: message`update user group ${id}`,
  });
  const client = await deps.connect(target);
  const result = await withProgress(deps, opts.format, message`Updating ${id}`, () =>
    withJsonErrorBody(deps.output, opts.format, () =>
      recorded(deps, target, updateUserGroup, request, () => sendUpdate(client, request)),
    ),
  );
  // A rename answers the new id.
  const expected = request.new_provided_id ?? id;
  const other = otherGroupOf(result, expected);
  if (other !== undefined) throw answeredForAnother(expected, other, result.status);
  await printGroup(deps, opts.format, result, expected, undefined, onPlace(placeOf(deps, target)));
}
