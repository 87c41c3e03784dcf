import { isDeepStrictEqual } from 'node:util';
import type { Command } from 'commander';
import { addBulkFlags, type BulkFlags, parseBulkFlags } from '../../cli/bulk-flags.js';
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
import { ApiError, UsageError } from '../../errors.js';
import { recorded } from '../../history/record.js';
import { confirmNewId } from '../../history/typo.js';
import type { BulkFlagSpec } from '../../input/bulk-options.js';
import {
  checkGroupText,
  collectKeyValues,
  groupTextProblem,
  type JsonObject,
  mergeObjects,
  parseJsonSource,
  parseKeyValue,
  parseStringMap,
  type StringMap,
  setOwn,
} from '../../input/parse.js';
import type { Prompter } from '../../input/prompter.js';
import { readJsonSource } from '../../input/values.js';
import { printWarningNote } from '../../output/messages.js';
import {
  formatValue,
  type OutputFormat,
  printResult,
  type ResultRecord,
  withJsonErrorBody,
} from '../../output/results.js';
import { canPrompt } from '../../platform/io.js';
import { isVendorDialect } from '../../service/dialect.js';
import { otherGroupOf, type ServiceResult, userGroupRecord } from '../../service/user-group.js';
import { message } from '../../text/message.js';
import { getCustomer, readExisting, readsWithoutCreating } from '../get-customer/operation.js';
import { type GetUserRequest, getUser, mustExistProblem } from './operation.js';

export interface GetOptions {
  id: string | undefined;
  name: string | undefined;
  mapping: StringMap | undefined;
  properties: JsonObject | undefined;
  /** `--demo`: `is_demo_group: true` (the explo dialect only). */
  demo?: boolean;
  format: OutputFormat;
  /** `--must-exist`: a group the service reports as new is a failure (exit 1). */
  mustExist?: boolean;
  /**
   * `--yes`: no question about an id that looks like a typo of a known one, nor on a production
   * profile (where it is required without a terminal).
   */
  yes?: boolean;
}

interface GetFlags extends BulkFlags, DataFlags {
  id?: string;
  name?: string;
  mustExist?: boolean;
  demo?: boolean;
  json?: boolean;
  field?: string;
  yes?: boolean;
}

/** `get --from`: its flags' words (the spec itself, bulk.ts, loads only for --from). */
const BULK: BulkFlagSpec = {
  command: 'get',
  fromHelp: 'one group per row from a CSV, NDJSON or JSON file (- for stdin)',
};

/**
 * The flags that set a group's data, shared by every command that sends it (`get` creates with
 * them, `update` changes them), so that each spells and documents them alike.
 */
export function addDataFlags(command: Command): Command {
  return command
    .option(
      '--mapping <schema_id=source>',
      'map a schema to a data source (repeatable)',
      collect,
      [],
    )
    .option('--mapping-json <json|@file|->', 'the whole mapping as a JSON object of strings')
    .option('--property <key=value>', 'set a property to a string value (repeatable)', collect, [])
    .option('--properties <json|@file|->', 'the properties as a JSON object');
}

export function getCommand(makeDeps: DepsFactory, run = runGet): Command {
  const command = addDataFlags(
    newCommand('get', 'Get a user group, creating it if its id is new', [
      'ugs get --id acme --name "Acme Corp"',
      'ugs get --id acme --name "Acme Corp" --mapping sales=acme_db --property plan=pro',
      'ugs get --id acme --name Acme --properties @props.json --field token',
      'ugs get --id acme --name Acme --json | jq .user_group.team_id',
      'ugs get --from groups.csv --output results.ndjson     # one group per row',
      'ugs get --id acme --name Acme --must-exist --field token   # exit 1 if acme was new',
    ])
      .option('--id <user_group_id>', 'your id for the user group (user_group_id)')
      .option('--name <name>', 'name of the user group'),
  )
    .option(
      '--must-exist',
      'fail (exit 1) when the service says the id is new (it has created the group by then)',
    )
    .option(
      '--demo',
      'create it as a demo group (is_demo_group: watermarked, not billed; --dialect explo only)',
    )
    .option(
      '-y, --yes',
      'do not ask whether a new id is a typo of a known one (see ugs history), nor on a production profile',
    );
  addBulkFlags(addOutputFlags(command), BULK).action(async (flags: GetFlags, cmd: Command) => {
    const bulk = parseBulkFlags(flags, BULK, singleRowFlags(flags), true);
    const deps = makeDeps(cmd);
    // The bulk engine and this operation's spec load only for --from.
    if (bulk) {
      const [{ runBulk }, { spec, mustExistSpec }] = await Promise.all([
        import('../../bulk/run.js'),
        import('./bulk.js'),
      ]);
      await runBulk(
        {
          ...bulk,
          spec: flags.mustExist ? mustExistSpec(spec) : spec,
          production: { yes: flags.yes === true, verb: 'get or create' },
        },
        deps,
      );
    } else await run(await parseGetFlags(flags, deps), deps);
  });
  return command;
}

function singleRowFlags(flags: GetFlags): string[] {
  return givenFlags([
    ['--id', flags.id !== undefined],
    ['--name', flags.name !== undefined],
    ['--mapping', flags.mapping.length > 0],
    ['--mapping-json', flags.mappingJson !== undefined],
    ['--property', flags.property.length > 0],
    ['--properties', flags.properties !== undefined],
    ['--demo', flags.demo === true],
    ['--json', flags.json === true],
    ['--field', flags.field !== undefined],
  ]);
}

/** Flags to options: every usage error is found here, before any prompt or request. */
export async function parseGetFlags(flags: GetFlags, deps: Deps): Promise<GetOptions> {
  const format = outputFormat(flags);
  for (const [flag, value, kind] of [
    ['--id', flags.id, 'id'],
    ['--name', flags.name, 'name'],
  ] as const) {
    if (value !== undefined) checkGroupText(value, flag, kind);
  }
  return {
    id: flags.id,
    name: flags.name,
    ...(await parseDataFlags(flags, deps)),
    ...(flags.demo === true && { demo: true }),
    format,
    ...(flags.mustExist === true && { mustExist: true }),
    ...(flags.yes === true && { yes: true }),
  };
}

/** The flags that give a group's data (`get` and `update` take them alike). */
export interface DataFlags {
  mapping: string[];
  mappingJson?: string;
  property: string[];
  properties?: string;
}

/**
 * `--mapping`/`--mapping-json` and `--property`/`--properties` to the mapping and properties
 * sent (undefined: none given); every usage error of them is found here, before any request.
 */
export async function parseDataFlags(
  flags: DataFlags,
  deps: Deps,
): Promise<{ mapping: StringMap | undefined; properties: JsonObject | undefined }> {
  if (flags.mappingJson === '-' && flags.properties === '-') {
    throw new UsageError('--mapping-json and --properties cannot both read stdin');
  }
  const mappingJson =
    flags.mappingJson === undefined
      ? undefined
      : parseStringMap(
          await readJsonSource(
            parseJsonSource(flags.mappingJson, '--mapping-json'),
            '--mapping-json',
            deps.io,
          ),
          '--mapping-json',
        );
  const propertiesJson =
    flags.properties === undefined
      ? undefined
      : await readJsonSource(
          parseJsonSource(flags.properties, '--properties'),
          '--properties',
          deps.io,
        );
  return {
    mapping: mergeObjects(
      mappingJson,
      collectKeyValues(flags.mapping, '--mapping'),
      '--mapping-json',
      '--mapping',
    ),
    properties: mergeObjects(
      propertiesJson,
      collectKeyValues(flags.property, '--property'),
      '--properties',
      '--property',
    ),
  };
}

export async function runGet(opts: GetOptions, deps: Deps): Promise<void> {
  const interactive = canPrompt(deps.io, deps.settings.noInput);
  if (!interactive) {
    if (opts.id === undefined) throw missingFlag('--id', 'the user group id');
    if (opts.name === undefined) throw missingFlag('--name', 'the user group name');
  }
  const target = await resolveTarget(deps);
  if (opts.demo === true && !isVendorDialect(target.dialect)) {
    // The interface has no such field: sent there, it would be ignored and the group billed.
    throw new UsageError('--demo needs the explo dialect: the interface has no is_demo_group', {
      hint: "pass --dialect explo (or log in with it) for the vendor's API, or drop --demo",
    });
  }

  let request: GetUserRequest;
  if (opts.id !== undefined && opts.name !== undefined) {
    request = {
      name: opts.name,
      user_group_id: opts.id,
      ...(opts.mapping && { mapping: opts.mapping }),
      ...(opts.properties && { properties: opts.properties }),
    };
  } else {
    request = await promptForRequest(opts, deps.prompter);
  }
  if (opts.demo === true) request.is_demo_group = true;
  // Whatever the path (flags were checked already, prompts were not), nothing invisible is sent.
  checkGroupText(request.user_group_id, 'the user group id', 'id');
  checkGroupText(request.name, 'the user group name', 'name');
  // Where it acts, said in the questions and the headline when it could be mistaken.
  const where = onPlace(placeOf(deps, target));
  // A new id that is known on another profile or looks like a known one: asked at a terminal
  // only (history/typo.ts). Its question names the place, so a yes there is the production one.
  const confirmed =
    interactive &&
    opts.yes !== true &&
    (await confirmNewId(request.user_group_id, deps, { where }));
  // `--must-exist` where the service can read a group without creating it (the Customer API's
  // get_customer): read it, so a mistyped id creates nothing and is just "no user group".
  const readOnly = opts.mustExist === true && readsWithoutCreating(target.dialect);
  const id = request.user_group_id;
  // The question comes before the request, so it cannot know whether the group exists: a get
  // that may create asks on a production profile even when the group is then only found.
  if (!readOnly && !confirmed) {
    await confirmOnProduction(deps, target, {
      yes: opts.yes === true,
      action: message`get or create user group ${id}`,
    });
  }

  const client = await deps.connect(target);
  const result = await withProgress(
    deps,
    opts.format,
    readOnly ? message`Reading ${id}` : message`Creating or finding ${id}`,
    () =>
      withJsonErrorBody(deps.output, opts.format, () =>
        readOnly
          ? recorded(deps, target, getCustomer, id, () => readExisting(client, id))
          : recorded(deps, target, getUser, request, () => client.getUser(request)),
      ),
  );
  const other = otherGroupOf(result, request.user_group_id);
  if (other !== undefined) throw answeredForAnother(request.user_group_id, other, result.status);
  if (opts.mustExist) {
    // Nothing on stdout: a script's `--field token` must not store a mistyped group's token.
    const problem = mustExistProblem(request.user_group_id, result.created);
    if (problem !== undefined) {
      throw new ApiError(problem.message, {
        hint: problem.hint,
        ...(result.status !== undefined && { status: result.status }),
      });
    }
  }
  const shownId = await printGroup(
    deps,
    opts.format,
    result,
    request.user_group_id,
    vouchedRecord(result, request, opts.format),
    where,
  );
  // A read sent no name, mapping or properties: nothing to warn about.
  if (result.created === false && opts.format.kind === 'table' && !readOnly) {
    // The service returns an existing group unchanged ("no action will be taken"); a person who
    // just typed a new name or properties would otherwise believe they were saved.
    await printWarningNote(
      deps.output,
      `user group ${shownId} already existed: the name, mapping and properties were sent, not applied (the service leaves an existing group as it is, and its answer echoes what was sent, so the table leaves them out)`,
    );
  }
}

/**
 * A group as `get` prints it: a table at a terminal (headed by whether it was created or
 * found), the server's JSON text with `--json`, one field with `--field`; its token is masked
 * for a CI runner. `show` prints what it read the same way. Returns the id as shown.
 */
export async function printGroup(
  deps: Deps,
  format: OutputFormat,
  result: ServiceResult,
  requestedId: string,
  record: ResultRecord = userGroupRecord(result),
  /** ` on prod (https://...)` where the place could be mistaken (context/production.ts). */
  where = '',
): Promise<string> {
  const shownId = formatValue(result.userGroup.provided_id ?? requestedId);
  await printResult(deps.output, {
    format,
    body: result.body,
    record,
    headline: (style) => [
      result.created === true
        ? style.green(message`Created user group ${shownId}${where}`)
        : result.created === false
          ? message`Found user group ${shownId}${where}`
          : message`User group ${shownId}${where}`,
    ],
  });
  return shownId;
}

/**
 * What the table shows of a result: for an existing group, only what the service vouches for.
 * Its answer's `name` and `properties` are the request's echo (Get User rules 1 and 3), not the
 * group's stored values, so a row `name  Cafe Brule SA` would be a lie about that group: a value
 * equal to what was sent (properties: null when none were) is left out, and the note says why.
 * A value that differs from the request is no echo: the service said it of its own, so it stays.
 * `--json` stays the server's text and `--field` the answer's field, for a script to judge.
 */
function vouchedRecord(
  result: ServiceResult,
  request: GetUserRequest,
  format: OutputFormat,
): ResultRecord {
  const record = userGroupRecord(result);
  if (result.created !== false || format.kind !== 'table') return record;
  const fields = { ...record.fields };
  if (fields.name === request.name) delete fields.name;
  if (isDeepStrictEqual(fields.properties, request.properties ?? null)) delete fields.properties;
  return { ...record, fields };
}

/**
 * Someone who left out --id or --name is at a terminal being walked through it, so the optional
 * parts are offered too; anyone who gave both on the command line is not asked anything.
 */
async function promptForRequest(opts: GetOptions, prompter: Prompter): Promise<GetUserRequest> {
  // Each answer is held to the flags' rule as it is typed (leading or trailing spaces, control
  // and invisible characters, U+FFFD from bad bytes), as the URL and token prompts are: the
  // person corrects it at the prompt instead of starting over after a usage error. The check
  // after the prompt stays, for a prompter that does not run the validator.
  const id = opts.id ?? (await promptForId(prompter));
  const name =
    opts.name ??
    checkGroupText(
      await prompter.input('User group name:', { validate: groupText('name', 'a name') }),
      'the user group name',
      'name',
    );
  const mapping =
    opts.mapping ?? (await promptPairs(prompter, 'Data source mapping', 'schema_id=source'));
  const properties = opts.properties ?? (await promptPairs(prompter, 'Property', 'key=value'));
  return {
    name,
    user_group_id: id,
    ...(mapping && { mapping }),
    ...(properties && { properties }),
  };
}

/** A prompt's check of an id or a name, as the flags' (`checkGroupText`), worded for typing. */
function groupText(kind: 'id' | 'name', label: string) {
  return (value: string): true | string => {
    if (value.trim() === '') return `${label} is required`;
    const problem = groupTextProblem(value, kind);
    return (
      problem === undefined || `the ${kind} ${problem}: type it as the service should store it`
    );
  };
}

/**
 * The id of a group, asked at a terminal: held to the flags' rule as it is typed (see
 * promptForRequest), and checked again after, for a prompter that does not run the validator.
 */
export async function promptForId(prompter: Prompter): Promise<string> {
  return checkGroupText(
    await prompter.input('User group id:', { validate: groupText('id', 'an id') }),
    'the user group id',
    'id',
  );
}

/** Asks for `k=v` pairs one at a time until an empty answer; each is checked as it is typed. */
async function promptPairs(
  prompter: Prompter,
  label: string,
  shape: string,
): Promise<StringMap | undefined> {
  const pairs: StringMap = {};
  for (;;) {
    const answer = await prompter.input(`${label} (${shape}, empty to finish):`, {
      validate: (value) => {
        if (value === '') return true;
        // Worded for the prompt: the parser's own messages name a flag nobody typed here.
        if (!value.includes('=')) return `type ${shape}, with an "=" between them`;
        const [key] = value.split('=', 1) as [string];
        if (key.trim() === '') return `the part before "=" cannot be empty`;
        return Object.hasOwn(pairs, key) ? `"${key}" is already set` : true;
      },
    });
    if (answer === '') break;
    const [key, value] = parseKeyValue(answer, shape);
    setOwn(pairs, key, value);
  }
  return Object.keys(pairs).length === 0 ? undefined : pairs;
}

/**
 * The answer is about another group than the one asked for (the interface's rule 2 says its
 * `provided_id` is the request's `user_group_id`): nothing of it is printed, `--json` and
 * `--field token` included, since a script would store another customer's token as this one's.
 */
export function answeredForAnother(
  requested: string,
  answered: string,
  status: number | undefined,
): ApiError {
  return new ApiError(
    message`the service answered for user group "${answered}", not "${requested}": its answer is not used`,
    {
      ...(status !== undefined && { status }),
      hint: "the answer's provided_id must be the user_group_id sent; report this to the service owner",
    },
  );
}

export function missingFlag(flag: string, what: string): UsageError {
  return new UsageError(`missing ${flag}: ${what} is required`, {
    hint: `pass ${flag} <value> (prompts are off: no terminal, CI is set, or --no-input)`,
  });
}
