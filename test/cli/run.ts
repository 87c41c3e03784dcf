/**
 * Runs the BUILT binary (`node bin/ugs.js`) as a child process, in a sandbox: a fresh config
 * directory, a temporary HOME, and an environment stripped of the real user's UGS_* settings,
 * CI, colour and proxy variables. Each run is killed (and fails) after 15 s.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { collectOutput, sandboxEnv } from '../helpers/process.js';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'ugs.js');
export const DIST_MAIN = join(ROOT, 'dist', 'main.cjs');
export const RUN_TIMEOUT_MS = 15_000;

export const PACKAGE_VERSION: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  .version as string;

/** An ANSI escape sequence (colour, bold, ...). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape codes is the point
export const ANSI = /\u001b\[/;

/** A line of a JavaScript stack trace. */
export const STACK_LINE = /^ {4}at /m;

export interface Sandbox {
  root: string;
  /** UGS_CONFIG_DIR: not created yet, so the binary has to create it. */
  configDir: string;
  configPath: string;
  home: string;
}

export interface RunOptions {
  /** Variables to add; `undefined` removes one from the base environment. */
  env?: Record<string, string | undefined>;
  /** Text written to stdin (stdin is always a pipe, closed after this text). */
  stdin?: string;
  timeoutMs?: number;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const sandboxes: string[] = [];

/**
 * Registers the hooks every CLI test file needs: the built binary must exist before anything
 * runs, and sandboxes are removed afterwards.
 */
export function setupCliSuite(): void {
  beforeAll(() => {
    for (const file of [DIST_MAIN, BIN]) {
      if (!existsSync(file)) {
        throw new Error(
          `${file} does not exist: the CLI tests spawn the built binary; run \`npm run build\` first`,
        );
      }
    }
  });
  afterAll(() => {
    for (const dir of sandboxes.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
}

export function makeSandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'ugs-cli-test-'));
  sandboxes.push(root);
  const home = join(root, 'home');
  mkdirSync(home);
  const configDir = join(root, 'config');
  return { root, configDir, configPath: join(configDir, 'config.json'), home };
}

/** Writes a config file directly (mode 0600 in a 0700 directory), for tests that need one. */
export function writeConfig(sandbox: Sandbox, data: unknown): void {
  mkdirSync(sandbox.configDir, { recursive: true, mode: 0o700 });
  writeFileSync(sandbox.configPath, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
}

export function readConfig(sandbox: Sandbox): unknown {
  return JSON.parse(readFileSync(sandbox.configPath, 'utf8'));
}

/** Writes a profile for `baseUrl` and `apiToken` (plus any other profiles given). */
export function writeProfiles(
  sandbox: Sandbox,
  profiles: Record<string, { baseUrl?: string; apiToken?: string }>,
): void {
  writeConfig(sandbox, { profiles });
}

export function baseEnv(sandbox: Sandbox): Record<string, string> {
  return sandboxEnv(sandbox);
}

/** Runs `node bin/ugs.js ...args` in the sandbox and collects its exit code and output. */
export async function runCli(
  sandbox: Sandbox,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const env = sandboxEnv(sandbox, options.env);
  // `npm run build` empties dist/ before writing it again: when another build runs while these
  // tests do, a module can be missing for a moment. Such a run loaded nothing and sent nothing,
  // so it is repeated (briefly); a dist/ that stays broken still fails the test.
  const missingDist = new RegExp(`Cannot find module '${escapeRegExp(join(ROOT, 'dist'))}/`);
  for (let attempt = 0; ; attempt++) {
    const result = await spawnOnce(args, env, options);
    if (attempt >= 10 || result.code === 0 || !missingDist.test(result.stderr)) return result;
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 300));
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function spawnOnce(
  args: readonly string[],
  env: Record<string, string>,
  options: RunOptions,
): Promise<RunResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return collectOutput(child, {
    label: `ugs ${args.join(' ')}`,
    timeoutMs: options.timeoutMs ?? RUN_TIMEOUT_MS,
    input: options.stdin,
  });
}

/** A readable description of a run, for assertion messages. */
export function describeRun(result: RunResult): string {
  return `exit ${result.code}${result.signal ? ` (signal ${result.signal})` : ''}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
}

/** Lines of stderr that start with `error:`. */
export function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('error:'));
}
