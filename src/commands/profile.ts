import type { Command } from 'commander';
import { type DepsFactory, newCommand } from '../cli/shared.js';
import type { Profile } from '../config/config.js';
import type { Deps } from '../context/factory.js';
import { defaultCannotBeProduction, productionNotDefault } from '../context/production.js';
import { checkProfileName, defaultProfile, unknownProfileError } from '../context/profiles.js';
import { CancelledError, UsageError } from '../errors.js';
import { redactUrl, shellWord } from '../input/parse.js';
import { printLine, printMessage } from '../output/messages.js';
import { printJson } from '../output/results.js';
import { padColumns } from '../output/text.js';
import { canPrompt, writeLine } from '../platform/io.js';
import { type Dialect, isVendorDialect, profileDialect } from '../service/dialect.js';
import { loginCommandFor, USER_PATH } from '../service/target.js';
import { message } from '../text/message.js';
import { removeEmbedSecret, removeFromStore } from './logout.js';

/** What one `ugs profile <action>` asks for. */
export type ProfileOptions =
  | { action: 'list'; json: boolean }
  | { action: 'use'; name: string }
  | { action: 'remove'; name: string; yes: boolean }
  | { action: 'protect' | 'unprotect'; name: string };

/** One saved profile as `profile list` shows it (`--json` prints an array of these). */
export interface ProfileEntry {
  name: string;
  /** Used when neither `--profile` nor UGS_PROFILE names one. */
  default: boolean;
  baseUrl: string | null;
  /** The wire format its requests use (`ugs login --dialect`): `interface` unless saved. */
  dialect: Dialect;
  /** The endpoint's path; `null` with the explo dialect, whose paths are the vendor's own. */
  apiPath: string | null;
  /** Where its API token is kept; null: it has none (logged out). */
  tokenLocation: 'config file' | 'credential store' | null;
  /** Marked production: commands that change data ask first; never the default. */
  production: boolean;
}

/**
 * `ugs profile list|use|remove`. The name is the subcommand's argument, never `--profile`, so
 * the subcommands take any profile name given globally without checking it: UGS_PROFILE naming a
 * removed profile must not stop `ugs profile use` from repairing the choice.
 */
export function profileCommand(makeDeps: DepsFactory, run = runProfile): Command {
  const deps = (cmd: Command) => makeDeps(cmd, { acceptsUnknownProfile: true });
  const command = newCommand(
    'profile',
    'List the saved profiles, choose the default, mark production, remove one',
    [
      'ugs profile list                   # the default is marked with *',
      'ugs profile use staging            # the default from now on',
      'ugs profile protect prod           # ask before every change on prod',
      'ugs profile remove old-tenant --yes',
    ],
  );
  command.addCommand(
    newCommand(
      'list',
      'List the saved profiles (name, base URL, dialect, API path, where the token is)',
      ['ugs profile list', 'ugs profile list --json'],
    )
      .option('--json', 'print the profiles as a JSON array on stdout')
      .action(async (flags: { json?: boolean }, cmd: Command) => {
        await run({ action: 'list', json: flags.json === true }, deps(cmd));
      }),
  );
  command.addCommand(
    newCommand('use', 'Make a saved profile the default (used when --profile is not given)', [
      'ugs profile use staging',
    ])
      .argument('<name>', 'a saved profile')
      .action(async (name: string, _flags: unknown, cmd: Command) => {
        await run({ action: 'use', name }, deps(cmd));
      }),
  );
  for (const [action, summary, example] of [
    [
      'protect',
      'Mark a profile as production: every command that changes data asks first, and it is never the default',
      'ugs profile protect prod',
    ],
    ['unprotect', 'Remove the production mark of a profile', 'ugs profile unprotect prod'],
  ] as const) {
    command.addCommand(
      newCommand(action, summary, [example])
        .argument('<name>', 'a saved profile')
        .action(async (name: string, _flags: unknown, cmd: Command) => {
          await run({ action, name }, deps(cmd));
        }),
    );
  }
  command.addCommand(
    newCommand('remove', 'Remove a saved profile: its API token and its settings', [
      'ugs profile remove staging                   # asks to confirm',
      'ugs profile remove staging --yes',
    ])
      .argument('<name>', 'a saved profile')
      .option('-y, --yes', 'remove without asking for confirmation (required without a terminal)')
      .action(async (name: string, flags: { yes?: boolean }, cmd: Command) => {
        await run({ action: 'remove', name, yes: flags.yes === true }, deps(cmd));
      }),
  );
  return command;
}

export async function runProfile(opts: ProfileOptions, deps: Deps): Promise<void> {
  switch (opts.action) {
    case 'list':
      return listProfiles(opts.json, deps);
    case 'use':
      return useProfile(opts.name, deps);
    case 'remove':
      return removeProfile(opts.name, opts.yes, deps);
    case 'protect':
    case 'unprotect':
      return protectProfile(opts.name, opts.action === 'protect', deps);
  }
}

export function collectProfiles(deps: Deps): ProfileEntry[] {
  const chosen = defaultProfile(deps).name;
  return Object.entries(deps.config.listProfiles()).map(([name, profile]) => {
    const dialect = profileDialect(profile);
    return {
      name,
      default: name === chosen,
      // Shown as status and doctor show it: a password or query values in it are masked.
      baseUrl: profile.baseUrl ? redactUrl(profile.baseUrl) : null,
      dialect,
      apiPath: isVendorDialect(dialect) ? null : profile.apiPath || USER_PATH,
      tokenLocation: tokenLocationOf(profile),
      production: profile.production === true,
    };
  });
}

function tokenLocationOf(profile: Profile): ProfileEntry['tokenLocation'] {
  if (profile.tokenStore === 'keyring') return 'credential store';
  return profile.apiToken ? 'config file' : null;
}

async function listProfiles(json: boolean, deps: Deps): Promise<void> {
  const entries = collectProfiles(deps);
  if (json) {
    printJson(deps.output, entries);
  } else if (entries.length > 0) {
    // The mark's column only when a profile has it: most configs have none.
    const marked = entries.some((entry) => entry.production);
    const rows = entries.map((entry) => [
      entry.default ? '*' : '',
      entry.name,
      entry.baseUrl ?? '(none)',
      entry.dialect,
      entry.apiPath ?? "(the vendor's)",
      entry.tokenLocation ?? '(none)',
      ...(marked ? [entry.production ? 'production' : ''] : []),
    ]);
    // Padded at a terminal and in a pipe alike: `--json` is the form for scripts. padColumns
    // escapes the names and URLs read from the config file.
    writeLine(
      deps.output.stdout,
      padColumns([
        [
          'default',
          'name',
          'base URL',
          'dialect',
          'API path',
          'token',
          ...(marked ? ['mark'] : []),
        ],
        ...rows,
      ]).join('\n'),
    );
  }
  if (entries.length === 0) {
    printLine(deps.output, message`No saved profiles in ${deps.config.path}; run \`ugs login\``);
  }
  const env = deps.io.env.UGS_PROFILE;
  if (env !== undefined && env !== '') {
    printLine(
      deps.output,
      message`note: UGS_PROFILE=${env} is set: commands without --profile use that profile, not the default marked`,
    );
  }
  if (deps.io.env.UGS_API_TOKEN) {
    printLine(deps.output, "note: UGS_API_TOKEN is set and overrides every profile's token");
  }
}

/** The profile named by `use` or `remove` must be saved; the error says which ones are. */
function requireSaved(
  name: string,
  deps: Deps,
  verb: 'use' | 'remove' | 'protect' | 'unprotect',
  profiles: Readonly<Record<string, Profile>> = deps.config.listProfiles(),
): Profile {
  if (Object.hasOwn(profiles, name)) return profiles[name] as Profile;
  throw unknownProfileError(name, Object.keys(profiles), `ugs profile ${verb}`, {
    create: verb === 'use' ? loginCommandFor(name) : undefined,
  });
}

async function useProfile(name: string, deps: Deps): Promise<void> {
  // The default is used without naming it, but hints name it (`--profile` when another is used).
  checkProfileName(name, 'ugs profile use');
  // `default` is the built-in choice: going back to it needs no saved profile of that name.
  // Checked first for a quick answer, and again under the config lock, just before the write:
  // a `profile remove` of the same name at the same moment must not leave a default that names
  // no profile (remove clears the default only when it is already that name).
  const check =
    name === 'default'
      ? undefined
      : (profiles: Readonly<Record<string, Profile>>) => {
          // A production profile is named each time (`-p prod`): as the default, every command
          // typed in any terminal would act on it without saying so.
          if (requireSaved(name, deps, 'use', profiles).production === true) {
            throw productionNotDefault(name);
          }
        };
  check?.(deps.config.listProfiles());
  await deps.config.setDefaultProfile(name, check);
  await printMessage(
    deps.output,
    message`Default profile is now "${name}": commands without --profile use it (saved to ${deps.config.path})`,
    'success',
  );
  const env = deps.io.env.UGS_PROFILE;
  if (env !== undefined && env !== '' && env !== name) {
    await printMessage(
      deps.output,
      message`warning: UGS_PROFILE=${env} is set and overrides the default in this environment; unset it to use "${name}"`,
      'warning',
    );
  }
}

/**
 * `profile protect|unprotect`. The profile named `default` cannot be marked: it is the one every
 * command without `--profile` uses. Marking the chosen default drops that choice in the same write.
 */
async function protectProfile(name: string, production: boolean, deps: Deps): Promise<void> {
  const verb = production ? 'protect' : 'unprotect';
  const profile = requireSaved(name, deps, verb);
  if (production && name === 'default') throw defaultCannotBeProduction();
  const { wasDefault } = await deps.config.protectProfile(name, production);
  const already = (profile.production === true) === production ? ' (it already was)' : '';
  await printMessage(
    deps.output,
    production
      ? message`Profile "${name}" is marked production${already}: commands that change data on it ask first (--yes without a terminal)`
      : message`Profile "${name}" is no longer marked production${already}`,
    'success',
  );
  if (wasDefault) {
    printLine(
      deps.output,
      message`note: it was the default profile; commands without --profile use "default" again: pass -p ${shellWord(name)} to use it`,
    );
  }
}

/**
 * Its token first (from the credential store, when it is there: a store out of reach changes
 * nothing), then the profile and, if it was the default, that choice, in one write.
 */
async function removeProfile(name: string, yes: boolean, deps: Deps): Promise<void> {
  const profile = requireSaved(name, deps, 'remove');
  const tokenLocation = tokenLocationOf(profile);
  if (!yes) {
    if (!canPrompt(deps.io, deps.settings.noInput)) {
      throw new UsageError('--yes is required to remove a profile when not running interactively', {
        hint: `removing deletes its API token and settings; add --yes: ugs profile remove ${shellWord(name)} --yes`,
      });
    }
    const where = profile.baseUrl ? message`, ${redactUrl(profile.baseUrl)}` : '';
    const token = tokenLocation === null ? 'no API token' : `its API token in the ${tokenLocation}`;
    const confirmed = await deps.prompter.confirm(
      message`Remove profile "${name}"${where} (${token})?`,
      { default: false },
    );
    if (!confirmed) throw new CancelledError('nothing was removed');
  }
  if (profile.tokenStore === 'keyring') await removeFromStore(deps, name);
  // Its embed secret too, wherever it is kept: a secret left in the store would be forgotten.
  if (profile.embedSecretStore === 'keyring') await removeEmbedSecret(deps, name);
  const { wasDefault } = await deps.config.removeProfile(name);
  await printMessage(
    deps.output,
    message`Removed profile "${name}" (its settings${tokenLocation === 'config file' ? ' and API token' : ''}) from ${deps.config.path}`,
    'success',
  );
  if (wasDefault) {
    printLine(
      deps.output,
      'note: it was the default profile; commands without --profile use "default" again (`ugs profile use <name>` chooses another)',
    );
  }
}
