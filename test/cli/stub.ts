/**
 * A small in-memory User Group Service on 127.0.0.1 for tests that spawn the built binary.
 * It implements Get User (GET, get-or-create) and Create User (POST, token rotation) at
 * `{prefix}/api/user`, records every request it sees, and lets a test script faults: a canned
 * answer, a raw non-JSON answer, a socket destroyed after the request was read, or no answer.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: IncomingMessage['headers'];
  /** The raw body text. */
  body: string;
  /** The body parsed as JSON, or undefined when it was not JSON. */
  json: unknown;
}

export interface StubUserGroup {
  team_id: number;
  token: string;
  name: string;
  provided_id: string;
  properties: unknown;
}

export type Fault =
  /** Answer with this status and JSON body instead of the real operation. */
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  /** Answer with an arbitrary body and content type. */
  | { kind: 'raw'; status: number; contentType: string; text: string }
  /** Read the whole request, then destroy the socket without answering. */
  | { kind: 'destroy' }
  /** Read the whole request and never answer (until the stub closes). */
  | { kind: 'hang' };

export interface SentResponse {
  status: number;
  body: unknown;
}

export class StubService {
  /** API tokens the stub accepts in `Authorization: Token <...>`. */
  readonly apiTokens = new Set<string>();
  readonly groups = new Map<string, StubUserGroup>();
  readonly requests: RecordedRequest[] = [];
  /** The JSON bodies the stub sent, in order (faults included when they are JSON). */
  readonly responses: SentResponse[] = [];
  /** One-shot faults, consumed one per request before the persistent fault is considered. */
  readonly faultQueue: Fault[] = [];
  /** A fault applied to every request once the queue is empty. */
  fault: Fault | undefined;
  /** Extra field added to rotated groups, as the service's unnamed environment tag. */
  environmentField = 'environment';

  private server: Server | undefined;
  private nextTeamId = 100;
  private readonly hanging = new Set<ServerResponse>();

  constructor(
    apiTokens: readonly string[] = [],
    /** Path prefix the service lives under, e.g. `/prefix`. */
    readonly prefix = '',
  ) {
    for (const token of apiTokens) this.apiTokens.add(token);
  }

  get port(): number {
    if (!this.server) throw new Error('stub not started');
    return (this.server.address() as AddressInfo).port;
  }

  /** Base URL of the stub (with its prefix, no trailing slash). */
  get url(): string {
    return `http://127.0.0.1:${this.port}${this.prefix}`;
  }

  get lastResponse(): SentResponse | undefined {
    return this.responses.at(-1);
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Adds a group directly, as if an earlier Get User had created it. */
  seedGroup(id: string, name: string, token = newToken()): StubUserGroup {
    const group: StubUserGroup = {
      team_id: this.nextTeamId++,
      token,
      name,
      provided_id: id,
      properties: null,
    };
    this.groups.set(id, group);
    return group;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    this.requests.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body,
      json,
    });

    const fault = this.faultQueue.shift() ?? this.fault;
    if (fault) {
      this.applyFault(fault, req, res);
      return;
    }

    if ((req.url ?? '').split('?')[0] !== `${this.prefix}/api/user`) {
      this.send(res, 404, { detail: 'Not found.' });
      return;
    }
    const auth = req.headers.authorization ?? '';
    const match = /^Token (.+)$/.exec(auth);
    if (!match?.[1] || !this.apiTokens.has(match[1])) {
      this.send(res, 401, { detail: 'Invalid token.' });
      return;
    }
    if (!isObject(json)) {
      this.send(res, 400, { success: 0, error: 'request body must be a JSON object' });
      return;
    }
    if (req.method === 'GET') this.getUser(json, res);
    else if (req.method === 'POST') this.rotate(json, res);
    else this.send(res, 405, { detail: `Method "${req.method}" not allowed.` });
  }

  private getUser(json: Record<string, unknown>, res: ServerResponse): void {
    const { name, user_group_id: id, properties } = json;
    if (typeof name !== 'string' || typeof id !== 'string') {
      this.send(res, 400, { success: 0, error: 'name and user_group_id are required' });
      return;
    }
    const existing = this.groups.get(id);
    if (existing) {
      this.send(res, 200, { success: 1, new_user_group: false, user_group: { ...existing } });
      return;
    }
    const group: StubUserGroup = {
      team_id: this.nextTeamId++,
      token: newToken(),
      name,
      provided_id: id,
      properties: properties === undefined ? null : properties,
    };
    this.groups.set(id, group);
    this.send(res, 200, { success: 1, new_user_group: true, user_group: { ...group } });
  }

  private rotate(json: Record<string, unknown>, res: ServerResponse): void {
    const current = json.current_token;
    const group = [...this.groups.values()].find((g) => g.token === current);
    if (typeof current !== 'string' || !group) {
      this.send(res, 200, { success: 0, error: 'current_token does not match any user group' });
      return;
    }
    group.token = newToken();
    const { properties: _omitted, ...rest } = group;
    this.send(res, 200, {
      success: 1,
      user_group: { ...rest, [this.environmentField]: 'Customer' },
    });
  }

  private applyFault(fault: Fault, req: IncomingMessage, res: ServerResponse): void {
    switch (fault.kind) {
      case 'json':
        this.send(res, fault.status ?? 200, fault.body, fault.headers);
        return;
      case 'raw':
        res.writeHead(fault.status, { 'content-type': fault.contentType });
        res.end(fault.text);
        return;
      case 'destroy':
        req.socket.destroy();
        return;
      case 'hang':
        this.hanging.add(res);
        return;
    }
  }

  private send(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    this.responses.push({ status, body });
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  }
}

export function newToken(): string {
  return `ugt_${randomBytes(12).toString('hex')}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Starts a stub accepting the given API tokens. */
export function startStub(apiTokens: readonly string[], prefix = ''): Promise<StubService> {
  return new StubService(apiTokens, prefix).start();
}

/** A loopback port with nothing listening on it (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts a stub for the current test only; it is closed when the test finishes. */
export async function stubForTest(apiTokens: readonly string[], prefix = ''): Promise<StubService> {
  const stub = await startStub(apiTokens, prefix);
  onTestFinished(() => stub.close());
  return stub;
}
