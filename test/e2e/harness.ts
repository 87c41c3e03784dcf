/**
 * End-to-end harness: the BUILT binary (`node bin/ugs.js`) as a child process, against the
 * bundled emulator (`ugs serve --port 0 --json`) also run from the built binary. Only loopback.
 *
 * Every run gets its own sandbox (config dir, HOME, XDG_CONFIG_HOME in a fresh temp dir) and an
 * environment without the outer UGS_* variables, CI, colour or proxy settings, so the developer's
 * real configuration can neither leak in nor be touched.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { collectOutput, type EnvChanges, sandboxEnv as sanitisedEnv } from '../helpers/process.js';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'ugs.js');
export const DIST_MAIN = join(ROOT, 'dist', 'main.cjs');

/** Fails loudly (not a skip) when the binary has not been built. */
export function assertBuilt(): void {
  for (const file of [BIN, DIST_MAIN]) {
    if (!existsSync(file)) {
      throw new Error(
        `${file} does not exist: the e2e tests run the built binary; run \`npm run build\` first`,
      );
    }
  }
}

const ESC = '\u001b';
const BEL = '\u0007';
/** CSI (colours, cursor moves), OSC (titles, links) and two-byte escapes. */
const ANSI_PATTERN = new RegExp(
  `${ESC}\\[[0-?]*[ -/]*[@-~]|${ESC}\\][^${BEL}${ESC}]*(?:${BEL}|${ESC}\\\\)|${ESC}[@-Z\\\\-_]`,
  'g',
);

/** Any ANSI escape sequence (CSI, OSC or a two-byte escape). */
export const ANSI_ESCAPE = new RegExp(ESC);

export function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, '');
}

/** A line of a JavaScript stack trace. */
export const STACK_LINE = /^\s*at /m;

export interface Sandbox {
  root: string;
  home: string;
  configDir: string;
  configPath: string;
}

const sandboxes: string[] = [];

export function makeSandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'ugs-e2e-'));
  sandboxes.push(root);
  const home = join(root, 'home');
  mkdirSync(home);
  const configDir = join(root, 'config');
  return { root, home, configDir, configPath: join(configDir, 'config.json') };
}

export function removeSandboxes(): void {
  for (const dir of sandboxes.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export type { EnvChanges };

/** The outer environment minus anything that could change how ugs behaves, plus `changes`. */
export function sandboxEnv(sandbox: Sandbox, changes: EnvChanges = {}): Record<string, string> {
  // The e2e runs drop the outer TERM as well; the terminal sessions (pty.ts) set their own.
  return sanitisedEnv(sandbox, { TERM: undefined, ...changes });
}

export interface RunResult {
  args: readonly string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: EnvChanges;
  /** Written to stdin, which is always a pipe and always closed afterwards. */
  stdin?: string;
  timeoutMs?: number;
}

/** Runs `node bin/ugs.js ...args` in `sandbox`; rejects if it has not finished in time. */
export async function ugs(
  sandbox: Sandbox,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: sandbox.root,
    env: sandboxEnv(sandbox, options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output = await collectOutput(child, {
    label: `ugs ${args.join(' ')}`,
    timeoutMs: options.timeoutMs ?? 15_000,
    timeoutMessage: (ms) => `was killed after ${ms} ms`,
    input: options.stdin,
  });
  return { args, ...output };
}

/** For assertion messages: what ran and everything it printed. */
export function show(result: RunResult): string {
  return `ugs ${result.args.join(' ')} -> exit ${result.code}${
    result.signal ? ` (signal ${result.signal})` : ''
  }\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
}

/** Lines of stderr starting with `error:`. */
export function errorLines(stderr: string): string[] {
  return stripAnsi(stderr)
    .split('\n')
    .filter((line) => line.startsWith('error:'));
}

export interface ApiToken {
  token: string;
  environment: 'Customer' | 'Testing';
}

export interface Emulator {
  url: string;
  apiTokens: ApiToken[];
  tokenFor(environment: ApiToken['environment']): string;
  /** Everything the emulator wrote to stderr so far. */
  stderr(): string;
  /** Sends `signal` (SIGTERM by default), then waits for the process to end. */
  stop(
    signal?: 'SIGTERM' | 'SIGINT',
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `ugs serve --port 0 --json ...extra` from the built binary and reads its one JSON line.
 * The emulator gets a sandbox of its own (it needs no config, but must not see the outer env).
 */
export async function startEmulator(extra: readonly string[] = []): Promise<Emulator> {
  const sandbox = makeSandbox();
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [BIN, 'serve', '--port', '0', '--json', ...extra],
    { cwd: sandbox.root, env: sandboxEnv(sandbox), stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.on('exit', (code, signal) => done({ code, signal }));
  });
  const line = await new Promise<string>((resolveLine, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ugs serve printed no JSON line within 10 s\nstderr: ${stderr}`));
    }, 10_000);
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      const end = stdout.indexOf('\n');
      if (end >= 0) {
        clearTimeout(timer);
        resolveLine(stdout.slice(0, end));
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`ugs serve exited early (${code ?? signal})\nstderr: ${stderr}`));
    });
  });
  const info = JSON.parse(line) as { url: string; apiTokens: ApiToken[] };
  let stopped: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  return {
    url: info.url,
    apiTokens: info.apiTokens,
    tokenFor(environment) {
      const found = info.apiTokens.find((t) => t.environment === environment);
      if (!found) throw new Error(`the emulator printed no ${environment} API token: ${line}`);
      return found.token;
    },
    stderr: () => stderr,
    stop(signal = 'SIGTERM') {
      if (!stopped) {
        stopped = (async () => {
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.kill(signal);
          const result = await exited;
          clearTimeout(timer);
          return result;
        })();
      }
      return stopped;
    },
  };
}

/** A loopback port with nothing listening on it (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  await new Promise<void>((done) => server.close(() => done()));
  return address.port;
}

/** A raw call to the emulator (no ugs in between), to learn its own words for a refusal. */
export function rawCall(
  baseUrl: string,
  method: 'GET' | 'POST',
  apiToken: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = JSON.stringify(body);
  return new Promise((resolveCall, reject) => {
    const req = request(
      new URL('/api/user', baseUrl),
      {
        method,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          authorization: `Token ${apiToken}`,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          try {
            resolveCall({ status: res.statusCode ?? 0, body: JSON.parse(text) });
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The value in the `token` row of a rendered table. */
export function tableToken(stdout: string): string | undefined {
  return /^\W*token\W+([0-9a-f]{64})\W*$/m.exec(stripAnsi(stdout))?.[1];
}
