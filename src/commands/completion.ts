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
import { Argument, type Command, type Option } from 'commander';
import { CONFIG_FILE_NAME, configDir } from '../config.js';
import type { Deps } from '../context/factory.js';
import { controlCharacters, type IO, writeLine } from '../io.js';
import { type DepsFactory, newCommand } from './shared.js';

const MAX_CONFIG_BYTES = 1024 * 1024;

const SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const;
export type Shell = (typeof SHELLS)[number];

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

// ---- the completion engine ----

export interface Candidate {
  value: string;
  description?: string;
}

export interface CompletionResult {
  candidates: Candidate[];
  /** Also offer file names (an option that takes a file). */
  files: boolean;
}

type ValueKind =
  | { kind: 'choices'; values: readonly string[] }
  | { kind: 'profiles' }
  | { kind: 'files' }
  | { kind: 'free' };

/**
 * What an option's value can be, from its definition: commander's `.choices()`, a placeholder
 * listing words (`<csv|ndjson|json>`), a file placeholder (`<file>`, `<file|->`, `<pem>`), or
 * the profile.
 */
function valueKind(option: Option): ValueKind {
  if (option.argChoices && option.argChoices.length > 0) {
    return { kind: 'choices', values: option.argChoices };
  }
  if (option.long === '--profile') return { kind: 'profiles' };
  const placeholder = /<([^>]+)>|\[([^\]]+)\]/.exec(option.flags);
  const text = placeholder?.[1] ?? placeholder?.[2] ?? '';
  const parts = text.split('|');
  if (parts.length > 1 && parts.every((part) => /^[a-z0-9][a-z0-9-]*$/.test(part))) {
    return { kind: 'choices', values: parts };
  }
  // `<file|->` too: "-" (stdin) is typed, not completed.
  if (parts.some((part) => part === 'file' || part === 'pem')) return { kind: 'files' };
  return { kind: 'free' };
}

/**
 * `words` are the command line after `ugs`, the last one being the (possibly empty) word under
 * the cursor. Candidates start with that word.
 */
export function complete(
  program: Command,
  words: readonly string[],
  listProfiles: () => string[],
): CompletionResult {
  const done = words.slice(0, -1);
  const current = words.at(-1) ?? '';
  let command = program;
  let pending: Option | undefined;
  let operands = 0;
  let helpFor = false;
  let afterDashes = false;
  const used = new Set<Option>();
  for (const word of done) {
    if (pending !== undefined) {
      pending = undefined;
      continue;
    }
    if (!afterDashes && word === '--') {
      afterDashes = true;
      continue;
    }
    if (!afterDashes && word.startsWith('-') && word !== '-') {
      const eq = word.indexOf('=');
      const name = eq < 0 ? word : word.slice(0, eq);
      // `-pwork`: a short option with its value attached.
      const short = /^-[^-]/.test(name) && name.length > 2;
      const option = findOption(command, short ? name.slice(0, 2) : name);
      if (option === undefined) continue;
      used.add(option);
      if (option.required && eq < 0 && !short) pending = option;
      continue;
    }
    if (operands === 0 && !helpFor) {
      if (word === 'help' && command === program) {
        helpFor = true;
        continue;
      }
      const sub = visibleCommands(command).find(
        (candidate) => candidate.name() === word || candidate.aliases().includes(word),
      );
      if (sub !== undefined) {
        command = sub;
        continue;
      }
    }
    operands++;
  }

  if (pending !== undefined) return values(pending, current, '', listProfiles);
  if (!afterDashes && current.startsWith('--') && current.includes('=')) {
    const eq = current.indexOf('=');
    const option = findOption(command, current.slice(0, eq));
    if (option === undefined || !option.required) return none();
    return values(option, current.slice(eq + 1), current.slice(0, eq + 1), listProfiles);
  }
  if (!afterDashes && current.startsWith('-')) {
    const candidates: Candidate[] = [];
    for (const option of optionsInScope(command)) {
      if (used.has(option) && !repeatable(option)) continue;
      for (const flag of [option.long, option.short]) {
        // A command's own option hides the program's of the same name (`--help`).
        if (flag?.startsWith(current) && !candidates.some((c) => c.value === flag)) {
          candidates.push({ value: flag, description: option.description });
        }
      }
    }
    // `-` alone lists long options once each, not both spellings of every option.
    return {
      candidates: current === '-' ? candidates.filter((c) => c.value.startsWith('--')) : candidates,
      files: false,
    };
  }
  if (helpFor) return operands === 0 ? commandsOf(program, current) : none();
  const subcommands = visibleCommands(command);
  if (subcommands.length > 0 && operands === 0) {
    const result = commandsOf(command, current);
    if (command === program)
      result.candidates.push(...matching(['help'], current, 'show help for a command'));
    return result;
  }
  const argument = command.registeredArguments[operands];
  if (argument?.argChoices) {
    return { candidates: matching(argument.argChoices, current), files: false };
  }
  return none();
}

function none(): CompletionResult {
  return { candidates: [], files: false };
}

function values(
  option: Option,
  current: string,
  prefix: string,
  listProfiles: () => string[],
): CompletionResult {
  const kind = valueKind(option);
  const words =
    kind.kind === 'choices' ? kind.values : kind.kind === 'profiles' ? listProfiles() : [];
  return {
    candidates: matching(words, current).map((c) => ({ value: prefix + c.value })),
    files: kind.kind === 'files' && prefix === '',
  };
}

function matching(words: readonly string[], current: string, description?: string): Candidate[] {
  return words
    .filter((word) => word.startsWith(current))
    .map((value) => (description === undefined ? { value } : { value, description }));
}

function commandsOf(command: Command, current: string): CompletionResult {
  return {
    candidates: visibleCommands(command)
      .filter((sub) => sub.name().startsWith(current))
      .map((sub) => ({
        value: sub.name(),
        description: sub.summary() || firstLine(sub.description()),
      })),
    files: false,
  };
}

function visibleCommands(command: Command): Command[] {
  // Commander marks `{ hidden: true }` commands with a private flag only its Help reads.
  const help = command.createHelp();
  return help.visibleCommands(command).filter((sub) => sub.name() !== 'help');
}

/** The command's own options, then those of every command above it (global options). */
function optionsInScope(command: Command): Option[] {
  const options: Option[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent) {
    const help = at.createHelp();
    options.push(...help.visibleOptions(at));
  }
  return options;
}

function findOption(command: Command, flag: string): Option | undefined {
  for (const option of optionsInScope(command)) {
    if (option.long === flag || option.short === flag) return option;
  }
  return undefined;
}

function repeatable(option: Option): boolean {
  return option.variadic || Array.isArray(option.defaultValue);
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}

/** A word a shell can take back unquoted: no spaces, quotes, controls or glob characters. */
function isCompletableWord(word: string): boolean {
  return /^[^\s'"\\$`*?[\]{}()<>|&;!#~]+$/.test(word) && !controlCharacters().test(word);
}

// ---- the scripts ----

const BASH = `# bash completion for ugs (from \`ugs completion bash\`)
_ugs() {
  local -a words=() lines=()
  local i w cur drop directive line
  # bash splits \`--format=csv\` at "=": join such words back before asking ugs.
  for ((i = 1; i <= COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    if ((\${#words[@]} > 0)) && [[ $w == = || \${COMP_WORDS[i-1]} == = ]]; then
      words[\${#words[@]}-1]+=$w
    else
      words+=("$w")
    fi
  done
  cur=\${words[\${#words[@]}-1]}
  mapfile -t lines < <("\${COMP_WORDS[0]}" completion __complete -- "\${words[@]}" 2>/dev/null)
  directive=\${lines[0]}
  COMPREPLY=()
  # Readline replaces only the text after the last "=" or ":": strip what comes before it.
  drop=\${cur%"\${cur##*[=:]}"}
  for line in "\${lines[@]:1}"; do
    line=\${line%%$'\\t'*}
    [[ $line == "$drop"* ]] && COMPREPLY+=("\${line#"$drop"}")
  done
  if [[ $directive == files ]]; then
    compopt -o filenames 2>/dev/null
    mapfile -t -O \${#COMPREPLY[@]} COMPREPLY < <(compgen -f -- "$cur")
  fi
}
complete -F _ugs ugs
`;

const ZSH = `#compdef ugs
# zsh completion for ugs (from \`ugs completion zsh\`)
_ugs() {
  local -a lines described
  local out line value
  out=$("\${words[1]}" completion __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
  lines=("\${(@f)out}")
  for line in "\${(@)lines[2,-1]}"; do
    [[ -z $line ]] && continue
    value=\${line%%$'\\t'*}
    value=\${value//:/\\\\:}
    if [[ $line == *$'\\t'* ]]; then
      described+=("$value:\${line#*$'\\t'}")
    else
      described+=("$value")
    fi
  done
  local ret=1
  (( \${#described} )) && _describe -t ugs 'ugs' described && ret=0
  [[ \${lines[1]} == files ]] && _files && ret=0
  return ret
}
if [[ \${zsh_eval_context[-1]} == loadautoload ]]; then
  _ugs "$@"
else
  compdef _ugs ugs
fi
`;

const FISH = `# fish completion for ugs (from \`ugs completion fish\`)
function __ugs_complete
    set -l args (commandline -opc) (commandline -ct)
    set -e args[1]
    set -l lines (ugs completion __complete -- $args 2>/dev/null)
    or return
    if test "$lines[1]" = files
        __fish_complete_path (commandline -ct)
    end
    printf '%s\\n' $lines[2..-1]
end
complete -c ugs -f -a '(__ugs_complete)'
`;

const POWERSHELL = `# PowerShell completion for ugs (from \`ugs completion powershell\`)
Register-ArgumentCompleter -Native -CommandName ugs -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $words = @($commandAst.CommandElements |
        Where-Object { $_.Extent.StartOffset -lt $cursorPosition } |
        Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
    $newWord = @()
    if ($wordToComplete -eq '') { $newWord = @('--new-word') }
    $lines = @(& ugs completion __complete @newWord -- @words 2>$null)
    if ($lines.Count -eq 0) { return }
    foreach ($line in ($lines | Select-Object -Skip 1)) {
        $parts = $line -split "\`t", 2
        $tip = if ($parts.Count -gt 1) { $parts[1] } else { $parts[0] }
        [System.Management.Automation.CompletionResult]::new(
            $parts[0], $parts[0], 'ParameterValue', $tip)
    }
    if ($lines[0] -eq 'files') {
        Get-ChildItem -Path "$wordToComplete*" -ErrorAction SilentlyContinue | ForEach-Object {
            [System.Management.Automation.CompletionResult]::new(
                $_.Name, $_.Name, 'ProviderItem', $_.Name)
        }
    }
}
`;

const SCRIPTS: Record<Shell, string> = {
  bash: BASH,
  zsh: ZSH,
  fish: FISH,
  powershell: POWERSHELL,
};
