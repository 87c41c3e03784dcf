/**
 * Every command of `ugs`, in the order `ugs --help` lists them: main builds its program from this
 * list alone. An operation's command is registered with its operation (`./operations.ts`, one
 * line per operation folder); a command that is not an operation is one line here. main.ts
 * never changes. Each builder takes the one factory (`DepsFactory`) and, for tests, a
 * replacement of its `run`.
 */
import type { Command } from 'commander';
import type { DepsFactory } from '../cli/shared.js';
import { completionCommand } from './completion.js';
import { doctorCommand } from './doctor.js';
import { historyCommand } from './history.js';
import { loginCommand } from './login.js';
import { logoutCommand } from './logout.js';
import { commandsChangingData, operationCommands, suggestedWords } from './operations.js';
import { profileCommand } from './profile.js';
import { serveCommand } from './serve.js';
import { statusCommand } from './status.js';
import { whoisCommand } from './whois.js';

export const commands = {
  login: loginCommand,
  logout: logoutCommand,
  status: statusCommand,
  profile: profileCommand,
  // The operations' commands, from their registry: ./operations.ts.
  ...operationCommands,
  // The token history (src/history): read only, any -p (a profile only the history knows).
  history: historyCommand,
  whois: whoisCommand,
  completion: completionCommand,
  doctor: doctorCommand,
  serve: serveCommand,
} as const;

/**
 * Commands (by their path: `profile remove`) that change something, on the service or in the
 * saved configuration: those listed here, and the operations' commands whose operation says it
 * changes data. A mistyped command is never answered with one of them when a command that
 * changes nothing is as close (main.ts, suggest.ts).
 */
export const changesData: ReadonlySet<string> = new Set([
  'login',
  'logout',
  ...commandsChangingData,
  'profile use',
  'profile remove',
]);

/**
 * Words that are no command but lead to one (an operation's `suggestedFor`: words for "make a
 * new group" lead to the command that creates a missing group), with the note said along.
 */
export { suggestedWords };

/** A command's `run`, as its builder (`getCommand(makeDeps, run)`) takes it. */
type RunOf<Builder extends (...args: never[]) => Command> = NonNullable<Parameters<Builder>[1]>;

/** Every command's `run`, typed from the commands: what a test may put in their place. */
export type Runs = { [Name in keyof typeof commands]: RunOf<(typeof commands)[Name]> };

/** The commands, built with `makeDeps`, each with its `run` from `runs` when it has one. */
export function buildCommands(makeDeps: DepsFactory, runs: Readonly<Partial<Runs>>): Command[] {
  return (Object.keys(commands) as (keyof Runs)[]).map((name) => {
    // One builder per name, and `runs[name]` is that builder's run (Runs is built from them):
    // TypeScript cannot follow the pairing through a loop over the keys.
    const build = commands[name] as (makeDeps: DepsFactory, run?: Runs[typeof name]) => Command;
    return build(makeDeps, runs[name]);
  });
}
