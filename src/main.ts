/**
 * The only place that knows about the process: it parses argv with commander, builds the
 * dependencies, runs one command, and turns whatever went wrong into one `error:`/`hint:` pair and
 * one exit code. Nothing below it prints errors or ends the process.
 */
import { Command, CommanderError, type Option } from 'commander';
import { formatExamples } from './cli/help.js';
import type { DepsFactory } from './cli/shared.js';
import { createDeps } from './commands/default-factory.js';
import { buildCommands, changesData, type Runs, suggestedWords } from './commands/index.js';
import type { SystemInfo } from './context/factory.js';
import { checkProfileSaved } from './context/profiles.js';
import { type GlobalFlags, readPreferences } from './context/settings.js';
import { ExitCode, InterruptedError, UgsError, UsageError } from './errors.js';
import { guardCiOutput, underCiRunner } from './output/ci.js';
import { printError } from './output/messages.js';
import { createOutput, type Output } from './output/output.js';
import {
  escapeControls,
  flushOutput,
  InFlight,
  type IO,
  stdoutColumns,
  watchOutput,
} from './platform/io.js';
import { VERSION } from './platform/version.js';
import { message } from './text/message.js';
import { type Candidate, orList, suggestNames } from './text/suggest.js';
import type { HttpClient } from './transport/http.js';

export async function main(argv: readonly string[], io: IO, system: SystemInfo): Promise<number> {
  // Write errors on stdout become one `error:` line (or the rotation's recovery hint), never an
  // unhandled 'error' event with a stack.
  watchOutput(io.stdout);
  // Under a CI runner no text from outside (a server, a file, argv, the environment) may give
  // the runner a command: every line written is guarded here, ugs's own commands go past it.
  if (underCiRunner(io.env)) {
    guardCiOutput(io.stdout);
    guardCiOutput(io.stderr);
  }
  const inFlight = io.inFlight ?? new InFlight();
  // Not a spread, which would read `io.stdin`: bin/ugs.js makes process.stdin on first read only.
  const commandIO: IO = Object.defineProperties({} as IO, {
    ...Object.getOwnPropertyDescriptors(io),
    inFlight: { value: inFlight, enumerable: true, writable: true, configurable: true },
  });
  const clients: HttpClient[] = [];
  // Built once per run: with the command's factory, or for the error report when none was built.
  let output: Output | undefined;
  const makeDeps: DepsFactory = (command, options = {}) => {
    const flags = command.optsWithGlobals<GlobalFlags>();
    output ??= createOutput(commandIO, readPreferences(flags));
    const deps = createDeps(commandIO, flags, system, clients, output);
    // Checked now, before the command does anything: an invalid global option is the first error,
    // then a profile that is not saved (see DepsFactory).
    if (options.checkSettings !== false) {
      void deps.settings;
      if (options.acceptsUnknownProfile !== true) checkProfileSaved(deps);
    }
    return deps;
  };
  const program = buildProgram(commandIO, makeDeps);
  // An error before the settings were built (a usage error, a bad --timeout) is still reported
  // as --debug and --no-color ask: commander has parsed every global flag it got to by then.
  const errorOutput = (): Output =>
    output ?? createOutput(io, readPreferences(program.opts<GlobalFlags>()));
  // A signal during a command ends it at once with 130 and one line saying what it cut short.
  // `serve` handles its own signals (a clean shutdown is its normal end), so it is not armed.
  let unsubscribe: (() => void) | undefined;
  let interrupted = false;
  const interruption = new Promise<never>((_, reject) => {
    program.hook('preAction', (_program, action) => {
      if (action.name() === 'serve' || io.onSignal === undefined) return;
      unsubscribe = io.onSignal((signal) => {
        if (inFlight.takeSignal(signal)) return;
        interrupted = true;
        reject(inFlight.current() ?? new InterruptedError(`interrupted by ${signal}`));
      });
    });
  });
  interruption.catch(() => {});
  try {
    if (argv.length === 0) {
      // outputHelp, not helpInformation: only it adds the addHelpText sections (the examples).
      program.outputHelp();
    } else {
      const args = helpArgs(argv, program);
      await Promise.race([program.parseAsync(args, { from: 'user' }), interruption]);
    }
    await flushOutput(io.stdout);
    return ExitCode.Ok;
  } catch (error) {
    const code = await reportError(error, errorOutput());
    if (code === ExitCode.Ok) {
      // Help or version: their text must have been written too.
      try {
        await flushOutput(io.stdout);
      } catch (flushError) {
        return reportError(flushError, errorOutput());
      }
    }
    return code;
  } finally {
    unsubscribe?.();
    // After an interrupt a request may still be open: closing would wait for it.
    const closing = Promise.allSettled(clients.map((client) => client.close()));
    if (!interrupted) await closing;
  }
}

export type { Runs } from './commands/index.js';
// For bin/ugs.js, the one place that subscribes the real process's signals.
export { stopSignalHandlers } from './platform/signals.js';

/**
 * `runs` replaces commands' `run` by name (the argv tables record what each receives); a command
 * it has no entry for gets its real `run`.
 */
export function buildProgram(
  io: IO,
  makeDeps: DepsFactory,
  runs: Readonly<Partial<Runs>> = {},
): Command {
  const helpWidth = Math.min(HELP_COLUMNS, stdoutColumns(io));
  const program = new Command('ugs')
    .description('Provision user groups and rotate their embed tokens on the User Group Service')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    // The environment variables are applied in parseSettings (settings.ts), not by commander.
    .option(
      '-p, --profile <name>',
      'profile in the config file (default: default, env: UGS_PROFILE)',
    )
    .option('--base-url <url>', 'address of the service (env: UGS_BASE_URL)')
    .option(
      '--api-path <path>',
      'path of the API under the base URL, e.g. /api/user/ (default: /api/user, env: UGS_API_PATH)',
    )
    .option(
      '--dialect <interface|explo|customer>',
      "the service's wire format: interface, explo for the vendor's hosted API, or customer for its Customer API (env: UGS_DIALECT)",
    )
    .option('--timeout <seconds>', 'give up on a request after this long', '30')
    .option('--no-input', 'never prompt; fail on a missing value instead')
    .option('-q, --quiet', 'no notes, warnings or progress on stderr (errors still)')
    .option('--debug', 'trace HTTP requests and responses to stderr (tokens shown by their last 4)')
    .option('--no-color', 'no colour in output (also NO_COLOR=1)')
    .option('--insecure-http', 'allow http:// to hosts other than this machine')
    .option('--ca-file <pem>', 'trust this CA certificate for the service (env: UGS_CA_FILE)')
    .option(
      '--history-file <path>',
      'token history file, e.g. one shared by a team (env: UGS_HISTORY_FILE)',
    )
    .option('--no-history', 'keep no token history for this run (also UGS_NO_HISTORY=1)')
    .addHelpText(
      'after',
      `
${formatExamples(
  [
    'ugs login',
    'ugs get --id acme --name "Acme Corp" --property plan=pro',
    'ugs rotate --current-token-stdin --yes --field token < old-token.txt',
  ],
  helpWidth,
)}

Environment: UGS_API_TOKEN (API token), UGS_BASE_URL, UGS_API_PATH, UGS_PROFILE,
  UGS_CONFIG_DIR, UGS_CA_FILE, UGS_DIALECT, UGS_HISTORY_FILE, UGS_NO_HISTORY.
Exit codes: 0 ok, 1 service error, 2 usage, 3 auth, 4 network,
  5 rotation outcome unknown, 130 interrupted.
`,
    )
    .exitOverride()
    .showSuggestionAfterError()
    // Every subcommand's help lists the global options it accepts, in their own section, and
    // fits an 80-column terminal (commander would use the whole width of a wide one).
    .configureHelp({ showGlobalOptions: true, helpWidth, optionDescription })
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      // Commander quotes argv in its errors (`unknown option '...'`): escape all but line ends.
      writeErr: (text) => io.stderr.write(text.split('\n').map(escapeControls).join('\n')),
      // Its errors are reported by reportError, as `error:` and `hint:` like every other.
      outputError: () => {},
    });
  // The commands come from one registry (commands/index.ts): adding one changes nothing here.
  for (const command of buildCommands(makeDeps, runs)) {
    // addCommand (unlike .command()) inherits nothing: without this, a subcommand's usage error
    // calls process.exit(1) itself instead of reaching reportError (exit 2, with a hint).
    program.addCommand(inheritSettings(command, program));
  }
  refuseRepeatedOptions(program);
  suggestCommands(program);
  return program;
}

/**
 * An unknown command (`ugs create`, `ugs profile lst`) is a usage error whose hint guesses with
 * suggest.ts rather than commander: words an operation names lead to its command (words for
 * creating to `get`, which creates a missing group), and a command that changes data is never guessed when one that only reads is as close.
 * Commander emits `command:*` instead of its own error when someone listens.
 */
function suggestCommands(command: Command): void {
  if (command.commands.length === 0) return;
  const path = (sub: Command) =>
    command.parent === null ? sub.name() : `${command.name()} ${sub.name()}`;
  command.on('command:*', (operands: string[]) => {
    const word = operands[0] ?? '';
    const candidates: Candidate[] = command
      .createHelp()
      .visibleCommands(command)
      .map((sub) => ({ name: sub.name(), changesData: changesData.has(path(sub)) }));
    // At the top level only: `ugs profile new` is not a request for `get`.
    if (command.parent === null) {
      for (const { command: suggest, words } of suggestedWords) {
        for (const name of words) candidates.push({ name, suggest });
      }
    }
    const guesses = suggestNames(word, candidates);
    const help =
      command.parent === null
        ? 'see `ugs --help` or `ugs <command> --help`'
        : `see \`ugs ${command.name()} --help\``;
    // Said when the guess came from a word for the command (`create`), which it does not look like.
    const notes = suggestedWords
      .filter((s) => guesses.includes(s.command) && suggestNames(word, s.words).length > 0)
      .map((s) => ` (${s.note})`)
      .join('');
    throw new UsageError(message`unknown command '${word}'`, {
      hint: guesses.length === 0 ? help : `did you mean ${orList(guesses)}?${notes} ${help}`,
    });
  });
  for (const sub of command.commands) suggestCommands(sub);
}

/** `command` and its own subcommands (`profile list`) take the program's settings. */
function inheritSettings(command: Command, parent: Command): Command {
  command.copyInheritedSettings(parent);
  suggestOtherCase(command);
  for (const sub of command.commands) inheritSettings(sub, command);
  return command;
}

/**
 * `--ID` or `--Name` (caps lock, a habit from another tool) is an unknown option, and commander's
 * suggestion misses it: its similarity measure counts every changed letter of a short name. So
 * an option that is a known one in another case is suggested here, in commander's own form (the
 * hint reads it from there, see usageReport). And `--current-tokn=<token>` is reported by its
 * name only: commander quoted the whole word, value and all, into stderr (a CI log).
 * `unknownOption` is commander's (14) method for this error; the cli tests pin its message.
 */
function suggestOtherCase(command: Command): void {
  const target = command as unknown as { unknownOption(flag: string): void };
  const commanders = target.unknownOption;
  target.unknownOption = function (this: Command, given: string): void {
    // `--current-tokn=<token>`: the value may be a secret, and the name alone is what is unknown.
    const flag = given.split('=')[0] ?? given;
    const wanted = flag.toLowerCase();
    for (let at: Command | null = this; at !== null; at = at.parent) {
      const known = at.options.find((option) => option.long?.toLowerCase() === wanted)?.long;
      if (known !== undefined && known !== flag) {
        this.error(`error: unknown option '${flag}'\n(Did you mean ${known}?)`, {
          code: 'commander.unknownOption',
        });
      }
    }
    commanders.call(this, flag);
  };
}

/**
 * Commander lets the last of `--id a --id b` win, so a script that builds its argv from two
 * sources silently acts on one of them. Every option that takes one value, on every command and
 * on the program (including options added later), may be given once; repeatable ones (their
 * default is a list, as with `--mapping`) are left alone. Commander emits `option:<name>` for
 * every occurrence, whatever the spelling (`--id=a`, `-p a`, `-pa`).
 */
function refuseRepeatedOptions(command: Command): void {
  for (const option of command.options as readonly Option[]) {
    const takesValue = option.required || option.optional;
    const repeatable = option.variadic || Array.isArray(option.defaultValue);
    if (!takesValue || repeatable) continue;
    let seen = 0;
    command.on(`option:${option.name()}`, () => {
      seen++;
      if (seen > 1) {
        const flag = option.long ?? option.short ?? option.name();
        // The values are not shown: this one may be a token (--current-token).
        throw new UsageError(`${flag} was given more than once; it takes a single value`, {
          hint: `pass ${flag} once (only options marked "repeatable" in --help may be repeated)`,
        });
      }
    });
  }
  for (const sub of command.commands) refuseRepeatedOptions(sub);
}

async function reportError(error: unknown, out: Output): Promise<number> {
  if (error instanceof CommanderError) {
    // Commander has already printed help or the version when asked for them.
    if (
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      error.code === 'commander.help'
    ) {
      return ExitCode.Ok;
    }
    await printError(out, { ...usageReport(error.message), error });
    return ExitCode.Usage;
  }
  if (error instanceof UgsError) {
    await printError(out, { message: error.message, hint: error.hint, error });
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  await printError(out, {
    message: `unexpected failure: ${message}`,
    hint: 'run again with --debug and report the output',
    error,
  });
  return ExitCode.Api;
}

/** Help is laid out for this many columns at most (fewer on a narrower terminal). */
const HELP_COLUMNS = 80;

/**
 * Commander's usage errors (`error: unknown command 'gte'` and a `(Did you mean get?)` line) in
 * ugs's own form: the message, and a hint that leads with the suggestion.
 */
function usageReport(commanderMessage: string): { message: string; hint: string } {
  // The argv quoted in the message may hold a newline itself: only the last line is commander's.
  const suggested = /\n\(Did you mean (.+)\?\)$/.exec(commanderMessage);
  const text = suggested ? commanderMessage.slice(0, suggested.index) : commanderMessage;
  const suggestion = suggested?.[1];
  const help = 'see `ugs --help` or `ugs <command> --help`';
  return {
    message: message`${text.replace(/^error: /, '')}`,
    hint: suggestion === undefined ? help : message`did you mean ${suggestion}? ${help}`,
  };
}

/**
 * An option's help text with its default as a person reads it: bare (`30`, `127.0.0.1`, not
 * `"30"`), and no `[]` for a repeatable option that simply starts empty.
 */
function optionDescription(option: Option): string {
  const value: unknown = option.defaultValue;
  const shown = Array.isArray(value) && value.length === 0 ? undefined : value;
  const extra: string[] = [];
  if (shown !== undefined && (option.required || option.optional)) {
    const text =
      option.defaultValueDescription ?? (typeof shown === 'string' ? shown : JSON.stringify(shown));
    extra.push(`default: ${text}`);
  }
  if (option.envVar !== undefined) extra.push(`env: ${option.envVar}`);
  if (extra.length === 0) return option.description;
  return `${option.description} (${extra.join(', ')})`.trim();
}

/**
 * Commander shows the program's help for `ugs --help get` and for `ugs help nosuch` (exit 0).
 * A help flag before a command moves after it (`ugs get --help`), and help for an unknown
 * command becomes that command, so that it is reported as unknown, with a suggestion.
 */
function helpArgs(argv: readonly string[], program: Command): string[] {
  const args = [...argv];
  const takesValue = new Set<string>();
  for (const option of program.options as readonly Option[]) {
    if (!(option.required || option.optional)) continue;
    if (option.short) takesValue.add(option.short);
    if (option.long) takesValue.add(option.long);
  }
  const words: number[] = [];
  for (let i = 0; i < args.length && words.length < 2; i++) {
    const arg = args[i] as string;
    if (arg === '--') break;
    if (arg.startsWith('-')) {
      if (takesValue.has(arg)) i++;
      continue;
    }
    words.push(i);
  }
  const known = (name: string) => program.commands.some((c) => c.name() === name);
  const [first, second] = words.map((i) => args[i] as string);
  if (first === 'help' && second !== undefined && !known(second)) {
    args.splice(words[0] as number, 1);
    return args;
  }
  const firstAt = words[0];
  if (firstAt === undefined || first === 'help') return args;
  const helpAt = args.findIndex((arg, i) => i < firstAt && (arg === '--help' || arg === '-h'));
  if (helpAt < 0) return args;
  args.splice(helpAt, 1);
  if (known(first as string)) args.push('--help');
  return args;
}
