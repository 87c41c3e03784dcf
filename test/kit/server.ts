/**
 * One scripted, recording server on 127.0.0.1 (plain HTTP or TLS). It records every request
 * (method, url, headers, body text, client port, time) and every accepted connection, and answers
 * each request with the next scripted reply; the last reply repeats once the script runs out.
 * Replies below answer JSON or text, destroy the socket, stall, delay, trickle, stream a huge
 * body, or forward to another server (the in-process emulator, the real DRF service of drf.ts).
 * `close()` tears down every open connection, stalled ones included.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Dispatcher } from 'undici';
import { tempDir } from './binary.js';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The client's port: equal ports on two requests mean one kept-alive connection. */
  remotePort: number;
  /** Date.now() when the request was complete. */
  at: number;
}

export interface ReplyContext {
  req: IncomingMessage;
  res: ServerResponse;
  request: RecordedRequest;
  /** 0-based index of this request among all requests the server has seen. */
  index: number;
}

export type Reply = (ctx: ReplyContext) => void | Promise<void>;

export interface ServerOptions {
  /** Serve HTTPS with this key and certificate. */
  tls?: { key: string; cert: string };
  /** Default: a free port. */
  port?: number;
}

export interface TestServer {
  readonly port: number;
  /** `http(s)://127.0.0.1:<port>` without a trailing slash. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Sockets accepted, whether or not a request arrived on them (TLS failures, CONNECT...). */
  readonly connections: number;
  /** Replies for the coming requests, in order; the last one repeats. */
  script(...replies: Reply[]): void;
  close(): Promise<void>;
}

/** `startServer(...replies)` or `startServer({ tls, port }, ...replies)`; default reply: okBody(). */
export function startServer(first?: ServerOptions | Reply, ...rest: Reply[]): Promise<TestServer> {
  if (typeof first === 'function') return start({}, [first, ...rest]);
  return start(first ?? {}, rest);
}

async function start(options: ServerOptions, initial: Reply[]): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let replies: Reply[] = initial.length > 0 ? initial : [json(200, okBody())];
  let next = 0;
  let connections = 0;

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => {});
    res.on('error', () => {});
    req.on('end', () => {
      const request: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        remotePort: req.socket.remotePort ?? 0,
        at: Date.now(),
      };
      const index = requests.length;
      requests.push(request);
      const reply = replies[Math.min(next, replies.length - 1)] as Reply;
      next++;
      Promise.resolve(reply({ req, res, request, index })).catch(() => req.socket.destroy());
    });
  };
  const server: Server = options.tls
    ? createHttpsServer(options.tls, listener)
    : createHttpServer(listener);
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', (socket: Socket) => socket.on('error', () => {}));
  server.on('tlsClientError', () => {});
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    get connections() {
      return connections;
    },
    script(...list: Reply[]) {
      replies = list;
      next = 0;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A port on 127.0.0.1 on which nothing listens: connecting to it is refused. It is taken below
 * the kernel's range of ephemeral ports: a port that was just free within that range is the one
 * the kernel hands to the next server opened on port 0, and with four workers that server was
 * another test file's, which then answered (seen once: a "connection refused" test got a 401).
 */
export async function closedPort(): Promise<number> {
  const low = ephemeralPortsFrom();
  for (let attempt = 0; low > 10_000 && attempt < 50; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await bindsOn(port)) return port;
  }
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The first ephemeral port (Linux's ip_local_port_range; 49152, IANA's, elsewhere). */
function ephemeralPortsFrom(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(low) ? low : 49_152;
  } catch {
    return 49_152;
  }
}

/** Whether a server can listen on the port now (nothing else has it). */
async function bindsOn(port: number): Promise<boolean> {
  const server = createNetServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  return listening;
}

// ---- canned bodies ----

export function userGroup(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    team_id: 7,
    token: 'ugt_group_token_1234',
    name: 'Acme',
    provided_id: 'acme-1',
    properties: null,
    ...overrides,
  };
}

/** A successful Get User answer. */
export function okBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { success: 1, new_user_group: false, user_group: userGroup(), ...overrides };
}

/** The group the binary-level hardening cases ask for (`--id acme --name "Acme Corp"`). */
export function acmeGroup(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return userGroup({
    provided_id: 'acme',
    name: 'Acme Corp',
    token: 'ugt_hardening_token_0001',
    properties: {},
    ...overrides,
  });
}

/** A successful answer carrying `acmeGroup()`. */
export function acmeBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return okBody({ user_group: acmeGroup(), ...overrides });
}

// ---- replies ----

/** Writes `status` with `body` serialised as JSON (a string body is sent as is). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return ({ res }) => sendJson(res, status, body, headers);
}

/** `body` as is: a string, or bytes that must not be re-encoded (a BOM, exact sizes). */
export function text(
  status: number,
  body: string | Buffer,
  contentType = 'text/plain',
  headers: Record<string, string> = {},
): Reply {
  return ({ res }) => {
    res.writeHead(status, {
      'content-type': contentType,
      'content-length': Buffer.byteLength(body),
      ...headers,
    });
    res.end(body);
  };
}

/** Closes the connection without a word, after the request (and its body) arrived. */
export function destroy(): Reply {
  return ({ req }) => {
    req.socket.destroy();
  };
}

/** Never answers; the socket stays open until the client gives up or the server closes. */
export function stall(): Reply {
  return () => {};
}

export function delay(ms: number, then: Reply): Reply {
  return async (ctx) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (!ctx.req.socket.destroyed) await then(ctx);
  };
}

/** Sends status, headers and the first part of a body, then never the rest: it stalls, or
 * closes the connection mid-body. */
export function headersThen(
  then: 'stall' | 'destroy',
  status = 200,
  partial = '{"success": 1, ',
): Reply {
  return ({ req, res }) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': 10_000 });
    res.write(partial, () => {
      if (then === 'destroy') setTimeout(() => req.socket.destroy(), 20);
    });
  };
}

/** One byte every `everyMs`, for ever: never idle, never done. */
export function trickle(everyMs: number): Reply {
  return ({ res }) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const timer = setInterval(() => {
      if (res.destroyed) clearInterval(timer);
      else res.write(' ');
    }, everyMs);
    res.on('close', () => clearInterval(timer));
  };
}

export interface HugeBodyStats {
  /** Bytes the server managed to hand to the socket before the client hung up. */
  written: number;
  /** Resolves when the client closed the connection. */
  closed: Promise<void>;
}

/**
 * Streams a body of `total` bytes (or without end when `total` is undefined), chunked or with a
 * content-length; the stream's back-pressure paces it. `stats` reports how far it got.
 */
export function huge(
  total: number | undefined,
  stats: HugeBodyStats[] = [],
  options: { contentLength?: boolean; chunk?: number } = {},
): Reply {
  return ({ res }) => {
    const size = options.chunk ?? 64 * 1024;
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (options.contentLength && total !== undefined) headers['content-length'] = total;
    res.writeHead(200, headers);
    const entry: HugeBodyStats = { written: 0, closed: once(res, 'close').then(() => {}) };
    stats.push(entry);
    const chunks = function* () {
      while (total === undefined || entry.written < total) {
        const length = total === undefined ? size : Math.min(size, total - entry.written);
        entry.written += length;
        yield Buffer.alloc(length, 0x20);
      }
    };
    pipeline(Readable.from(chunks()), res).catch(() => {});
  };
}

/** What a forwarded request was answered. */
export interface ForwardedAnswer {
  status: number;
  /** The answer parsed as JSON, or its text when it is not JSON. */
  body: unknown;
}

/**
 * Passes the request on to `baseUrl` (e.g. the in-process emulator) and its answer back; each
 * answer is also pushed to `answers`, so a test can see what the real service said.
 */
export function forwardTo(
  baseUrl: string,
  answers: ForwardedAnswer[] = [],
  /** Removed from the start of the path before forwarding (a base URL with a path prefix). */
  prefix = '',
): Reply {
  return async ({ res, request }) => {
    // undici sets these itself (and refuses some of them as request headers).
    const { host, connection, 'transfer-encoding': te, expect, ...headers } = request.headers;
    const path = request.url.startsWith(`${prefix}/`)
      ? request.url.slice(prefix.length)
      : request.url;
    // Loaded here: most test files import the kit and never forward.
    const { request: undiciRequest } = await import('undici');
    const answer = await undiciRequest(new URL(path, baseUrl), {
      method: request.method as Dispatcher.HttpMethod,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(request.body)) },
      body: request.body,
    });
    const body = Buffer.from(await answer.body.arrayBuffer());
    const text = body.toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: recorded as text.
    }
    answers.push({ status: answer.statusCode, body: parsed });
    const { connection: _c, 'keep-alive': _k, ...back } = answer.headers;
    res.writeHead(answer.statusCode, back);
    res.end(body);
  };
}

// ---- a self-signed certificate for 127.0.0.1 and localhost, made at test time ----

export interface SelfSigned {
  key: string;
  cert: string;
  certFile: string;
}

/** Valid for localhost, 127.0.0.1 and `names` (the first of them is the subject's CN). */
export function selfSignedCertificate(names: readonly string[] = []): SelfSigned {
  const subject = `/CN=${names[0] ?? 'localhost'}`;
  const alt = [...names.map((name) => `DNS:${name}`), 'DNS:localhost', 'IP:127.0.0.1'].join(',');
  const dir = tempDir('tls');
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  // biome-ignore format: one openssl option per line would not make this clearer
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile,
    '-subj', subject, '-addext', `subjectAltName=${alt}`, '-days', '1',
  ], { stdio: 'ignore' });
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}
