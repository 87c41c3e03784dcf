/**
 * Every command of `ugs`, in the order `ugs --help` lists them: main builds its program from this
 * list alone, so adding a command (an operation's, from its folder under `src/operations/`, or
 * one that is not an operation) is one line here and no change to main.ts.
 */
import type { Command } from 'commander';
import type { SystemInfo } from '../deps.js';
import type { IO } from '../io.js';
import { getCommand } from '../operations/get-user/command.js';
import { rotateCommand } from '../operations/rotate-token/command.js';
import { type GlobalFlags, readPreferences } from '../settings.js';
import { completionCommand, completionDeps } from './completion.js';
import { doctorCommand } from './doctor.js';
import { loginCommand } from './login.js';
import { logoutCommand } from './logout.js';
import { serveCommand } from './serve.js';
import type { DepsFactory } from './shared.js';
import { statusCommand } from './status.js';

/** What main hands every command's builder. */
export interface CommandContext {
  io: IO;
  /** The dependencies of a command, built once the global flags are parsed. */
  makeDeps: DepsFactory;
  system: SystemInfo;
}

/** Any command's `run`; each builder takes one to replace its own (the argv tables do). */
export type AnyRun = (...args: unknown[]) => Promise<void>;

export interface CommandEntry {
  /** The command's name, as typed after `ugs`: the key of its `run` in buildProgram's `runs`. */
  name: string;
  build(context: CommandContext, run?: AnyRun): Command;
}

export const commands: readonly CommandEntry[] = [
  { name: 'login', build: (c, run) => loginCommand(c.makeDeps, run) },
  { name: 'logout', build: (c, run) => logoutCommand(c.makeDeps, run) },
  { name: 'status', build: (c, run) => statusCommand(c.makeDeps, run) },
  { name: 'get', build: (c, run) => getCommand(c.makeDeps, run) },
  { name: 'rotate', build: (c, run) => rotateCommand(c.makeDeps, run) },
  {
    name: 'completion',
    build: (c, run) => completionCommand((command) => completionDeps(c.io, c.system, command), run),
  },
  {
    name: 'doctor',
    build: (c, run) =>
      doctorCommand((command) => ({ deps: c.makeDeps(command), system: c.system }), run),
  },
  {
    name: 'serve',
    build: (c, run) =>
      serveCommand(
        (command) => ({
          deps: {
            io: c.io,
            start: async (options) =>
              (await import('../emulator/server.js')).startEmulator(options),
            waitForShutdown: c.system.waitForShutdown,
          },
          preferences: readPreferences(command.optsWithGlobals<GlobalFlags>()),
        }),
        run,
      ),
  },
];
