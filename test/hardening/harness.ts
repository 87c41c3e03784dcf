/**
 * Shared pieces of the hardening suite: spawn the BUILT binary in a sandbox (its own config
 * directory and HOME, no proxy, CA or UGS_* variables inherited from the machine), a local server
 * on 127.0.0.1 that records every request and misbehaves on demand, and assertions on the shape of
 * a failure (one `error:` line, an optional `hint:`, no stack trace).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import { sendJson } from '../helpers/http.js';
import { collectOutput, sandboxEnv } from '../helpers/process.js';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'ugs.js');

/** Every spawned run is killed after this long: "never hangs" is part of what is tested. */
export const RUN_TIMEOUT_MS = 15_000;

/** A line of a JavaScript stack trace. */
export const STACK_LINE = /^\s+at\s/m;

export const IS_ROOT = process.getuid?.() === 0;

// ---------------------------------------------------------------------------------------------
// Sandboxes

export interface Sandbox {
  root: string;
  home: string;
  /** UGS_CONFIG_DIR; not created: the binary creates it. */
  configDir: string;
  configPath: string;
}

let suiteRoot: string | undefined;

/** Registers the hooks each test file needs: the build must exist; temp files are removed. */
export function setupSuite(): void {
  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist', 'main.cjs'))) {
      throw new Error('dist/main.cjs is missing: run `npm run build` before the hardening suite');
    }
  });
  afterAll(() => {
    if (suiteRoot !== undefined) rmSync(suiteRoot, { recursive: true, force: true });
    suiteRoot = undefined;
  });
}

export function tempDir(prefix = 'dir'): string {
  suiteRoot ??= mkdtempSync(join(tmpdir(), 'ugs-hardening-'));
  return mkdtempSync(join(suiteRoot, `${prefix}-`));
}

export function makeSandbox(): Sandbox {
  const root = tempDir('sandbox');
  const home = join(root, 'home');
  mkdirSync(home);
  const configDir = join(root, 'config');
  return { root, home, configDir, configPath: join(configDir, 'config.json') };
}

// ---------------------------------------------------------------------------------------------
// Running the binary

export interface RunOptions {
  sandbox?: Sandbox;
  /** Variables to add; `undefined` removes one. */
  env?: Record<string, string | undefined>;
  /** Text for stdin (a pipe, closed after it); `null` gives /dev/null. Default: empty pipe. */
  stdin?: string | null;
  timeoutMs?: number;
  uid?: number;
  gid?: number;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
  args: readonly string[];
}

export { sandboxEnv };

export async function runUgs(
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const sandbox = options.sandbox ?? makeSandbox();
  const env = sandboxEnv(sandbox, options.env);
  const started = performance.now();
  const install = options.uid === undefined ? ROOT : installReadableBy(options.uid);
  const child = spawn(process.execPath, [join(install, 'bin', 'ugs.js'), ...args], {
    cwd: install,
    env,
    stdio: [options.stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    ...(options.uid !== undefined && { uid: options.uid }),
    ...(options.gid !== undefined && { gid: options.gid }),
  });
  const output = await collectOutput(child, {
    label: `ugs ${args.join(' ')}`,
    timeoutMs: options.timeoutMs ?? RUN_TIMEOUT_MS,
    timeoutMessage: (ms) => `did not finish within ${ms} ms (killed)`,
    input: options.stdin ?? '',
  });
  return { ...output, elapsedMs: performance.now() - started, args };
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
    {
      uid,
      gid: uid,
      cwd: '/',
    },
  );
  let install = ROOT;
  if (probe.status !== 0) {
    // Inside the suite's temp folder, which setupSuite removes; nobody needs to pass through it.
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

export function describeRun(result: RunResult): string {
  return `ugs ${result.args.join(' ')}\nexit ${result.code}${
    result.signal ? ` (signal ${result.signal})` : ''
  } after ${Math.round(result.elapsedMs)} ms\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
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

// ---------------------------------------------------------------------------------------------
// A recording, misbehaving server

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** Date.now() when the request was complete. */
  at: number;
}

/** Answers one request; `index` counts requests from 0. */
export type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  index: number,
  record: Recorded,
) => void;

export interface RecordingServer {
  url: string;
  port: number;
  requests: Recorded[];
  /** Sockets accepted, whether or not a request arrived on them (TLS failures, CONNECT...). */
  connections: number;
  close(): Promise<void>;
}

export async function startServer(
  handler: Handler,
  tls?: { key: string; cert: string },
): Promise<RecordingServer> {
  const requests: Recorded[] = [];
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => {});
    res.on('error', () => {});
    req.on('end', () => {
      const record: Recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      requests.push(record);
      handler(req, res, requests.length - 1, record);
    });
  };
  const server: Server = tls ? createHttpsServer(tls, listener) : createHttpServer(listener);
  const state = { connections: 0 };
  server.on('connection', (socket) => {
    state.connections++;
    socket.on('error', () => {});
  });
  server.on('secureConnection', (socket) => socket.on('error', () => {}));
  server.on('tlsClientError', () => {});
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** A port on 127.0.0.1 where nothing listens (bound, then released). */
export async function refusedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

// ---------------------------------------------------------------------------------------------
// Canned answers

export { sendJson };

export function userGroup(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    provided_id: 'acme',
    name: 'Acme Corp',
    team_id: 7,
    token: 'ugt_hardening_token_0001',
    properties: {},
    ...overrides,
  };
}

export function okBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { success: 1, new_user_group: false, user_group: userGroup(), ...overrides };
}

// ---------------------------------------------------------------------------------------------
// A self-signed certificate for 127.0.0.1 and localhost, made at test time

export interface SelfSigned {
  key: string;
  cert: string;
  certFile: string;
}

export function selfSignedCertificate(): SelfSigned {
  const dir = tempDir('tls');
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  // biome-ignore format: one openssl option per line would not make this clearer
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile,
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-days', '1',
  ], { stdio: 'ignore' });
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}
