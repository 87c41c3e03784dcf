/**
 * The bundled emulator, in-process (`startEmulator`, for any test that needs a stateful service)
 * or as the `ugs serve` process of the built binary (`serveUgs`, for tests about that process:
 * signals, banner, --data locks, kill -9), and a raw undici client that talks to it without ugs
 * in between.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { afterAll, beforeAll, expect } from 'vitest';
import { emulatorRoutes, servedOperations } from '../../src/commands/operations.js';
import {
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator as startInProcess,
} from '../../src/emulator/server.js';
import {
  BIN,
  describeRun,
  type EnvChanges,
  makeSandbox,
  runUgs,
  type Sandbox,
  sandboxEnv,
} from './binary.js';

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
  const running = await startInProcess({ port: 0, ...options }, servedOperations, emulatorRoutes);
  return Object.assign(running, {
    tokenFor: (environment: ApiToken['environment']) => tokenOf(running, environment),
  });
}

/**
 * Something a whole test file shares (an emulator, a service): started in beforeAll, closed in
 * afterAll. The returned object stands for it; used before beforeAll has run, it throws, naming
 * why.
 */
export function startedForFile<T extends { close(): unknown }>(
  what: string,
  start: () => Promise<T>,
): T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(() => started?.close());
  return new Proxy({} as T, {
    get(_empty, name) {
      if (started === undefined) {
        throw new Error(`${what} starts in beforeAll; use it inside a test`);
      }
      const value: unknown = Reflect.get(started, name);
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });
}

/** The emulator of a test file (startEmulator, started before its tests and closed after). */
export function useEmulator(options: EmulatorOptions = {}): InProcessEmulator {
  return startedForFile('useEmulator(): the emulator', () => startEmulator(options));
}

export type { EmulatorOptions, RunningEmulator };

/**
 * Waits (up to 5 s) until an emulator's `log` has collected `count` lines: the access line is
 * written after the answer, so a test that has its answer may not have its line yet.
 */
export async function logLines(
  lines: readonly string[],
  count: number,
): Promise<readonly string[]> {
  const deadline = Date.now() + 5_000;
  while (lines.length < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return lines;
}

/** A fresh sandbox that `ugs login --with-token` (the built binary) saved `emulator` in. */
export async function loggedInTo(emulator: Pick<InProcessEmulator, 'url' | 'tokenFor'>) {
  const sandbox = makeSandbox();
  const result = await runUgs(['login', '--base-url', emulator.url, '--with-token'], {
    sandbox,
    stdin: emulator.tokenFor('Customer'),
  });
  expect(result.code, describeRun(result)).toBe(0);
  return sandbox;
}

/** The environment that points ugs at `emulator` with its Customer API token. */
export function customerEnv(emulator: Pick<InProcessEmulator, 'url' | 'tokenFor'>) {
  return { UGS_BASE_URL: emulator.url, UGS_API_TOKEN: emulator.tokenFor('Customer') };
}

export interface ServeProcess {
  url: string;
  pid: number;
  apiTokens: ApiToken[];
  tokenFor(environment: ApiToken['environment']): string;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /**
   * Its stderr lines that match `pattern` (its `--debug` access lines, say), once `count` of them
   * are written; after 10 s, those written by then (the test's own checks say what is missing).
   */
  stderrLines(pattern: RegExp, count: number): Promise<string[]>;
  /** Sends `signal` (SIGTERM by default), then waits for the process to end (SIGKILL after 10 s). */
  stop(
    signal?: 'SIGTERM' | 'SIGINT' | 'SIGKILL',
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
    pid: child.pid ?? 0,
    apiTokens: info.apiTokens,
    tokenFor: (environment) => tokenOf(info, environment),
    stderr,
    async stderrLines(pattern, count) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const lines = stderr()
          .split('\n')
          .filter((text) => pattern.test(text));
        if (lines.length >= count || Date.now() > deadline) return lines;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop(signal = 'SIGTERM') {
      if (stopped === undefined) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        stopped = exited.finally(() => clearTimeout(timer));
      }
      return stopped;
    },
  };
}

/**
 * A child's first line on stdout (it is killed after 10 s without one), its stderr so far, and
 * its exit. Rejects, with the stderr, when the child ends before the line.
 */
export async function firstLine(child: ChildProcess, label: string) {
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = once(child, 'close').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const lines = child.stdout && createInterface({ input: child.stdout });
  const { value: line } = (await lines?.[Symbol.asyncIterator]().next()) ?? {};
  clearTimeout(timer);
  if (typeof line !== 'string') {
    const { code, signal } = await exited;
    throw new Error(`${label} ended (${code ?? signal}) without its first line\nstderr: ${stderr}`);
  }
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
  // The Customer API (`--dialect customer`) answers its group as `customer`.
  const group = reply.json?.user_group ?? reply.json?.customer;
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
export async function rawExchange(url: string, bytes: string, halfClose: boolean): Promise<string> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
  socket.on('connect', () => (halfClose ? socket.end(bytes) : socket.write(bytes)));
  socket.on('end', () => socket.end());
  const chunks: Buffer[] = [];
  const timer = setTimeout(() => {
    socket.destroy(new Error(`no close within 10 s; got ${Buffer.concat(chunks).toString()}`));
  }, 10_000);
  try {
    for await (const chunk of socket) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    clearTimeout(timer);
  }
}

/** A connected TCP socket to `baseUrl`'s host and port (a request left unfinished, ...). */
export async function openSocket(baseUrl: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  return socket;
}

/** Whether this machine can listen on ::1 (some containers have no IPv6 loopback). */
export async function ipv6LoopbackAvailable(): Promise<boolean> {
  const probe = createServer().listen(0, '::1');
  try {
    await once(probe, 'listening');
  } catch {
    return false;
  }
  await once(probe.close(), 'close');
  return true;
}
