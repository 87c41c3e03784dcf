import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator, Environment } from './auth.js';
import type { FaultInjector, FaultKind } from './faults.js';
import type { Store, UserGroup } from './store.js';
import { parseGetUserBody, parseRotateBody, RequestError } from './validation.js';

export const MAX_BODY_BYTES = 1024 * 1024;

const API_PATH = '/api/user';

export interface HandlerDeps {
  store: Store;
  auth: Authenticator;
  faults: FaultInjector;
  slowMs: number;
  /** Records that the store changed in memory. */
  markChanged(): void;
  /** Resolves once every change made so far is durable. */
  sync(): Promise<void>;
  /** A delay that close() can cut short, so shutdown never waits for a 'slow' fault. */
  sleep(ms: number): Promise<void>;
}

type Body = Record<string, unknown>;

function sendJson(
  res: ServerResponse,
  status: number,
  body: Body,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

// What a reverse proxy in front of a real service sends when the service is down: HTML, not JSON.
const BAD_GATEWAY_HTML =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n' +
  '<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n';

function sendBadGatewayHtml(res: ServerResponse): void {
  res.writeHead(502, {
    'Content-Type': 'text/html',
    'Content-Length': String(Buffer.byteLength(BAD_GATEWAY_HTML)),
  });
  res.end(BAD_GATEWAY_HTML);
}

export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  return q < 0 ? raw : raw.slice(0, q);
}

/**
 * Reads the body up to MAX_BODY_BYTES. Past the limit it stops keeping data and fails at once;
 * node discards the rest of the body after the response, so memory stays bounded and a client
 * that is still sending gets its 400 instead of a reset connection. 400 rather than 413: issue 3
 * groups an oversized body with the other invalid bodies, and clients treat them alike.
 */
function readBody(req: IncomingMessage): Promise<string> {
  const tooLarge = () =>
    new RequestError(400, `request body is larger than the limit of ${MAX_BODY_BYTES} bytes`);
  const declared = Number(req.headers['content-length']);
  if (declared > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  // After a 'slow' fault the client may already be gone, and 'close' would never fire again.
  if (req.destroyed) return Promise.reject(new Error('client closed the request'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      fn();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        chunks.length = 0;
        settle(() => reject(tooLarge()));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => settle(() => resolve(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', (err) => settle(() => reject(err)));
    req.on('close', () => settle(() => reject(new Error('client closed the request'))));
  });
}

function userGroupJson(group: UserGroup): Body {
  return {
    team_id: group.teamId,
    token: group.token,
    name: group.name,
    provided_id: group.providedId,
  };
}

export class RequestHandler {
  constructor(private readonly deps: HandlerDeps) {}

  /** Handles one request; never rejects. Returns the injected fault, if any, for the log. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<FaultKind | undefined> {
    // Faults come first, before any state is read or changed, like a failure in front of the
    // service: a client must not be able to tell whether a faulted request did anything.
    const fault = this.deps.faults.next();
    switch (fault) {
      case 'reset':
        req.socket.destroy();
        return fault;
      case '500':
        sendJson(res, 500, { success: 0, error: 'injected fault: internal error' });
        return fault;
      case '502-html':
        sendBadGatewayHtml(res);
        return fault;
      case '429':
        sendJson(
          res,
          429,
          { success: 0, error: 'injected fault: too many requests' },
          { 'Retry-After': '1' },
        );
        return fault;
      case 'slow':
        await this.deps.sleep(this.deps.slowMs);
        break;
      case undefined:
        break;
    }
    try {
      const [status, body] = await this.route(req);
      sendJson(res, status, body);
    } catch (err) {
      if (err instanceof RequestError) {
        sendJson(res, err.status, { success: 0, error: err.message }, err.headers);
      } else if (!res.headersSent && !req.destroyed) {
        const why = err instanceof Error ? err.message : String(err);
        sendJson(res, 500, { success: 0, error: `emulator internal error: ${why}` });
      } else {
        res.destroy();
      }
    }
    return fault;
  }

  private async route(req: IncomingMessage): Promise<[number, Body]> {
    const path = pathOf(req.url);
    if (path !== API_PATH) {
      throw new RequestError(404, `no such path ${path}; the API has only ${API_PATH}`);
    }
    if (req.method !== 'GET' && req.method !== 'POST') {
      throw new RequestError(405, `method ${req.method} is not allowed on ${API_PATH}`, {
        Allow: 'GET, POST',
      });
    }
    const environment = this.deps.auth.environmentOf(req.headers.authorization);
    if (environment === undefined) {
      throw new RequestError(
        401,
        'missing or invalid API token: send the header "Authorization: Token <API_TOKEN>"',
        { 'WWW-Authenticate': 'Token' },
      );
    }
    const text = await readBody(req);
    return req.method === 'GET' ? this.getUser(environment, text) : this.rotate(environment, text);
  }

  private async getUser(environment: Environment, text: string): Promise<[number, Body]> {
    const input = parseGetUserBody(text);
    const { created, group } = this.deps.store.getOrCreate(environment, input);
    if (created) this.deps.markChanged();
    // The answer is taken before waiting, so it shows exactly the state the wait covers even if
    // the group is rotated meanwhile.
    const body = {
      success: 1,
      new_user_group: created,
      user_group: { ...userGroupJson(group), properties: group.properties },
    };
    // Also when found: a concurrent request may have created it and not yet saved it, and a
    // token must never be handed out before it is durable.
    await this.durable();
    return [200, body];
  }

  private async rotate(environment: Environment, text: string): Promise<[number, Body]> {
    const currentToken = parseRotateBody(text);
    const group = this.deps.store.rotate(environment, currentToken);
    if (!group) {
      // 404, see parseRotateBody. The token is not echoed: it is a credential.
      throw new RequestError(
        404,
        `no user group in the ${environment} environment has this current_token`,
      );
    }
    this.deps.markChanged();
    const body = { success: 1, user_group: { ...userGroupJson(group), environment } };
    await this.durable();
    return [200, body];
  }

  private async durable(): Promise<void> {
    try {
      await this.deps.sync();
    } catch (err) {
      // The change stays in memory and goes out with the next successful save; the client
      // only learns that this answer is not known to be durable.
      const why = err instanceof Error ? err.message : String(err);
      throw new RequestError(500, `could not save the emulator state: ${why}`);
    }
  }
}
