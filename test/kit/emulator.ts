/**
 * The bundled emulator, in-process (`startEmulator`, for any test that needs a stateful service)
 * or as the `ugs serve` process of the built binary (`serveUgs`, only for tests about that
 * process: signals, banner, --data locks), and a raw undici client that talks to it without
 * ugs in between.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Dispatcher } from 'undici';
import { afterAll } from 'vitest';
import {
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator as startInProcess,
} from '../../src/emulator/server.js';
import { BIN, type EnvChanges, makeSandbox, type Sandbox, sandboxEnv, tempDir } from './binary.js';

export interface ApiToken {
  token: string;
  environment: 'Customer' | 'Testing';
}

export function tokenOf(
  emulator: { apiTokens: ApiToken[] },
  environment: ApiToken['environment'],
): string {
  const found = emulator.apiTokens.find((t) => t.environment === environment);
  if (!found) throw new Error(`the emulator has no ${environment} API token`);
  return found.token;
}

export interface InProcessEmulator extends RunningEmulator {
  tokenFor(environment: ApiToken['environment']): string;
}

/** The emulator in this process, on a free port unless told otherwise. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<InProcessEmulator> {
  const running = await startInProcess({ port: 0, ...options });
  return Object.assign(running, {
    tokenFor: (environment: ApiToken['environment']) => tokenOf(running, environment),
  });
}

export type { EmulatorOptions, RunningEmulator };

export interface ServeProcess {
  url: string;
  apiTokens: ApiToken[];
  tokenFor(environment: ApiToken['environment']): string;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** Sends `signal` (SIGTERM by default), then waits for the process to end. */
  stop(
    signal?: 'SIGTERM' | 'SIGINT',
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `ugs serve --port 0 --json ...extra` from the built binary and reads its JSON line. */
export async function serveUgs(
  extra: readonly string[] = [],
  /** `executable`: run this ugs (e.g. the single executable) instead of `node bin/ugs.js`. */
  options: { sandbox?: Sandbox; env?: EnvChanges; executable?: string } = {},
): Promise<ServeProcess> {
  const sandbox = options.sandbox ?? makeSandbox();
  const [program, ...prefix] =
    options.executable === undefined ? [process.execPath, BIN] : [options.executable];
  const child = spawn(program, [...prefix, 'serve', '--port', '0', '--json', ...extra], {
    cwd: sandbox.root,
    env: sandboxEnv(sandbox, options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { line, stderr, exited } = await firstLine(child, 'ugs serve');
  const info = JSON.parse(line) as { url: string; apiTokens: ApiToken[] };
  let stopped: ReturnType<ServeProcess['stop']> | undefined;
  return {
    url: info.url,
    apiTokens: info.apiTokens,
    tokenFor: (environment) => tokenOf(info, environment),
    stderr,
    stop(signal = 'SIGTERM') {
      stopped ??= (async () => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.kill(signal);
        const result = await exited;
        clearTimeout(timer);
        return result;
      })();
      return stopped;
    },
  };
}

/** Waits (10 s at most) for a child's first line on stdout; the child is killed if none comes. */
async function firstLine(child: ChildProcess, label: string) {
  let stdout = '';
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.on('exit', (code, signal) => done({ code, signal }));
  });
  const line = await new Promise<string>((resolveLine, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label} printed no line within 10 s\nstderr: ${stderr}`));
    }, 10_000);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const end = stdout.indexOf('\n');
      if (end >= 0) {
        clearTimeout(timer);
        resolveLine(stdout.slice(0, end));
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited early (${code ?? signal})\nstderr: ${stderr}`));
    });
  });
  return { line, stderr: () => stderr, exited };
}

// ---- a raw client ----

export interface RawReply {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  text: string;
  /** The body parsed as a JSON object, or undefined when it is not one. */
  json: Record<string, unknown> | undefined;
}

export interface CallOptions {
  method?: string;
  path?: string;
  /** API token for "Authorization: Token <t>"; null or undefined sends no Authorization header. */
  token?: string | null;
  /** A string is sent as is; anything else is JSON-encoded; undefined sends no body. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Instead of undici's global one (e.g. an Agent whose idle connections a test inspects). */
  dispatcher?: Dispatcher;
  /** Send the body chunked, in pieces, without a content-length. */
  chunked?: boolean;
}

/**
 * A minimal client on undici's `request`, which sends a GET body with its content-length (the
 * interface's Get User call has one; fetch refuses it).
 */
export async function call(baseUrl: string, opts: CallOptions = {}): Promise<RawReply> {
  // Loaded on the first call: most files that import the kit never make one.
  const { request } = await import('undici');
  const payload =
    opts.body === undefined
      ? undefined
      : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (opts.token !== null && opts.token !== undefined)
    headers.authorization = `Token ${opts.token}`;
  const reply = await request(new URL(opts.path ?? '/api/user', baseUrl), {
    method: opts.method ?? 'GET',
    headers,
    ...(opts.dispatcher && { dispatcher: opts.dispatcher }),
    // Keep the connection after a GET with a body, as node:http does (undici closes it).
    reset: false,
    // A stream has no length known ahead: undici sends it chunked.
    body: payload && opts.chunked ? Readable.from(pieces(payload)) : payload,
  });
  const text = await reply.body.text();
  let json: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      json = parsed as Record<string, unknown>;
    }
  } catch {
    // not JSON: json stays undefined
  }
  return { status: reply.statusCode, headers: reply.headers, text, json };
}

function* pieces(bytes: Buffer, size = 64 * 1024): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

export interface UserGroupReply {
  team_id: number;
  token: string;
  name: string;
  provided_id: string;
  properties?: unknown;
  api_environment_tag?: string;
}

/** The user_group of a successful reply; fails loudly otherwise. */
export function userGroupOf(reply: RawReply): UserGroupReply {
  const group = reply.json?.user_group;
  if (reply.status !== 200 || reply.json?.success !== 1 || typeof group !== 'object' || !group) {
    throw new Error(`expected a successful reply, got ${reply.status} ${reply.text}`);
  }
  return group as UserGroupReply;
}

export function getUser(baseUrl: string, token: string, body: unknown): Promise<RawReply> {
  return call(baseUrl, { method: 'GET', token, body });
}

export function rotate(baseUrl: string, token: string, currentToken: string): Promise<RawReply> {
  return call(baseUrl, { method: 'POST', token, body: { current_token: currentToken } });
}

/**
 * Writes `bytes` on a fresh TCP connection, optionally half-closes (FIN, like shutdown(SHUT_WR)),
 * and collects everything the server sends until it closes the connection (pipelining,
 * half-close, malformed HTTP).
 */
export function rawExchange(url: string, bytes: string, halfClose: boolean): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within 10 s; got ${Buffer.concat(chunks).toString()}`));
    }, 10_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => socket.end());
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    socket.on('connect', () => {
      if (halfClose) socket.end(bytes);
      else socket.write(bytes);
    });
  });
}

/** A connected TCP socket to `baseUrl`'s host and port (a request left unfinished, ...). */
export async function openSocket(baseUrl: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Whether this machine can listen on ::1 (some containers have no IPv6 loopback). */
export function ipv6LoopbackAvailable(): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(0, '::1', () => probe.close(() => resolve(true)));
  });
}

// ---- the emulator in a child process of its own, to be killed with SIGKILL mid-write ----

export interface EmulatorChild {
  child: ChildProcess;
  url: string;
  /** Resolves when the child has exited. */
  exited: Promise<void>;
}

const children: ChildProcess[] = [];
let bundle: Promise<string> | undefined;
afterAll(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/**
 * The emulator from src (not the built binary) bundled with esbuild, since Node 20 cannot run
 * TypeScript, started on a free port with `dataFile` and one Customer token.
 */
export async function startEmulatorChild(
  dataFile: string,
  apiToken: string,
): Promise<EmulatorChild> {
  bundle ??= bundleEmulator();
  const child = spawn(process.execPath, [await bundle, dataFile, apiToken], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const { line, exited } = await firstLine(child, 'the emulator child');
  const url = (JSON.parse(line) as { url: string }).url;
  return { child, url, exited: exited.then(() => undefined) };
}

async function bundleEmulator(): Promise<string> {
  const serverTs = fileURLToPath(new URL('../../src/emulator/server.ts', import.meta.url));
  const entry = `
import { startEmulator } from ${JSON.stringify(serverTs)};
const [dataFile, token] = process.argv.slice(2);
try {
  const emu = await startEmulator({ port: 0, dataFile, apiTokens: [{ token, environment: 'Customer' }] });
  process.stdout.write(JSON.stringify({ url: emu.url }) + '\\n');
} catch (err) {
  process.stderr.write(String(err && err.message) + '\\n');
  process.exit(1);
}
`;
  // Loaded only here: most tests that import the kit never bundle anything.
  const { build } = await import('esbuild');
  const dir = tempDir('emulator-child');
  const outfile = join(dir, 'emulator-child.mjs');
  await build({
    stdin: { contents: entry, loader: 'ts', resolveDir: dir, sourcefile: 'entry.ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'silent',
  });
  return outfile;
}
