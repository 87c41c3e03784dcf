import { Command } from 'commander';
import type { Deps } from '../context/factory.js';
import { UsageError } from '../errors.js';
import type { OutputFormat } from '../output/results.js';
import { formatExamples } from './help.js';

/**
 * Main hands each command a way to build the run's factory once the global flags are parsed.
 * The global options are checked then, so an invalid one is the error reported before anything
 * else; a command that never reads them (`serve`, `completion`) passes `checkSettings: false`, so
 * that an invalid UGS_API_PATH, say, does not stop it.
 *
 * A profile named by `--profile`, UGS_PROFILE or `ugs profile use` must be saved (exit 2 with
 * "did you mean ...?", src/context/profiles.ts), except for a command that passes
 * `acceptsUnknownProfile: true`: `login`, which creates it, `profile` (its subcommands name their
 * own), and `history` and `whois`, which read the token history, where profiles no longer saved
 * (or saved on another machine sharing the file) appear.
 */
export type DepsFactory = (
  command: Command,
  options?: { checkSettings?: boolean; acceptsUnknownProfile?: boolean },
) => Deps;

/**
 * The names of the flags given, in the order listed: `[['--json', flags.json === true], ...]`.
 * For the checks that name what was combined ("--from cannot be combined with --id, --json").
 */
export function givenFlags(flags: readonly (readonly [string, boolean])[]): string[] {
  return flags.filter(([, given]) => given).map(([flag]) => flag);
}

/** For repeatable flags such as `--mapping a=b --mapping c=d`. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function newCommand(name: string, summary: string, examples: readonly string[]): Command {
  return new Command(name).description(summary).addHelpText('after', ({ command }) => {
    // main sets the width for every command (at most 80 columns).
    return `\n${formatExamples(examples, command.configureHelp().helpWidth)}\n`;
  });
}

/** `--json` and `--field`, shared by every command that prints a user group. */
export function addOutputFlags(command: Command): Command {
  return command
    .option('--json', 'print the response body as JSON on stdout')
    .option('--field <name>', 'print only this field of user_group (e.g. token)');
}

/**
 * A service call as a person at a terminal sees it: a spinner saying `text` when it is slow.
 * Machine output (`--json`, `--field`) gets none: it is read by scripts, not watched.
 */
export function withProgress<T>(
  deps: Deps,
  format: OutputFormat,
  text: string,
  work: () => Promise<T>,
): Promise<T> {
  return format.kind === 'table' ? deps.progress.during(text, work) : work();
}

/** `--json` and `--field` are two ways of asking for machine output; both at once is a mistake. */
export function outputFormat(flags: { json?: boolean; field?: string }): OutputFormat {
  if (flags.json && flags.field !== undefined) {
    throw new UsageError('--json and --field cannot be used together');
  }
  if (flags.json) return { kind: 'json' };
  if (flags.field !== undefined) {
    if (flags.field === '') throw new UsageError('--field needs a field name, e.g. --field token');
    return { kind: 'field', name: flags.field };
  }
  return { kind: 'table' };
}
