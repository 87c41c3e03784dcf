/**
 * ugs for Windows under Wine, for the Windows lane (`npm run test:windows`, test/windows/): the
 * built bin/ugs.js under the registry's node.exe, or the single executable
 * (dist/bin/ugs-win-x64.exe). scripts/test-windows.mjs fetches them, prepares the Wine prefix and
 * names them in the environment; the sandboxes, result shape and assertions are binary.ts's.
 *
 * Two things differ from a Linux run, both Wine's, not Windows':
 * - stdin, stdout and stderr are files, never pipes: libuv under Wine cannot open a pipe it was
 *   handed (EBADF at the first use of process.stdout).
 * - test/windows/keep-alive-shim.cjs is preloaded: undici turns TCP keep-alive on before the
 *   socket has connected, and Wine then fails the connect (`connect UNKNOWN`). The shim waits for
 *   the connection first. It exists for Wine only and is never part of ugs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BIN,
  type EnvChanges,
  makeSandbox,
  ROOT,
  type RunResult,
  type Sandbox,
  sandboxEnv,
  tempDir,
} from './binary.js';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: the Windows lane runs through \`npm run test:windows\``);
  }
  return value;
}

export const wine = {
  get program() {
    return required('UGS_WINE');
  },
  get nodeExe() {
    return required('UGS_WINDOWS_NODE');
  },
  get binary() {
    return required('UGS_WINDOWS_BINARY');
  },
  get prefix() {
    return required('WINEPREFIX');
  },
};

/** Wine's drive Z: is the Unix root: the Windows path of a Unix one. */
export function windowsPath(path: string): string {
  return `Z:${path.replaceAll('/', '\\')}`;
}

export const KEEP_ALIVE_SHIM = join(ROOT, 'test', 'windows', 'keep-alive-shim.cjs');

/** Runs under Wine are slower: a Windows process start, then Node's. */
export const WINE_RUN_TIMEOUT_MS = 60_000;

export interface WineRunOptions {
  sandbox?: Sandbox;
  env?: EnvChanges;
  stdin?: string;
  /** `node`: node.exe running the built bin/ugs.js (default); `exe`: the single executable. */
  via?: 'node' | 'exe';
  /** Keep the sandbox's UGS_CONFIG_DIR out: ugs finds its Windows default (%APPDATA%). */
  defaultConfigDir?: boolean;
  timeoutMs?: number;
}

export interface WineStarted {
  child: ChildProcess;
  result: Promise<RunResult>;
}

/** Starts ugs under Wine (for a run the test kills); `runWindows` waits for it too. */
export function startWindows(args: readonly string[], options: WineRunOptions = {}): WineStarted {
  const sandbox = options.sandbox ?? makeSandbox();
  const io = tempDir('wine-io');
  const paths = {
    stdin: join(io, 'stdin'),
    stdout: join(io, 'stdout'),
    stderr: join(io, 'stderr'),
  };
  writeFileSync(paths.stdin, options.stdin ?? '');
  const fds = [
    openSync(paths.stdin, 'r'),
    openSync(paths.stdout, 'w'),
    openSync(paths.stderr, 'w'),
  ];
  const shim = windowsPath(KEEP_ALIVE_SHIM);
  const exe = options.via === 'exe';
  const argv = exe ? [wine.binary, ...args] : [wine.nodeExe, '-r', shim, windowsPath(BIN), ...args];
  const env = sandboxEnv(sandbox, {
    UGS_CONFIG_DIR: options.defaultConfigDir ? undefined : windowsPath(sandbox.configDir),
    WINEDEBUG: '-all',
    // A single executable takes no options before its arguments: Node reads NODE_OPTIONS still.
    ...(exe && { NODE_OPTIONS: `--require ${shim}` }),
    ...options.env,
  });
  const timeoutMs = options.timeoutMs ?? WINE_RUN_TIMEOUT_MS;
  const started = performance.now();
  const child = spawn(wine.program, argv, {
    cwd: sandbox.root,
    env,
    stdio: fds,
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  });
  for (const fd of fds) closeSync(fd);
  const result = (once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>).then(
    ([code, signal]) => {
      const elapsedMs = performance.now() - started;
      const stdout = readFileSync(paths.stdout, 'utf8');
      const stderr = readFileSync(paths.stderr, 'utf8');
      if (signal === 'SIGKILL' && elapsedMs >= timeoutMs) {
        throw new Error(
          `ugs ${args.join(' ')} under Wine did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        );
      }
      return { args, code, signal, stdout, stderr, elapsedMs };
    },
  );
  return { child, result };
}

/** Runs ugs for Windows under Wine in a sandbox and collects its exit and output. */
export function runWindows(
  args: readonly string[],
  options: WineRunOptions = {},
): Promise<RunResult> {
  return startWindows(args, options).result;
}

/** The Wine user's %APPDATA% on the Unix side (`C:\users\<user>\AppData\Roaming`). */
export function wineAppData(): string {
  const users = join(wine.prefix, 'drive_c', 'users');
  const user = readdirSync(users).find((name) => name !== 'Public');
  if (user === undefined) throw new Error(`no user in the Wine prefix (${users})`);
  return join(users, user, 'AppData', 'Roaming');
}
