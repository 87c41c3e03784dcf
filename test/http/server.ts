/**
 * A scriptable `node:http` server on 127.0.0.1 for the HTTP-layer tests. It records every request
 * (method, url, headers, body text, client port) and answers each one with the next scripted
 * reply; the last reply repeats once the script runs out. Replies can answer JSON or text, destroy
 * the socket, stall for ever, delay, send headers and then stall the body, trickle, or stream a
 * body of any size. `close()` tears down every open connection, stalled ones included.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { sendJson } from '../helpers/http.js';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The client's port: equal ports on two requests mean one kept-alive connection. */
  remotePort: number;
}

export interface ReplyContext {
  req: IncomingMessage;
  res: ServerResponse;
  request: RecordedRequest;
  /** 0-based index of this request among all requests the server has seen. */
  index: number;
}

export type Reply = (ctx: ReplyContext) => void | Promise<void>;

export interface TestServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` without a trailing slash. */
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Replies for the coming requests, in order; the last one repeats. */
  script(...replies: Reply[]): void;
  /** Resolves once `count` requests have been recorded. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

export function startServer(...replies: Reply[]): Promise<TestServer> {
  return start(0, replies);
}

/** A server on a given port: brings a service up where a connection was just refused. */
export function startServerAt(port: number, ...replies: Reply[]): Promise<TestServer> {
  return start(port, replies);
}

/** A port on 127.0.0.1 on which nothing listens: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function start(wantedPort: number, initial: Reply[]): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let replies: Reply[] = initial.length > 0 ? initial : [json(200, okBody())];
  let next = 0;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        remotePort: req.socket.remotePort ?? 0,
      };
      const index = requests.length;
      requests.push(request);
      for (const waiter of waiters.splice(0)) {
        if (requests.length >= waiter.count) waiter.resolve();
        else waiters.push(waiter);
      }
      const reply = replies[Math.min(next, replies.length - 1)] as Reply;
      next++;
      Promise.resolve(reply({ req, res, request, index })).catch(() => req.socket.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wantedPort, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    script(...list: Reply[]) {
      replies = list;
      next = 0;
    },
    waitForRequests(count: number) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// ---- replies ----

export function okBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    success: 1,
    new_user_group: false,
    user_group: {
      team_id: 7,
      token: 'ugt_group_token_1234',
      name: 'Acme',
      provided_id: 'acme-1',
      properties: null,
    },
    ...overrides,
  };
}

/** Answers `status` with `body` serialised as JSON (a string body is sent as is). */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return ({ res }) => sendJson(res, status, body, headers);
}

export function text(
  status: number,
  body: string,
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

/** Raw bytes, for a body that must not be re-encoded (a BOM, exact sizes). */
export function bytes(status: number, body: Buffer, contentType = 'application/json'): Reply {
  return ({ res }) => {
    res.writeHead(status, { 'content-type': contentType, 'content-length': body.length });
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

/** Sends status, headers and the first part of a body, then never sends the rest. */
export function headersThenStall(status = 200, partial = '{"success": 1, '): Reply {
  return ({ res }) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': 10_000 });
    res.write(partial);
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
 * content-length, honouring back-pressure. `stats` reports how far it got.
 */
export function huge(
  total: number | undefined,
  stats: HugeBodyStats[] = [],
  options: { contentLength?: boolean; chunk?: number } = {},
): Reply {
  return ({ res }) => {
    const size = options.chunk ?? 64 * 1024;
    const chunk = Buffer.alloc(size, 0x20);
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (options.contentLength && total !== undefined) headers['content-length'] = total;
    res.writeHead(200, headers);
    let resolveClosed: () => void = () => {};
    const entry: HugeBodyStats = {
      written: 0,
      closed: new Promise((resolve) => {
        resolveClosed = resolve;
      }),
    };
    stats.push(entry);
    res.on('close', () => resolveClosed());
    const pump = () => {
      while (!res.destroyed) {
        if (total !== undefined && entry.written >= total) {
          res.end();
          return;
        }
        const left = total === undefined ? size : Math.min(size, total - entry.written);
        entry.written += left;
        if (!res.write(left === size ? chunk : chunk.subarray(0, left))) {
          res.once('drain', pump);
          return;
        }
      }
    };
    pump();
  };
}

/** Sends status, headers and part of the body, then closes the connection mid-body. */
export function headersThenDestroy(status = 200, partial = '{"success": 1, '): Reply {
  return ({ req, res }) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': 10_000 });
    res.write(partial, () => setTimeout(() => req.socket.destroy(), 20));
  };
}
