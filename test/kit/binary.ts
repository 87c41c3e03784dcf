/**
 * The built binary (`node bin/ugs.js`) as a child process, in a sandbox: its own config directory
 * and HOME, and the outer environment without anything that could change how ugs behaves.
 * Temporary directories of a test file live under one root, removed once after the file.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
// strip-ansi: the maintained pattern for every escape sequence (CSI, OSC, two-byte escapes).
import stripAnsi from 'strip-ansi';
import { afterAll, expect, onTestFinished } from 'vitest';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'ugs.js');
export const DIST_MAIN = join(ROOT, 'dist', 'main.cjs');
export const PACKAGE_VERSION: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  .version as string;

/** Every run is killed (and fails) after this long: "never hangs" is part of what is tested. */
export const RUN_TIMEOUT_MS = 15_000;

export const IS_ROOT = process.getuid?.() === 0;

/** A line of a JavaScript stack trace. */
export const STACK_LINE = /^\s*at\s/m;

const ESC = '\u001b';
/** Any ANSI escape sequence (CSI, OSC or a two-byte escape): for "none at all". */
export const ANSI = new RegExp(ESC);
/** A CSI sequence (colour, bold, cursor): for "coloured". */
export const CSI = new RegExp(`${ESC}\\[`);

export { stripAnsi };

// ---- sandboxes ----

let fileRoot: string | undefined;
afterAll(() => {
  if (fileRoot !== undefined) rmSync(fileRoot, { recursive: true, force: true });
  fileRoot = undefined;
});

/** A fresh directory, removed after the test file. */
export function tempDir(prefix = 'dir'): string {
  fileRoot ??= mkdtempSync(join(tmpdir(), 'ugs-test-'));
  return mkdtempSync(join(fileRoot, `${prefix}-`));
}

export interface Sandbox {
  root: string;
  home: string;
  /** UGS_CONFIG_DIR; not created: the binary has to create it. */
  configDir: string;
  configPath: string;
}

export function makeSandbox(): Sandbox {
  const root = tempDir('sandbox');
  const home = join(root, 'home');
  mkdirSync(home);
  const configDir = join(root, 'config');
  return { root, home, configDir, configPath: join(configDir, 'config.json') };
}

/** Writes a config file directly (mode 0600 in a 0700 directory), for tests that need one. */
export function writeConfig(sandbox: Sandbox, data: unknown): void {
  mkdirSync(sandbox.configDir, { recursive: true, mode: 0o700 });
  writeFileSync(sandbox.configPath, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
}

export function readConfig(sandbox: Sandbox): unknown {
  return JSON.parse(readFileSync(sandbox.configPath, 'utf8'));
}

/**
 * Never inherited from the outer environment: the real user's UGS_* settings, CI (and the
 * runners' GITHUB_ACTIONS/TF_BUILD, which add workflow commands to stderr), colour, TERM,
 * HOME and XDG_CONFIG_HOME, Node options and compile cache settings, extra CA certificates and
 * proxies.
 */
const STRIPPED_ENV: readonly RegExp[] = [
  /^UGS_/,
  /^CI$/,
  /^GITHUB_ACTIONS$/,
  /^TF_BUILD$/,
  /^NO_COLOR$/,
  /^FORCE_COLOR$/,
  /^TERM$/,
  /^HOME$/,
  /^XDG_CONFIG_HOME$/,
  /^NODE_OPTIONS$/,
  /^NODE_(DISABLE_)?COMPILE_CACHE$/,
  /^NODE_EXTRA_CA_CERTS$/,
  /^(https?|no|all)_proxy$/i,
];

/** Variables to set; `undefined` removes one. */
export type EnvChanges = Record<string, string | undefined>;

/** The stripped outer environment, HOME and UGS_CONFIG_DIR in the sandbox, then `changes`. */
export function sandboxEnv(
  dirs: Pick<Sandbox, 'home' | 'configDir'>,
  changes: EnvChanges = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || STRIPPED_ENV.some((pattern) => pattern.test(key))) continue;
    env[key] = value;
  }
  env.HOME = dirs.home;
  env.XDG_CONFIG_HOME = join(dirs.home, '.config');
  // bin/ugs.js keeps compiled code there (src/platform/compile-cache.ts), never in the real user's cache.
  env.XDG_CACHE_HOME = join(dirs.home, '.cache');
  env.UGS_CONFIG_DIR = dirs.configDir;
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

// ---- running the binary ----

export interface RunOptions {
  /** Default: a fresh one. */
  sandbox?: Sandbox;
  env?: EnvChanges;
  /** Text for stdin (a pipe, closed after it); `null` gives /dev/null. Default: an empty pipe. */
  stdin?: string | null;
  timeoutMs?: number;
  /** Run as this user (root only); the tool is copied where that user can read it if needed. */
  uid?: number;
  gid?: number;
  /** Default: the sandbox's root. */
  cwd?: string;
  /** A file descriptor for stdout (e.g. /dev/full) instead of a pipe. */
  stdout?: number;
  /** Run this ugs (the single executable, an npm-installed `ugs`) instead of `node bin/ugs.js`. */
  executable?: string;
}

export interface RunResult {
  args: readonly string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

/** `node bin/ugs.js`, quoted for a shell script (pipelines, argv bytes that are not UTF-8). */
export const UGS_SHELL = [process.execPath, BIN].map((part) => `'${part}'`).join(' ');

export interface Started {
  child: ChildProcess;
  /** Settles when the child has closed; rejects when it outlived its timeout (then killed). */
  result: Promise<RunResult>;
}

/** Starts `node bin/ugs.js ...args` (for tests that signal it); `runUgs` waits for it too. */
export function startUgs(args: readonly string[], options: RunOptions = {}): Started {
  const label = `ugs ${args.join(' ')}`;
  if (options.executable !== undefined) {
    return startIn(options.executable, args, args, label, ROOT, options);
  }
  const install = options.uid === undefined ? ROOT : installReadableBy(options.uid);
  const bin = join(install, 'bin', 'ugs.js');
  return startIn(process.execPath, [bin, ...args], args, label, install, options);
}

/** Runs `node bin/ugs.js ...args` and collects its exit and output. */
export async function runUgs(
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const install = options.uid === undefined ? ROOT : installReadableBy(options.uid);
  // `npm run build` empties dist/ before writing it again: when another build runs meanwhile, a
  // module can be missing for a moment. Such a run loaded nothing and sent nothing, so it is
  // repeated (briefly); a dist/ that stays broken still fails the test.
  const missingDist = `Cannot find module '${join(install, 'dist')}/`;
  for (let attempt = 0; ; attempt++) {
    const result = await startUgs(args, options).result;
    if (attempt >= 10 || result.code === 0 || !result.stderr.includes(missingDist)) return result;
    await sleep(300);
  }
}

/** Runs a bash script in the sandbox's environment; UGS_SHELL names the binary in it. */
export function runShell(script: string, options: RunOptions = {}): Promise<RunResult> {
  return startIn('bash', ['-c', script], [script], script, ROOT, options).result;
}

function startIn(
  program: string,
  argv: readonly string[],
  args: readonly string[],
  label: string,
  install: string,
  options: RunOptions,
): Started {
  const sandbox = options.sandbox ?? makeSandbox();
  const timeoutMs = options.timeoutMs ?? RUN_TIMEOUT_MS;
  const started = performance.now();
  const child = spawn(program, argv, {
    // Another user may not enter the sandbox: it then runs where its copy of the tool is.
    cwd: options.cwd ?? (options.uid === undefined ? sandbox.root : install),
    env: sandboxEnv(sandbox, options.env),
    stdio: [options.stdin === null ? 'ignore' : 'pipe', options.stdout ?? 'pipe', 'pipe'],
    ...(options.uid !== undefined && { uid: options.uid }),
    ...(options.gid !== undefined && { gid: options.gid }),
    // Node's own deadline: the child gets SIGKILL once it has run this long.
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  });
  // The child may exit before reading stdin (e.g. a usage error): that is not a test failure.
  child.stdin?.on('error', () => {}).end(options.stdin ?? '');
  const result = Promise.all([
    readAll(child.stdout),
    readAll(child.stderr),
    once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>,
  ]).then(([stdout, stderr, [code, signal]]) => {
    const elapsedMs = performance.now() - started;
    if (signal === 'SIGKILL' && elapsedMs >= timeoutMs) {
      throw new Error(
        `${label} did not finish within ${timeoutMs} ms and was killed\nstdout: ${stdout}\nstderr: ${stderr}`,
      );
    }
    return { args, code, signal, stdout, stderr, elapsedMs };
  });
  return { child, result };
}

/** All of a child's output; '' from a stream the test destroyed (a reader that stops early). */
function readAll(stream: Readable | null): Promise<string> | string {
  return stream ? text(stream).catch(() => '') : '';
}

const readableInstalls = new Map<number, string>();

/**
 * A copy of the built tool that `uid` can run. The checkout may sit in a directory only root can
 * enter (CI clones wherever it likes); bin/ and dist/ are all the tool needs at run time.
 */
function installReadableBy(uid: number): string {
  const known = readableInstalls.get(uid);
  if (known !== undefined) return known;
  const probe = spawnSync(
    process.execPath,
    ['-e', `require('fs').accessSync(${JSON.stringify(BIN)})`],
    { uid, gid: uid, cwd: '/' },
  );
  let install = ROOT;
  if (probe.status !== 0) {
    install = tempDir('install');
    for (const part of ['bin', 'dist', 'package.json']) {
      cpSync(join(ROOT, part), join(install, part), { recursive: true });
    }
    chmodSync(install, 0o755);
    chmodSync(join(install, '..'), 0o711);
  }
  readableInstalls.set(uid, install);
  return install;
}

// ---- reading a run ----

/** For assertion messages: what ran and everything it printed. */
export function describeRun(result: RunResult): string {
  return `ugs ${result.args.join(' ')}\nexit ${result.code}${
    result.signal ? ` (signal ${result.signal})` : ''
  } after ${Math.round(result.elapsedMs)} ms\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
}

/** Lines starting with `error:`, once ANSI escapes are removed. */
export function errorLines(stderr: string): string[] {
  return stripAnsi(stderr)
    .split('\n')
    .filter((line) => line.startsWith('error:'));
}

/**
 * A failure as the contract shapes it: the exit code, stderr made of exactly one `error:` line
 * and at most one `hint:` line after it, nothing on stdout, and no stack trace anywhere.
 * Returns the error and hint text for further checks.
 */
export function expectFailure(
  result: RunResult,
  code: number,
  options: { stdout?: 'empty' | 'any'; extraStderr?: RegExp } = {},
): { error: string; hint: string | undefined } {
  const context = describeRun(result);
  expect(result.code, context).toBe(code);
  const lines = result.stderr
    .split('\n')
    .filter((line) => line !== '' && !(options.extraStderr?.test(line) ?? false));
  const errors = lines.filter((line) => line.startsWith('error: '));
  const hints = lines.filter((line) => line.startsWith('hint: '));
  expect(errors, context).toHaveLength(1);
  expect(hints.length, context).toBeLessThanOrEqual(1);
  expect(lines[0], `the error line comes first\n${context}`).toBe(errors[0]);
  expect(lines.length, `nothing but error/hint on stderr\n${context}`).toBe(1 + hints.length);
  expect(result.stderr, context).not.toMatch(STACK_LINE);
  expect(result.stdout, context).not.toMatch(STACK_LINE);
  if ((options.stdout ?? 'empty') === 'empty') expect(result.stdout, context).toBe('');
  return { error: (errors[0] ?? '').slice('error: '.length), hint: hints[0]?.slice(6) };
}

/** The value in the `token` row of a rendered table. */
export function tableToken(stdout: string): string | undefined {
  return /^\W*token\W+([0-9a-f]{64})\W*$/m.exec(stripAnsi(stdout))?.[1];
}

/**
 * Waits until a child (Linux) holds `count` sockets besides its stdio: e.g. a bulk run with that
 * many requests in flight, so a test signals it mid-run at the right time, not after a guess.
 */
export async function waitForSockets(
  child: { pid?: number | undefined },
  count: number,
  timeoutMs = RUN_TIMEOUT_MS,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let sockets = 0;
    try {
      for (const fd of readdirSync(`/proc/${child.pid}/fd`)) {
        if (Number(fd) <= 2) continue;
        try {
          if (readlinkSync(`/proc/${child.pid}/fd/${fd}`).startsWith('socket:')) sockets++;
        } catch {
          // closed while listed
        }
      }
    } catch {
      throw new Error(`process ${child.pid} ended before it held ${count} sockets`);
    }
    if (sockets >= count) return;
    if (performance.now() > deadline) {
      throw new Error(
        `process ${child.pid} held ${sockets} of ${count} sockets after ${timeoutMs} ms`,
      );
    }
    await sleep(20);
  }
}

/**
 * The pid of a live process (node, idle for 30 s) for a lock to name; `args` appear in its
 * command line (e.g. `ugs login` to look like ugs, or nothing of ugs). Killed after the test.
 */
export async function liveProcess(args: readonly string[] = []): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', ...args], {
    stdio: 'ignore',
  });
  onTestFinished(() => void child.kill('SIGKILL'));
  await once(child, 'spawn');
  if (child.pid === undefined) throw new Error('no pid');
  return child.pid;
}

// ---- preconditions ----

/**
 * Skips a test whose precondition this machine lacks (a tmpfs mount, an IPv6 loopback, a shell),
 * naming it; under `CI`, which is set up to have them all (.ci/run), the test fails instead: a
 * CI run never passes by skipping an attack it was meant to try.
 */
export function skipOutsideCi(context: { skip(note?: string): never }, reason: string): never {
  if (process.env.CI) throw new Error(`${reason}: CI must be able to run this test`);
  return context.skip(reason);
}

/** The uid (and gid) of `nobody` on Debian, for runs that permission bits must apply to. */
export const NOBODY = 65534;

/**
 * Options for a run as someone permission bits apply to: `nobody` when we are root (CI runs as
 * root), nothing otherwise. Lets nobody through to the sandbox and gives it the sandbox.
 */
export function unprivileged(sandbox: Sandbox): { uid?: number; gid?: number } {
  if (!IS_ROOT) return {};
  // mkdtemp makes 0700 directories.
  for (let dir = sandbox.root; dir.includes('ugs-test-'); dir = join(dir, '..')) {
    chmodSync(dir, 0o711);
  }
  for (const path of [sandbox.root, sandbox.home]) chownSync(path, NOBODY, NOBODY);
  return { uid: NOBODY, gid: NOBODY };
}

// ---- many runs in one process ----

/**
 * The built bundle's `main()` in one long-lived child process, run once per `run` call: for
 * tests of what happens between processes (two logins racing for the config file's lock) that
 * need many runs, where a Node start each (~340 ms on two cores) would be most of the test.
 * Each run gets a sandbox environment, its stdin text and collected output, as `runUgs` does;
 * what differs from `runUgs`: no `bin/ugs.js` (early output, V8 flags), stdin is not a pipe,
 * the child's pid is the same for every run, and no signals.
 */
export interface UgsWorker {
  pid: number;
  run(
    args: readonly string[],
    options?: Pick<RunOptions, 'sandbox' | 'env'> & { stdin?: string },
  ): Promise<RunResult>;
  close(): Promise<void>;
}

const WORKER_SCRIPT = `
const { main } = require(process.argv[1]);
const { Readable, Writable } = require('node:stream');
const sink = (append) => new Writable({ write(chunk, _encoding, done) { append(String(chunk)); done(); } });
require('node:readline').createInterface({ input: process.stdin }).on('line', async (line) => {
  const { id, args, env, stdin } = JSON.parse(line);
  let stdout = '';
  let stderr = '';
  const started = performance.now();
  const io = {
    stdin: Readable.from(stdin === undefined ? [] : [Buffer.from(stdin)]),
    stdout: sink((text) => { stdout += text; }),
    stderr: sink((text) => { stderr += text; }),
    stdinIsTTY: false, stdoutIsTTY: false, stderrIsTTY: false, env,
  };
  const system = {
    platform: process.platform, homedir: env.HOME, nodeVersion: process.version, uid: process.getuid?.(),
    waitForShutdown: () => new Promise(() => {}),
  };
  let code = null;
  try {
    code = await main(args, io, system);
  } catch (error) {
    stderr += 'main threw: ' + (error && error.stack || String(error));
  }
  process.stdout.write(JSON.stringify({ id, code, stdout, stderr, elapsedMs: performance.now() - started }) + '\\n');
});
`;

export async function startUgsWorker(): Promise<UgsWorker> {
  const home = makeSandbox();
  const child = spawn(process.execPath, ['-e', WORKER_SCRIPT, DIST_MAIN], {
    cwd: home.root,
    env: sandboxEnv(home),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await once(child, 'spawn');
  const pending = new Map<number, (result: Omit<RunResult, 'args' | 'signal'>) => void>();
  let lost: Error | undefined;
  const fail = (error: Error) => {
    lost = error;
    for (const settle of pending.values())
      settle({ code: null, stdout: '', stderr: error.message, elapsedMs: 0 });
    pending.clear();
  };
  child.on('exit', (code, signal) => fail(new Error(`the ugs worker ended (${signal ?? code})`)));
  let buffered = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const answer = JSON.parse(buffered.slice(0, end)) as Omit<RunResult, 'args' | 'signal'> & {
        id: number;
      };
      buffered = buffered.slice(end + 1);
      pending.get(answer.id)?.(answer);
      pending.delete(answer.id);
    }
  });
  let nextId = 0;
  return {
    pid: child.pid ?? 0,
    run(args, options = {}) {
      if (lost !== undefined) return Promise.reject(lost);
      const id = nextId++;
      const sandbox = options.sandbox ?? makeSandbox();
      const answered = new Promise<Omit<RunResult, 'args' | 'signal'>>((resolve) =>
        pending.set(id, resolve),
      );
      child.stdin?.write(
        `${JSON.stringify({ id, args, env: sandboxEnv(sandbox, options.env), stdin: options.stdin })}\n`,
      );
      return answered.then(({ code, stdout, stderr, elapsedMs }) => ({
        args,
        code,
        signal: null,
        stdout,
        stderr,
        elapsedMs,
      }));
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin?.end();
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}
