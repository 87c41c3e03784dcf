import { type Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: Record<string, unknown> | undefined;
}

export interface CallOptions {
  method?: string;
  path?: string;
  /** API token for "Authorization: Token <t>"; null sends no Authorization header. */
  token?: string | null;
  /** A string is sent as is; anything else is JSON-encoded; undefined sends no body. */
  body?: unknown;
  headers?: Record<string, string>;
  agent?: Agent;
  /** Send the body chunked, in pieces, without a content-length. */
  chunked?: boolean;
}

/**
 * A minimal client on node:http. It sets content-length itself: node sends a GET body
 * without any length, and the server would then read the body as the next request.
 */
export function call(baseUrl: string, opts: CallOptions = {}): Promise<Reply> {
  const url = new URL(opts.path ?? '/api/user', baseUrl);
  const payload =
    opts.body === undefined
      ? undefined
      : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (payload && opts.chunked) headers['transfer-encoding'] = 'chunked';
  else if (payload) headers['content-length'] = String(payload.length);
  if (opts.token !== null && opts.token !== undefined)
    headers.authorization = `Token ${opts.token}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: opts.method ?? 'GET', headers, ...(opts.agent ? { agent: opts.agent } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Record<string, unknown> | undefined;
          try {
            const parsed: unknown = JSON.parse(text);
            if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
              json = parsed as Record<string, unknown>;
            }
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    if (payload && opts.chunked) {
      for (let at = 0; at < payload.length; at += 64 * 1024) {
        req.write(payload.subarray(at, at + 64 * 1024));
      }
      req.end();
    } else {
      req.end(payload);
    }
  });
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
export function userGroup(reply: Reply): UserGroupReply {
  const group = reply.json?.user_group;
  if (reply.status !== 200 || reply.json?.success !== 1 || typeof group !== 'object' || !group) {
    throw new Error(`expected a successful reply, got ${reply.status} ${reply.text}`);
  }
  return group as UserGroupReply;
}

export function getUser(baseUrl: string, token: string, body: unknown): Promise<Reply> {
  return call(baseUrl, { method: 'GET', token, body });
}

export function rotate(baseUrl: string, token: string, currentToken: string): Promise<Reply> {
  return call(baseUrl, { method: 'POST', token, body: { current_token: currentToken } });
}

export function tokenOf(
  emulator: { apiTokens: { token: string; environment: string }[] },
  environment: 'Customer' | 'Testing',
): string {
  const found = emulator.apiTokens.find((t) => t.environment === environment);
  if (!found) throw new Error(`no ${environment} API token`);
  return found.token;
}
