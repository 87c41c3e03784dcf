/**
 * Spawning in a sandbox, shared by the harnesses that run the built binary (test/cli/run.ts,
 * test/e2e/harness.ts, test/hardening/harness.ts): the environment a child gets (the outer one
 * minus anything that could change how ugs behaves, pointed at the sandbox's HOME and config
 * directory) and the collection of a child's output under a deadline.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/**
 * Never inherited from the outer environment: the real user's UGS_* settings, CI, colour, HOME
 * and XDG_CONFIG_HOME, Node options, extra CA certificates and proxies.
 */
export const STRIPPED_ENV: readonly RegExp[] = [
  /^UGS_/,
  /^CI$/,
  /^NO_COLOR$/,
  /^FORCE_COLOR$/,
  /^HOME$/,
  /^XDG_CONFIG_HOME$/,
  /^NODE_OPTIONS$/,
  /^NODE_EXTRA_CA_CERTS$/,
  /^(https?|no|all)_proxy$/i,
];

/** Variables to set; `undefined` removes one. */
export type EnvChanges = Record<string, string | undefined>;

export interface SandboxDirs {
  home: string;
  /** Becomes UGS_CONFIG_DIR. */
  configDir: string;
}

/**
 * `process.env` without the STRIPPED_ENV variables, with HOME, XDG_CONFIG_HOME and
 * UGS_CONFIG_DIR pointing into the sandbox, and then `extra` applied.
 */
export function sandboxEnv(dirs: SandboxDirs, extra: EnvChanges = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || STRIPPED_ENV.some((pattern) => pattern.test(key))) continue;
    env[key] = value;
  }
  env.HOME = dirs.home;
  env.XDG_CONFIG_HOME = join(dirs.home, '.config');
  env.UGS_CONFIG_DIR = dirs.configDir;
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

export interface Output {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CollectOptions {
  /** Names the child in the timeout error, e.g. `ugs get --id acme`. */
  label: string;
  /** The child is killed with SIGKILL after this long, and the promise rejects. */
  timeoutMs: number;
  /** What follows the label in the timeout error. Default: `did not finish within N ms and was killed`. */
  timeoutMessage?: (timeoutMs: number) => string;
  /** Written to stdin when stdin is a pipe, which is then closed. Default: nothing. */
  input?: string;
}

/**
 * Collects a child's stdout and stderr as UTF-8 text until it closes. Rejects when it cannot be
 * spawned, or when it has not finished within `timeoutMs` (it is then killed with SIGKILL, and the
 * error names the label and holds all the output so far).
 */
export function collectOutput(child: ChildProcess, options: CollectOptions): Promise<Output> {
  const { label, timeoutMs } = options;
  const timeoutMessage =
    options.timeoutMessage ?? ((ms: number) => `did not finish within ${ms} ms and was killed`);
  return new Promise((resolvePromise, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(
          new Error(`${label} ${timeoutMessage(timeoutMs)}\nstdout: ${stdout}\nstderr: ${stderr}`),
        );
        return;
      }
      resolvePromise({ code, signal, stdout, stderr });
    });
    if (child.stdin) {
      // The child may exit before reading stdin (e.g. a usage error): that is not a test failure.
      child.stdin.on('error', () => {});
      child.stdin.end(options.input ?? '');
    }
  });
}
