/**
 * `ugs completion <shell>` prints a script that the shell sources once; on every Tab the script
 * asks `ugs completion __complete -- <words>` what fits. The answer is computed from the live
 * commander program, so a new command or option completes without touching this file, and the
 * shell scripts stay a few lines each (the same design as cobra's and gh's completion).
 *
 * `__complete` reads nothing but the config file (for profile names, parsed directly, no Conf),
 * never prompts and never touches the network: it runs on every keypress of Tab.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Argument, type Command } from 'commander';
import type { Shell } from '../cli/completion-engine.js';
import { type DepsFactory, newCommand } from '../cli/shared.js';
import { CONFIG_FILE_NAME, configDir } from '../config/config.js';
import type { Deps } from '../context/factory.js';
import { controlCharacters, type IO, writeLine } from '../platform/io.js';

const MAX_CONFIG_BYTES = 1024 * 1024;

const SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const satisfies readonly Shell[];

export interface CompletionDeps {
  io: IO;
  /** The root program: what is completed. */
  program: Command;
  /** Profile names in the config file; empty when there is none or it cannot be read. */
  listProfiles(): string[];
}

export type CompletionOptions =
  | { kind: 'script'; shell: Shell }
  | { kind: 'complete'; words: string[] };

const INSTALL_HELP = `Install (then open a new shell):
  bash        echo 'source <(ugs completion bash)' >> ~/.bashrc
  zsh         echo 'source <(ugs completion zsh)' >> ~/.zshrc
              (after compinit; or save the output as _ugs in a directory
              of your $fpath)
  fish        ugs completion fish > ~/.config/fish/completions/ugs.fish
  powershell  ugs completion powershell >> $PROFILE

Completes commands, options, --format and shell names, and the profile
names in your config file. The script asks ugs on each Tab: nothing is sent
over the network and nothing prompts.
`;

export function completionCommand(makeDeps: DepsFactory, run = runCompletion): Command {
  // A Tab never fails on an invalid global option: the settings are not read.
  const depsFor = (cmd: Command) => completionDeps(makeDeps(cmd, { checkSettings: false }), cmd);
  const command = newCommand('completion', 'Print a shell completion script', [
    'source <(ugs completion bash)',
    'ugs completion fish > ~/.config/fish/completions/ugs.fish',
  ])
    .usage('<bash|zsh|fish|powershell>')
    .addArgument(new Argument('<shell>', 'the shell to print a script for').choices(SHELLS))
    .addHelpText('after', INSTALL_HELP)
    .action(async (shell: Shell, _flags: unknown, cmd: Command) => {
      await run({ kind: 'script', shell }, depsFor(cmd));
    });
  // What the scripts call: hidden, and never a usage error (a Tab must not print one).
  command
    .command('__complete', { hidden: true })
    .argument('[words...]')
    // Windows PowerShell drops an empty argument: it says "the cursor starts a new word" so.
    .option('--new-word', 'complete a new, empty word after the given ones')
    .allowUnknownOption()
    .helpOption(false)
    // Created before main copies its settings to `completion`: without this a commander error
    // here would end the process itself.
    .exitOverride()
    .action(async (words: string[], flags: { newWord?: boolean }, cmd: Command) => {
      await run(
        { kind: 'complete', words: flags.newWord === true ? [...words, ''] : words },
        depsFor(cmd),
      );
    });
  return command;
}

export async function runCompletion(opts: CompletionOptions, deps: CompletionDeps): Promise<void> {
  // The scripts and the engine load only here: the build makes them a chunk of their own, which
  // no other command parses or runs.
  const { complete, SCRIPTS } = await import('../cli/completion-engine.js');
  if (opts.kind === 'script') {
    deps.io.stdout.write(SCRIPTS[opts.shell]);
    return;
  }
  const result = complete(deps.program, opts.words, deps.listProfiles);
  writeLine(deps.io.stdout, result.files ? 'files' : 'nofiles');
  for (const candidate of result.candidates) {
    writeLine(
      deps.io.stdout,
      candidate.description ? `${candidate.value}\t${candidate.description}` : candidate.value,
    );
  }
}

/** What completion takes from the factory: the program is the root of the command that runs. */
export function completionDeps(
  { io, system }: Pick<Deps, 'io' | 'system'>,
  command: Command,
): CompletionDeps {
  let program = command;
  while (program.parent) program = program.parent;
  return {
    io,
    program,
    listProfiles: () =>
      readProfileNames(join(configDir(io.env, system.platform, system.homedir), CONFIG_FILE_NAME)),
  };
}

/**
 * Profile names, or none: a missing, unreadable or corrupt file is for `ugs doctor` to explain,
 * not for a Tab to complain about. A symlink is not followed, as the config store never does.
 */
export function readProfileNames(path: string): string[] {
  let text: string;
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      // A device or a huge file there is not a config a Tab should wait for.
      const stat = fstatSync(fd);
      if (!stat.isFile() || stat.size > MAX_CONFIG_BYTES) return [];
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
    const data: unknown = JSON.parse(text);
    if (typeof data !== 'object' || data === null) return [];
    const profiles: unknown = (data as Record<string, unknown>).profiles;
    if (typeof profiles !== 'object' || profiles === null || Array.isArray(profiles)) return [];
    return Object.keys(profiles).filter(isCompletableWord).sort();
  } catch {
    return [];
  }
}

/** A word a shell can take back unquoted: no spaces, quotes, controls or glob characters. */
function isCompletableWord(word: string): boolean {
  return /^[^\s'"\\$`*?[\]{}()<>|&;!#~]+$/.test(word) && !controlCharacters().test(word);
}

export type { Candidate, CompletionResult, Shell } from '../cli/completion-engine.js';
