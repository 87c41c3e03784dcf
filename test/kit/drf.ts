/**
 * A scripted reply (server.ts) that answers the way the real service does: Django REST Framework behind
 * Django's CommonMiddleware, DEBUG=False. Measured answers (Django 3.2, DRF 3.14), byte for byte
 * where it matters:
 * - `Authorization: Token <key>` only; a missing header is 401 "Authentication credentials were
 *   not provided.", an unknown key 401 "Invalid token.", both with `WWW-Authenticate: Token`;
 * - field errors are 400 `{"field": ["message", ...]}`; bad JSON is 400 `{"detail": "JSON parse
 *   error - ..."}`; another method is 405; another content type 415; an unknown token to rotate is
 *   `get_object_or_404`'s 404 `{"detail": "Not found."}`;
 * - `routing: 'slash'` (APPEND_SLASH): the API lives at `/api/user/`, and `/api/user` gets a 301
 *   to it with an empty body, for GET and POST alike; `routing: 'exact'`: it lives at `/api/user`;
 * - any other path is Django's HTML 404 page; `failAfterCommit` makes the next rotation commit and
 *   then answer Django's HTML 500 page, as a crash while rendering the answer would.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { ROOT } from './binary.js';
import { closedPort, type RecordedRequest, type Reply, startServer } from './server.js';

export interface DrfGroup {
  team_id: number;
  token: string;
  name: string;
  provided_id: string;
  properties: unknown;
  api_environment_tag: string;
}

export interface DrfServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  groups: Map<string, DrfGroup>;
  /** The next rotation commits, then the view crashes (HTML 500). */
  failAfterCommit: boolean;
  close(): Promise<void>;
}

export const DJANGO_404 =
  '<!doctype html>\n<html lang="en">\n<head>\n  <title>Not Found</title>\n</head>\n<body>\n  <h1>Not Found</h1><p>The requested resource was not found on this server.</p>\n</body>\n</html>\n';
export const DJANGO_500 =
  '<!doctype html>\n<html lang="en">\n<head>\n  <title>Server Error (500)</title>\n</head>\n<body>\n  <h1>Server Error (500)</h1><p></p>\n</body>\n</html>\n';

export async function startDrf(options: {
  routing: 'slash' | 'exact';
  apiTokens: readonly string[];
  /** A path prefix the whole site sits under, e.g. `/ugs`. */
  prefix?: string;
}): Promise<DrfServer> {
  const prefix = options.prefix ?? '';
  const apiPath = `${prefix}/api/user${options.routing === 'slash' ? '/' : ''}`;
  const groups = new Map<string, DrfGroup>();
  let nextTeam = 1;
  let tokenCounter = 0;
  const newToken = () =>
    `drf_ug_${(++tokenCounter).toString(16).padStart(8, '0')}${'ab'.repeat(8)}`;
  const state = { failAfterCommit: false };

  const send = (res: ServerResponse, status: number, body: unknown, extra = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      vary: 'Accept',
      allow: 'GET, POST, OPTIONS',
      'content-length': Buffer.byteLength(text),
      ...extra,
    });
    res.end(text);
  };
  const html = (res: ServerResponse, status: number, page: string) => {
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': Buffer.byteLength(page),
    });
    res.end(page);
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const url = new URL(req.url ?? '/', 'http://drf.invalid');
    if (options.routing === 'slash' && url.pathname === `${prefix}/api/user`) {
      // CommonMiddleware: before any view, for every method, the body dropped.
      res.writeHead(301, {
        location: `${prefix}/api/user/${url.search}`,
        'content-type': 'text/html; charset=utf-8',
        'content-length': 0,
      });
      res.end();
      return;
    }
    if (url.pathname !== apiPath) return html(res, 404, DJANGO_404);
    const auth = req.headers.authorization;
    if (auth === undefined) {
      return send(
        res,
        401,
        { detail: 'Authentication credentials were not provided.' },
        { 'www-authenticate': 'Token' },
      );
    }
    const match = /^Token (\S+)$/.exec(auth);
    if (match === null || !options.apiTokens.includes(match[1] as string)) {
      return send(res, 401, { detail: 'Invalid token.' }, { 'www-authenticate': 'Token' });
    }
    if (req.method !== 'GET' && req.method !== 'POST') {
      return send(res, 405, { detail: `Method "${req.method}" not allowed.` });
    }
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) {
      return send(res, 415, {
        detail: `Unsupported media type "${req.headers['content-type'] ?? ''}" in request.`,
      });
    }
    let data: unknown;
    try {
      data = JSON.parse(body);
    } catch (error) {
      return send(res, 400, { detail: `JSON parse error - ${(error as Error).message}` });
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      return send(res, 400, {
        non_field_errors: ['Invalid data. Expected a dictionary, but got list.'],
      });
    }
    const fields = data as Record<string, unknown>;
    if (req.method === 'GET') {
      const errors: Record<string, string[]> = {};
      for (const key of ['name', 'user_group_id']) {
        const value = fields[key];
        if (value === undefined) errors[key] = ['This field is required.'];
        else if (typeof value !== 'string') errors[key] = ['Not a valid string.'];
        else if (value.length > 255) {
          errors[key] = ['Ensure this field has no more than 255 characters.'];
        }
      }
      if (Object.keys(errors).length > 0) return send(res, 400, errors);
      const id = fields.user_group_id as string;
      const existing = groups.get(id);
      if (existing !== undefined) {
        return send(res, 200, { success: 1, new_user_group: false, user_group: existing });
      }
      const group: DrfGroup = {
        team_id: nextTeam++,
        token: newToken(),
        name: fields.name as string,
        provided_id: id,
        properties: fields.properties ?? null,
        api_environment_tag: 'Customer',
      };
      groups.set(id, group);
      return send(res, 200, { success: 1, new_user_group: true, user_group: group });
    }
    if (typeof fields.current_token !== 'string') {
      return send(res, 400, { current_token: ['This field is required.'] });
    }
    const group = [...groups.values()].find((entry) => entry.token === fields.current_token);
    if (group === undefined) return send(res, 404, { detail: 'Not found.' });
    group.token = newToken();
    if (state.failAfterCommit) {
      state.failAfterCommit = false;
      return html(res, 500, DJANGO_500);
    }
    const { properties: _properties, ...answer } = group;
    return send(res, 200, { success: 1, user_group: answer });
  };

  const reply: Reply = ({ req, res, request }) => handle(req, res, request.body);
  const server = await startServer(reply);
  return {
    url: `${server.url}${prefix}`,
    port: server.port,
    requests: server.requests,
    groups,
    get failAfterCommit() {
      return state.failAfterCommit;
    },
    set failAfterCommit(value: boolean) {
      state.failAfterCommit = value;
    },
    close: () => server.close(),
  };
}

// ---- the real thing: Django REST Framework in Python, when installed ----

const PYTHON = process.env.UGS_TEST_PYTHON ?? '/usr/bin/python3';
const SERVICE = join(ROOT, 'test', 'e2e', 'drf', 'drf_service.py');

/** Python with Django and DRF, for the suite against the real thing (skipped, with a warning, without). */
export const hasRealDrf =
  spawnSync(PYTHON, ['-c', 'import django, rest_framework'], { stdio: 'ignore' }).status === 0;
if (!hasRealDrf) {
  console.warn(
    `skipping the DRF end-to-end suite: ${PYTHON} cannot import django and rest_framework (apt-get install python3-django python3-djangorestframework)`,
  );
}

export interface RealDrf {
  url: string;
  stop(): Promise<void>;
}

/** test/e2e/drf/drf_service.py on a free port, accepting `apiToken`. */
export async function startRealDrf(apiToken: string, extra: readonly string[]): Promise<RealDrf> {
  const port = await closedPort();
  const child: ChildProcess = spawn(
    PYTHON,
    [SERVICE, '--port', String(port), '--token', apiToken, ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the DRF service exited early:\n${log}`);
    try {
      await fetch(`${url}/`);
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`the DRF service did not listen within 20 s:\n${log}`);
      }
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.on('exit', done));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
