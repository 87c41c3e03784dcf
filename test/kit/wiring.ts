/**
 * The real commander program (`buildProgram`), with each command's `run` replaced by one that
 * records the options it receives: argv -> options, in-process, nothing spawned or sent.
 * buildProgram builds its commands with their real `run`; each is swapped for the same builder
 * given a recording `run` (every builder takes `run` as its second argument for this).
 */
import type { Command } from 'commander';
import { completionCommand } from '../../src/commands/completion.js';
import { doctorCommand } from '../../src/commands/doctor.js';
import { getCommand } from '../../src/commands/get.js';
import { loginCommand } from '../../src/commands/login.js';
import { logoutCommand } from '../../src/commands/logout.js';
import { rotateCommand } from '../../src/commands/rotate.js';
import { serveCommand } from '../../src/commands/serve.js';
import { statusCommand } from '../../src/commands/status.js';
import { buildProgram } from '../../src/main.js';
import { type GlobalFlags, readPreferences } from '../../src/settings.js';
import { makeDeps, makeIO } from './fakes.js';

export interface Parsed {
  command: string;
  /** What the command's `run` was given (logout's `run` takes no options: `{}`). */
  options: Record<string, unknown>;
  /** Every option commander parsed for the command, the program's own (global) ones included. */
  flags: Record<string, unknown>;
}

const system = {
  platform: 'linux' as const,
  homedir: '/nonexistent-home',
  nodeVersion: 'v20.0.0',
  waitForShutdown: () => new Promise<string>(() => {}),
};

/** Parses `argv` as `ugs` would and returns what the command's `run` received. */
export async function parseArgv(argv: readonly string[], stdinText?: string): Promise<Parsed> {
  const io = makeIO(stdinText === undefined ? {} : { stdinText });
  const seen: Parsed[] = [];
  let flags: Record<string, unknown> = {};
  const deps = (command: Command) => {
    flags = command.optsWithGlobals();
    return makeDeps({ io });
  };
  const record =
    (command: string) =>
    async (options: unknown = {}): Promise<void> => {
      seen.push({ command, options: options as Record<string, unknown>, flags });
    };
  const program = buildProgram(io, deps, system);
  const recording = [
    loginCommand(deps, record('login')),
    logoutCommand(deps, () => record('logout')({})),
    statusCommand(deps, record('status')),
    getCommand(deps, record('get')),
    rotateCommand(deps, record('rotate')),
    completionCommand(() => ({ io, program, listProfiles: () => [] }), record('completion')),
    doctorCommand((command) => ({ deps: deps(command), system }), record('doctor')),
    serveCommand((command) => {
      flags = command.optsWithGlobals();
      return {
        deps: { io, start: () => Promise.reject(new Error('not started')), ...system },
        preferences: readPreferences(command.optsWithGlobals<GlobalFlags>()),
      };
    }, record('serve')),
  ];
  const commands = program.commands as Command[];
  for (const replacement of recording) {
    const at = commands.findIndex((command) => command.name() === replacement.name());
    if (at < 0) throw new Error(`buildProgram has no ${replacement.name()} command`);
    commands.splice(at, 1);
    program.addCommand(replacement.copyInheritedSettings(program));
  }
  if (commands.length !== recording.length) {
    throw new Error(
      `buildProgram has commands this helper does not know: ${commands.map((c) => c.name())}`,
    );
  }
  await program.parseAsync([...argv], { from: 'user' });
  const [parsed] = seen;
  if (seen.length !== 1 || parsed === undefined) throw new Error(`${seen.length} commands ran`);
  return parsed;
}
