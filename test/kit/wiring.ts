/**
 * The real commander program (`buildProgram`), with every command's `run` replaced by one that
 * records what it receives: argv -> options, in-process, nothing spawned or sent. A command added
 * to buildProgram is covered here without a change.
 */
import type { Command } from 'commander';
import { buildProgram } from '../../src/main.js';
import { type GlobalFlags, parseSettings } from '../../src/settings.js';
import { makeDeps, makeIO } from './fakes.js';

export interface Parsed {
  command: string;
  /** What the command's `run` was given as options (`{}` for a `run` that takes only deps). */
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
  // Every name buildProgram asks for gets a recorder: the list of commands lives in main.ts only.
  const recorders = new Proxy(
    {},
    {
      get:
        (_target, command) =>
        async (...args: unknown[]): Promise<void> => {
          // run(options, deps), or run(deps) for a command without options (logout).
          const options = args.length >= 2 ? (args[0] as Record<string, unknown>) : {};
          seen.push({ command: String(command), options, flags });
        },
    },
  );
  // The settings as main would parse them: a command that reads one (doctor's profile source)
  // gets what the argv says.
  const deps = (command: Command) =>
    makeDeps({ io, settings: parseSettings(command.optsWithGlobals<GlobalFlags>(), io.env) });
  const program = buildProgram(io, deps, system, recorders);
  program.hook('preAction', (_program, action) => {
    flags = action.optsWithGlobals();
  });
  await program.parseAsync([...argv], { from: 'user' });
  const [parsed] = seen;
  if (seen.length !== 1 || parsed === undefined) throw new Error(`${seen.length} commands ran`);
  return parsed;
}
