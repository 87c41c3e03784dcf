/**
 * The real commander program (`buildProgram`), with every command's `run` replaced by one that
 * records what it receives: argv -> options, in-process, nothing spawned or sent. A command added
 * to buildProgram is covered here without a change.
 */
import { type GlobalFlags, parseSettings, readPreferences } from '../../src/context/settings.js';
import { buildProgram, type Runs } from '../../src/main.js';
import { makeDeps, makeIO } from './fakes.js';

/** What a command's `run` takes as options: `{}` for a `run` that takes only deps (logout). */
export type RunOptions<K extends keyof Runs> =
  Parameters<Runs[K]> extends [infer Options, unknown] ? Options : Record<string, never>;

/**
 * A row of an argv table: the argv, the command it runs, and what that command's `run` receives
 * (fields whose value is undefined may be left out), checked by the typechecker against the
 * command's own options type.
 */
export type ArgvRow = {
  [K in keyof Runs]: readonly [
    argv: readonly string[],
    command: K,
    options: Partial<RunOptions<K>>,
  ];
}[keyof Runs];

/** What one command's `run` received, typed from that command. */
export type Parsed = {
  [K in keyof Runs]: {
    command: K;
    options: RunOptions<K>;
    /** Every option commander parsed for the command, the program's own (global) ones included. */
    flags: Record<string, unknown>;
  };
}[keyof Runs];

/** Parses `argv` as `ugs` would and returns what the command's `run` received. */
export async function parseArgv(argv: readonly string[], stdinText?: string): Promise<Parsed> {
  const io = makeIO(stdinText === undefined ? {} : { stdinText });
  const seen: Parsed[] = [];
  let flags: Record<string, unknown> = {};
  // A recorder in place of each command's `run`, typed as that `run`.
  function recorder<K extends keyof Runs>(command: K): Runs[K] {
    const record = async (...args: Parameters<Runs[K]>): Promise<void> => {
      // run(options, deps), or run(deps) for a command without options (logout).
      const options = args.length >= 2 ? args[0] : {};
      seen.push({ command, options, flags } as Parsed);
    };
    return record as Runs[K];
  }
  // Every name buildProgram asks for gets a recorder: the list of commands lives in main.ts only.
  const recorders = new Proxy({} as Runs, {
    get: (_target, command) => recorder(command as keyof Runs),
  });
  // The settings as main would parse them: a command that reads one (doctor's profile source)
  // gets what the argv says; one that does not check them (serve) only the preferences.
  const deps: Parameters<typeof buildProgram>[1] = (command, options = {}) => {
    const globals = command.optsWithGlobals<GlobalFlags>();
    const settings =
      options.checkSettings === false ? readPreferences(globals) : parseSettings(globals, io.env);
    return makeDeps({ io, settings });
  };
  const program = buildProgram(io, deps, recorders);
  program.hook('preAction', (_program, action) => {
    flags = action.optsWithGlobals();
  });
  await program.parseAsync([...argv], { from: 'user' });
  const [parsed] = seen;
  if (seen.length !== 1 || parsed === undefined) throw new Error(`${seen.length} commands ran`);
  return parsed;
}
