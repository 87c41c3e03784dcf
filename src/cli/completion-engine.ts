/**
 * What `ugs completion` runs: the engine behind `ugs completion __complete` and the shell
 * scripts. commands/completion.ts loads the values here with `import()` only.
 */
import type { Command, Option } from 'commander';

export type Shell = 'bash' | 'zsh' | 'fish' | 'powershell';

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

export const SCRIPTS: Record<Shell, string> = {
  bash: BASH,
  zsh: ZSH,
  fish: FISH,
  powershell: POWERSHELL,
};
