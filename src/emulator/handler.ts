import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmbedSecret } from '../jwt/embed.js';
import { type Dialect, tokenHeader } from '../service/dialect.js';
import { PERMISSION_DENIED_DETAIL, type Wires, wireOf } from '../service/operation.js';
import { fingerprint } from '../text/redact.js';
import type { HttpMethod } from '../transport/http.js';
import type { Authenticator } from './auth.js';
import type { FaultInjector, FaultKind } from './faults.js';
import type { PublicRoute, PublicRouteContext, Route, RouteAnswer } from './route.js';
import type { Store } from './store.js';
import { type SlidingWindowThrottle, throttledDetail } from './throttle.js';
import { RequestError } from './validation.js';

const MAX_BODY_BYTES = 1024 * 1024;

/** The one path of the API, as routed without `--trailing-slash`. */
const API_PATH = '/api/user';
/** The path as the vendor documents it and Django routes it: with the trailing slash. */
const API_PATH_SLASH = '/api/user/';

/** The operations the emulator serves (its caller's registry): each one's route answers it. */
export type ServedOperations = readonly (Wires & {
  /**
   * Whether it may change data (the registry's `writesData`): a read-only API token is refused
   * it with DRF's 403, whichever operation it is and whatever its body.
   */
  writes: boolean;
  /**
   * Its route (`./route.ts` of the operation's folder), loaded on first use: only `ugs serve`
   * runs it. Absent for a request that is another operation's route seen from elsewhere.
   */
  route?(): Promise<{ route: Route }>;
})[];

/**
 * A route of the emulator alone, which no operation of the service has (the embed JWT check):
 * the same method and path in every dialect, answered without an API token, since what it is
 * shown (a JWT a dashboard was given) is the credential.
 */
export interface EmulatorOnlyRoute {
  method: HttpMethod;
  path: string;
  route(): Promise<{ route: PublicRoute }>;
}

export interface HandlerDeps {
  store: Store;
  operations: ServedOperations;
  /** The emulator's own routes (none by default). */
  emulatorRoutes?: readonly EmulatorOnlyRoute[];
  /** `--embed-secret`: the keys embed JWTs are minted and checked with. */
  embedSecrets: readonly EmbedSecret[];
  auth: Authenticator;
  faults: FaultInjector;
  slowMs: number;
  /** Route only `/api/user/` and redirect `/api/user` to it, as Django's APPEND_SLASH does. */
  trailingSlash: boolean;
  /**
   * Which wire format it serves: `interface` (one API path), or `explo` or `customer` (the
   * vendor's paths, each ending in `/`, the others redirected there; the token in
   * `Explo-Authorization`).
   */
  dialect: Dialect;
  /** `--rate-limit`: DRF's throttle, per client IP, after authentication. */
  throttle?: SlidingWindowThrottle | undefined;
  /** Records that the store changed in memory. */
  markChanged(): void;
  /** Resolves once every change made so far is durable. */
  sync(): Promise<void>;
  /** A delay that close() can cut short, so shutdown never waits for a 'slow' fault. */
  sleep(ms: number): Promise<void>;
}

type Body = Record<string, unknown>;

/**
 * What a request came to, for the access log: never a token. A route names its own outcomes
 * (`created`, `found`, `rotated`, ...); these are the handler's.
 */
export type Outcome = 'refused' | 'redirected' | 'failed' | 'dropped' | (string & {});

export interface Handled {
  outcome: Outcome;
  /** The user group's `provided_id`, when the request named or reached one. */
  id?: string | undefined;
  /** The fault injected into this request, if any. */
  fault?: FaultKind | undefined;
  /** More for the access log (a refused token's last 4); never a whole token. */
  note?: string | undefined;
  /** A line shown even without `--debug` (RouteAnswer's `notice`). */
  notice?: string | undefined;
}

/** A path's routes, one per method, and its `Allow` header. */
interface PathRoutes {
  byMethod: ReadonlyMap<string, Route>;
  allow: string;
}

/**
 * The paths served and what serves each, from the operations' wire in the dialect served: the
 * one API path with `interface` (an operation per method), a path per operation with `explo`.
 * Only the paths and methods: the routes themselves are loaded on the first request.
 */
function pathsOf(
  operations: ServedOperations,
  dialect: Dialect,
  trailingSlash: boolean,
): Map<string, Map<HttpMethod, ServedOperations[number]>> {
  const paths = new Map<string, Map<HttpMethod, ServedOperations[number]>>();
  for (const operation of operations) {
    if (operation.route === undefined) continue;
    const wire = wireOf(operation, dialect);
    // An operation of another dialect only (the Customer API's read-one) is not served here.
    if (wire === undefined) continue;
    const path = wire.path ?? (trailingSlash ? API_PATH_SLASH : API_PATH);
    let methods = paths.get(path);
    if (methods === undefined) {
      methods = new Map();
      paths.set(path, methods);
    }
    if (methods.has(wire.method)) {
      throw new Error(`two operations use ${wire.method} on ${path}`);
    }
    methods.set(wire.method, operation);
  }
  return paths;
}

async function loadRoutes(
  methods: ReadonlyMap<HttpMethod, ServedOperations[number]>,
): Promise<PathRoutes> {
  const byMethod = new Map<HttpMethod, Route>();
  for (const [method, operation] of methods) {
    if (operation.route !== undefined) byMethod.set(method, (await operation.route()).route);
  }
  return { byMethod, allow: [...byMethod.keys()].join(', ') };
}

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

// nginx's page when the service did not answer within its proxy timeout.
const GATEWAY_TIMEOUT_HTML =
  '<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n' +
  '<center><h1>504 Gateway Time-out</h1></center>\r\n</body>\r\n</html>\r\n';

// Django's own page for a URL that matches no route (DEBUG=False): HTML, not a DRF answer,
// because no view runs. A client pointed at a wrong base URL sees exactly this, byte for byte
// and with Django's bare `text/html` (test/emulator/django-parity.process.test.ts checks it).
const NOT_FOUND_HTML =
  '\n<!doctype html>\n<html lang="en">\n<head>\n  <title>Not Found</title>\n</head>\n<body>\n' +
  '  <h1>Not Found</h1><p>The requested resource was not found on this server.</p>\n</body>\n</html>\n';

function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/html',
    'Content-Length': String(Buffer.byteLength(html)),
  });
  res.end(html);
}

export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  return q < 0 ? raw : raw.slice(0, q);
}

/**
 * Reads the body up to MAX_BODY_BYTES. Past the limit it stops keeping data and fails at once;
 * node discards the rest of the body after the response, so memory stays bounded and a client
 * that is still sending gets its 400 instead of a reset connection. 400 rather than 413: an
 * oversized body is one more invalid body, and clients treat them alike.
 */
function readBody(req: IncomingMessage): Promise<string> {
  const tooLarge = () =>
    RequestError.detail(400, `Request body is larger than the limit of ${MAX_BODY_BYTES} bytes.`);
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

/** Whether a Content-Type names JSON (parameters such as charset allowed), as DRF's parser needs. */
function isJsonContentType(value: string | undefined): boolean {
  const mediaType = (value ?? '').split(';', 1)[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

type PathRoute =
  | { kind: 'api'; path: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'none' };

/**
 * A served path is the API; a path that is one of them without its trailing slash gets Django's
 * APPEND_SLASH redirect, query kept (with `--trailing-slash`, and always with the explo dialect,
 * whose paths all end in `/`). Anything else is an unknown path: without --trailing-slash,
 * `/api/user/` is one (a real service has one routing, and a 404 there tells the user to try the
 * other mode).
 */
function routeOf(url: string | undefined, paths: ReadonlyMap<string, unknown>): PathRoute {
  const raw = url ?? '/';
  const path = pathOf(raw);
  if (paths.has(path)) return { kind: 'api', path };
  if (paths.has(`${path}/`)) {
    return { kind: 'redirect', location: `${path}/${raw.slice(path.length)}` };
  }
  return { kind: 'none' };
}

export class RequestHandler {
  private readonly paths: Map<string, Map<HttpMethod, ServedOperations[number]>>;
  private readonly routes = new Map<string, Promise<PathRoutes>>();
  private readonly ownRoutes: ReadonlyMap<string, EmulatorOnlyRoute>;

  constructor(private readonly deps: HandlerDeps) {
    this.paths = pathsOf(deps.operations, deps.dialect, deps.trailingSlash);
    this.ownRoutes = new Map((deps.emulatorRoutes ?? []).map((own) => [own.path, own]));
  }

  /** Handles one request; never rejects. Returns what it came to, for the log. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<Handled> {
    // Faults come first, before any state is read or changed, like a failure in front of the
    // service: a client must not be able to tell whether a faulted request did anything.
    // 'commit-reset' is the exception by design: it lets the request run, then loses the answer.
    const fault = this.deps.faults.next();
    switch (fault) {
      case 'reset':
        req.socket.destroy();
        return { outcome: 'dropped', fault };
      case '500':
        sendJson(res, 500, { success: 0, detail: 'injected fault: internal error' });
        return { outcome: 'failed', fault };
      case '502-html':
        sendHtml(res, 502, BAD_GATEWAY_HTML);
        return { outcome: 'failed', fault };
      case '504-html':
        sendHtml(res, 504, GATEWAY_TIMEOUT_HTML);
        return { outcome: 'failed', fault };
      case '429':
        sendJson(
          res,
          429,
          { success: 0, detail: 'Request was throttled. Expected available in 1 second.' },
          { 'Retry-After': '1' },
        );
        return { outcome: 'refused', fault };
      case 'slow':
        await this.deps.sleep(this.deps.slowMs);
        break;
      case 'commit-reset':
      case undefined:
        break;
    }
    const own = this.ownRoutes.get(pathOf(req.url));
    const route: PathRoute =
      own === undefined ? routeOf(req.url, this.paths) : { kind: 'api', path: pathOf(req.url) };
    if (route.kind === 'redirect') {
      // Django's CommonMiddleware: before authentication, for every method, with no body.
      res.writeHead(301, {
        Location: route.location,
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Length': '0',
      });
      res.end();
      return { outcome: 'redirected', fault };
    }
    if (route.kind === 'none') {
      sendHtml(res, 404, NOT_FOUND_HTML);
      return { outcome: 'refused', fault };
    }
    try {
      const answer =
        own === undefined ? await this.api(req, route.path) : await this.emulatorOnly(req, own);
      // With commit-reset the change is durable (api() waited for the save); only the answer is
      // lost, and the log still says what was done.
      if (fault === 'commit-reset') req.socket.destroy();
      else sendJson(res, answer.status, answer.body);
      return { outcome: answer.outcome, id: answer.id, fault, notice: answer.notice };
    } catch (err) {
      if (RequestError.is(err)) {
        // Every refusal keeps the interface's envelope: success 0, then DRF's own fields.
        sendJson(res, err.status, { success: 0, ...err.body }, err.headers);
        return { outcome: 'refused', fault, id: err.log?.id, note: err.log?.note };
      }
      if (!res.headersSent && !req.destroyed) {
        const why = err instanceof Error ? err.message : String(err);
        sendJson(res, 500, { success: 0, detail: `emulator internal error: ${why}` });
      } else {
        res.destroy();
      }
      return { outcome: 'failed', fault };
    }
  }

  /** In DRF's order: authentication, then the method, then the body. */
  private async api(req: IncomingMessage, path: string): Promise<RouteAnswer> {
    let loading = this.routes.get(path);
    if (loading === undefined) {
      loading = loadRoutes(this.paths.get(path) ?? new Map());
      this.routes.set(path, loading);
    }
    const routes = await loading;
    // The dialect's own header: with explo a request carrying only `Authorization` has sent no
    // credentials at all, as the vendor's service sees it.
    const header = req.headers[tokenHeader(this.deps.dialect)];
    const sent = Array.isArray(header) ? header.join(', ') : header;
    const caller = this.deps.auth.authenticate(sent);
    if ('refused' in caller) {
      const presented = /^\s*token\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
      const error = RequestError.detail(401, caller.refused, { 'WWW-Authenticate': 'Token' });
      // Which API token was refused, by its last 4, as `--debug` shows tokens on the client side.
      throw presented === undefined ? error : error.withLog(`token=${fingerprint(presented)}`);
    }
    // DRF's check_permissions: after authentication (a bad token stays a 401), before the
    // throttle, the method's handler and the body. A read-only token may call only what reads;
    // what writes is the operation's own fact, so the store is never touched and the body never
    // read for a call it may not make. A method no operation takes here is left to the 405.
    const served = this.paths.get(path)?.get((req.method ?? '') as HttpMethod);
    if (caller.readOnly && served?.writes === true) {
      const presented = /^\s*token\s+(\S+)\s*$/i.exec(sent ?? '')?.[1] ?? '';
      throw RequestError.detail(403, PERMISSION_DENIED_DETAIL).withLog(
        `token=${fingerprint(presented)} read-only`,
      );
    }
    const { environment } = caller;
    // DRF's check_throttles runs after authentication and before the method is dispatched.
    const verdict = this.deps.throttle?.check(req.socket.remoteAddress ?? '');
    if (verdict !== undefined && !verdict.allowed) {
      throw RequestError.detail(429, throttledDetail(verdict.waitSeconds), {
        'Retry-After': String(verdict.waitSeconds),
      });
    }
    const route = routes.byMethod.get(req.method ?? '');
    if (route === undefined) {
      throw RequestError.detail(405, `Method "${req.method}" not allowed.`, {
        Allow: routes.allow,
      });
    }
    return route.handle({ ...(await this.request(req)), environment });
  }

  /** One of the emulator's own routes: no API token, then the method and the body, as api(). */
  private async emulatorOnly(req: IncomingMessage, own: EmulatorOnlyRoute): Promise<RouteAnswer> {
    if (req.method !== own.method) {
      throw RequestError.detail(405, `Method "${req.method}" not allowed.`, { Allow: own.method });
    }
    const context = await this.request(req);
    const { route } = await own.route();
    return route.handle(context);
  }

  /**
   * What every route is given of a request it serves: its JSON body (DRF's parser refuses another
   * media type with 415, an empty body whatever its type is none), its query, and the store.
   */
  private async request(req: IncomingMessage): Promise<PublicRouteContext> {
    const text = await readBody(req);
    if (text !== '' && !isJsonContentType(req.headers['content-type'])) {
      throw RequestError.detail(
        415,
        `Unsupported media type "${req.headers['content-type'] ?? ''}" in request.`,
      );
    }
    return {
      store: this.deps.store,
      dialect: this.deps.dialect,
      text,
      query: new URL(req.url ?? '/', 'http://emulator.invalid').searchParams,
      markChanged: () => this.deps.markChanged(),
      durable: () => this.durable(),
      embedSecrets: this.deps.embedSecrets,
    };
  }

  private async durable(): Promise<void> {
    try {
      await this.deps.sync();
    } catch (err) {
      // The change stays in memory and goes out with the next successful save; the client
      // only learns that this answer is not known to be durable.
      const why = err instanceof Error ? err.message : String(err);
      throw RequestError.detail(500, `could not save the emulator state: ${why}`);
    }
  }
}
