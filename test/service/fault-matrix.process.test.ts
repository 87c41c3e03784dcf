/**
 * The fault matrix: `ugs get` and `ugs rotate` (the built binary) against a local server that
 * misbehaves in every way the issue lists. Each case checks the exit code, the one-line error
 * (and hint), that no stack trace leaks, and what the server received: how many requests, and
 * that each was the documented request.
 *
 * Counts follow the contract: `get` is retried twice (3 requests) on connection errors and on
 * 429/502/503/504, never on other statuses or timeouts; `rotate` is sent exactly once whatever
 * happens, except when the connection is refused (which proves nothing reached the server).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  acmeBody,
  acmeGroup,
  closedPort,
  delay,
  describeRun,
  expectFailure,
  type Reply,
  type RunResult,
  runMain,
  runUgs,
  selfSignedCertificate,
  sendJson,
  startServer,
  type TestServer,
  tempDir,
} from '../kit/index.js';

/** The group these cases' server answers: the one the commands ask for. */
const userGroup = acmeGroup;
const okBody = acmeBody;

const API_TOKEN = 'api_fault_matrix_7f3a9c2e5b1d';
const OLD_TOKEN = 'ugt_old_fault_matrix_4e8b2a';
const GET_ARGS = ['get', '--id', 'acme', '--name', 'Acme Corp'];
const ROTATE_ARGS = ['rotate', '--yes', '--current-token-stdin'];
const ENV = { UGS_API_TOKEN: API_TOKEN };
/** A file that exists but holds no certificate. */
const NOT_A_CERT = new URL('../../package.json', import.meta.url).pathname;

type Command = 'get' | 'rotate';

interface Expectation {
  code: number;
  /** Requests the server must have received. */
  requests: number;
  error?: RegExp;
  hint?: RegExp;
}

interface FaultCase {
  name: string;
  handler: Reply;
  args?: string[];
  get: Expectation;
  rotate: Expectation;
  /** Extra checks on a run (stderr must not dump a body, timing, ...). */
  check?: (command: Command, result: RunResult, server: TestServer) => void | Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Handlers

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  ({ res }) =>
    sendJson(res, status, body, headers);

const raw =
  (
    status: number,
    contentType: string,
    text: string,
    headers: Record<string, string> = {},
  ): Reply =>
  ({ res }) => {
    res.writeHead(status, {
      'content-type': contentType,
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  };

/** The request is read, then the socket is destroyed without a byte of answer. */
const closeBeforeAnswer: Reply = ({ req }) => {
  req.socket.destroy();
};

/** Status, headers and part of the body, then a TCP reset. */
const resetMidBody: Reply = ({ req, res }) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4000' });
  res.write('{"success": 1, "user_group": {"token": "ugt_', async () => {
    // A reset throws away what the client has not read yet: sent before ugs read the headers,
    // it is a reset before any answer (which a GET retries), not one mid-body.
    await clientHasRead(req.socket.remotePort ?? 0);
    req.socket.resetAndDestroy();
  });
};

/** Resolves once the loopback client on `port` has nothing left unread (Linux /proc/net/tcp). */
async function clientHasRead(port: number): Promise<void> {
  const local = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (let tries = 0; tries < 1000; tries++) {
    const row = readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .find((fields) => fields[1]?.endsWith(local));
    // fields[4] is tx_queue:rx_queue; the request was read, so the queue holds only our bytes.
    if (row?.[4]?.endsWith(':00000000')) return;
    await setTimeout(10);
  }
  throw new Error(`the client on port ${port} did not read what was sent within 10 s`);
}

/** Status, headers and part of the body, then nothing: the connection stays open. */
const stallBody: Reply = ({ res }) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4000' });
  res.write('{"success": 1, ');
};

/** Reads the request and never answers. */
const neverAnswer: Reply = () => {};

/** Fails the first `failures` requests with `fail`, then answers normally. */
const failThenOk =
  (failures: number, fail: Reply): Reply =>
  (context) =>
    context.index < failures ? fail(context) : okAnswer(context);

/** The documented success answer, for GET (get) or POST (rotate). */
const okAnswer: Reply = ({ req, res }) => {
  if (req.method === 'POST') {
    sendJson(res, 200, { success: 1, user_group: userGroup({ token: 'ugt_new_after_rotation' }) });
  } else {
    sendJson(res, 200, okBody());
  }
};

const FIVE_MIB = 5 * 1024 * 1024;
const hugeBody: Reply = ({ res }) => {
  const text = `{"success": 1, "pad": "${'x'.repeat(FIVE_MIB)}"}`;
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
};

const HTML_MARKER = 'nginx-gateway-page-marker';
const HTML_502 = `<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>${HTML_MARKER}</h1>${'<p>filler</p>'.repeat(200)}</body></html>`;

// ---------------------------------------------------------------------------------------------
// Assertions shared by every case

const READ_TOKEN_HINT = /ugs get --id .* --name .* --must-exist --field token/;

/** Every request the server saw is the documented one, whole. */
function expectDocumentedRequests(command: Command, server: TestServer): void {
  for (const request of server.requests) {
    expect(request.method).toBe(command === 'get' ? 'GET' : 'POST');
    expect(request.url).toBe('/api/user');
    expect(request.headers.authorization).toBe(`Token ${API_TOKEN}`);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers.accept).toBe('application/json');
    expect(request.headers['user-agent']).toMatch(/^ugs\/\S+ node\/\S+$/);
    expect(JSON.parse(request.body)).toEqual(
      command === 'get'
        ? { name: 'Acme Corp', user_group_id: 'acme' }
        : { current_token: OLD_TOKEN },
    );
  }
}

/** In-process: each case checks exit codes, output and requests, which need no process. */
function run(command: Command, baseUrl: string, extra: string[] = []): Promise<RunResult> {
  const args = [...(command === 'get' ? GET_ARGS : ROTATE_ARGS), '--base-url', baseUrl, ...extra];
  return runMain(args, { env: ENV, ...(command === 'rotate' && { stdin: `${OLD_TOKEN}\n` }) });
}

/**
 * "Ends after about --timeout 0.5" as a ratio, not a wall-clock bound a loaded runner can fail:
 * at most twice a run of the same command against a server that answers (an error) after
 * 0.5 s, measured now. A deadline that did not fire, or one per retry, overruns it.
 */
async function expectAboutTheTimeout(command: Command, result: RunResult): Promise<void> {
  const server = await startServer(delay(500, json(500, { success: 0, error: 'slow' })));
  try {
    const baseline = await run(command, server.url);
    expect(baseline.code, describeRun(baseline)).not.toBe(0);
    expect(
      result.elapsedMs,
      `${Math.round(result.elapsedMs)} ms; an answer after 0.5 s took ${Math.round(baseline.elapsedMs)} ms`,
    ).toBeLessThan(2 * baseline.elapsedMs);
  } finally {
    await server.close();
  }
}

async function runCase(fault: FaultCase, command: Command): Promise<void> {
  const server = await startServer(fault.handler);
  try {
    const result = await run(command, server.url, fault.args);
    const want = fault[command];
    const context = `${fault.name} / ${command}\n${describeRun(result)}`;
    if (want.code === 0) {
      expect(result.code, context).toBe(0);
      expect(result.stderr, context).not.toMatch(/error:/);
    } else {
      const { error, hint } = expectFailure(result, want.code);
      if (want.error) expect(error, context).toMatch(want.error);
      if (want.hint) expect(hint, context).toMatch(want.hint);
    }
    expect(server.requests.length, `requests received\n${context}`).toBe(want.requests);
    expectDocumentedRequests(command, server);
    await fault.check?.(command, result, server);
  } finally {
    await server.close();
  }
}

/** Milliseconds between consecutive requests. */
function gaps(server: TestServer): number[] {
  return server.requests.slice(1).map((r, i) => r.at - (server.requests[i]?.at ?? 0));
}

/** The (field, value) rows of the default output into a pipe: `key<TAB>value` lines. */
function tableRows(stdout: string): [string, string][] {
  return stdout
    .split('\n')
    .filter((line) => line.includes('\t'))
    .map((line) => {
      const at = line.indexOf('\t');
      return [line.slice(0, at), line.slice(at + 1)];
    });
}

// ---------------------------------------------------------------------------------------------
// The matrix

const CASES: FaultCase[] = [
  {
    name: 'server closes the socket before answering',
    handler: closeBeforeAnswer,
    get: { code: 4, requests: 3, error: /127\.0\.0\.1:\d+.*before an answer/ },
    rotate: {
      code: 5,
      requests: 1,
      error: /may or may not have been rotated/,
      hint: READ_TOKEN_HINT,
    },
  },
  {
    name: 'server closes the socket once, then answers',
    handler: failThenOk(1, closeBeforeAnswer),
    get: { code: 0, requests: 2 },
    rotate: { code: 5, requests: 1, error: /may or may not/, hint: READ_TOKEN_HINT },
  },
  {
    name: 'connection reset mid-body',
    handler: resetMidBody,
    // Retries are for connection errors before a response; this one came after.
    get: { code: 4, requests: 1, error: /broke while reading the answer/ },
    rotate: {
      code: 5,
      requests: 1,
      error: /may or may not have been rotated/,
      hint: READ_TOKEN_HINT,
    },
  },
  {
    name: 'headers, then the body stalls (--timeout 0.5)',
    handler: stallBody,
    args: ['--timeout', '0.5'],
    get: { code: 4, requests: 1, error: /no complete answer .* within 0\.5 s/, hint: /--timeout/ },
    rotate: { code: 5, requests: 1, error: /within 0\.5 s.*may or may not/, hint: READ_TOKEN_HINT },
    check: expectAboutTheTimeout,
  },
  {
    name: 'never answers (--timeout 0.5)',
    handler: neverAnswer,
    args: ['--timeout', '0.5'],
    get: { code: 4, requests: 1, error: /no complete answer .* within 0\.5 s/, hint: /--timeout/ },
    rotate: {
      code: 5,
      requests: 1,
      error: /may or may not have been rotated/,
      hint: READ_TOKEN_HINT,
    },
    check: expectAboutTheTimeout,
  },
  {
    name: 'HTTP 500 with a JSON error',
    handler: json(500, { success: 0, error: 'database on fire' }),
    get: { code: 1, requests: 1, error: /^the service answered HTTP 500: database on fire$/ },
    rotate: { code: 5, requests: 1, error: /HTTP 500: database on fire.*may or may not/ },
  },
  {
    name: 'HTTP 502 with an HTML page',
    handler: raw(502, 'text/html; charset=utf-8', HTML_502),
    get: {
      code: 1,
      requests: 3,
      error: /HTTP 502: a text\/html; charset=utf-8 body/,
      hint: /later/,
    },
    rotate: {
      code: 5,
      requests: 1,
      error: /HTTP 502/,
      hint: /rotation may have happened.*--field token/,
    },
    check: (_command, result) => {
      expect(result.stderr).not.toContain(HTML_MARKER);
      expect(result.stderr).not.toMatch(/<html|<!DOCTYPE/i);
    },
  },
  {
    name: 'HTTP 502 twice, then an answer',
    handler: failThenOk(2, raw(502, 'text/html', HTML_502)),
    get: { code: 0, requests: 3 },
    rotate: { code: 5, requests: 1, error: /HTTP 502/ },
  },
  {
    name: 'HTTP 504 with an empty body',
    handler: raw(504, 'text/plain', ''),
    get: { code: 1, requests: 3, error: /HTTP 504: a text\/plain body/ },
    // A gateway timeout may hide a rotation that happened behind it.
    rotate: {
      code: 5,
      requests: 1,
      error: /HTTP 504/,
      hint: /rotation may have happened.*--field token/,
    },
  },
  {
    name: 'HTTP 503 with Retry-After: 1',
    handler: json(503, { success: 0, message: 'maintenance' }, { 'retry-after': '1' }),
    get: { code: 1, requests: 3, error: /HTTP 503: maintenance/ },
    rotate: { code: 5, requests: 1, error: /HTTP 503: maintenance/ },
    check: (command, _result, server) => {
      // Without Retry-After the backoff would be 150-600 ms: waiting ~1 s proves it was read.
      if (command === 'get')
        for (const gap of gaps(server)) expect(gap).toBeGreaterThanOrEqual(900);
    },
  },
  {
    name: 'HTTP 429 with Retry-After as an HTTP date',
    handler: ({ res }) =>
      sendJson(
        res,
        429,
        { success: 0, detail: 'slow down' },
        { 'retry-after': new Date(Date.now() + 2_000).toUTCString() },
      ),
    get: { code: 1, requests: 3, error: /HTTP 429 \(rate limited\): slow down/ },
    rotate: { code: 1, requests: 1, error: /HTTP 429 \(rate limited\): slow down/ },
    check: (command, _result, server) => {
      // The date is 1-2 s ahead (whole seconds): the wait must follow it, not the short backoff.
      if (command === 'get')
        for (const gap of gaps(server)) expect(gap).toBeGreaterThanOrEqual(900);
    },
  },
  {
    name: 'HTTP 401',
    handler: json(401, { success: 0, error: 'Invalid token.' }),
    get: {
      code: 3,
      requests: 1,
      error: /not accepted \(HTTP 401: Invalid token\.\)/,
      hint: /ugs login/,
    },
    rotate: { code: 3, requests: 1, error: /HTTP 401/, hint: /ugs login/ },
  },
  {
    name: 'HTTP 403 (not JSON)',
    handler: raw(403, 'text/plain', 'Forbidden'),
    get: { code: 3, requests: 1, error: /HTTP 403/, hint: /ugs login/ },
    rotate: { code: 3, requests: 1, error: /HTTP 403/, hint: /ugs login/ },
  },
  {
    name: 'HTTP 404 (a plain web server)',
    handler: raw(404, 'text/html', '<h1>Not Found</h1>'),
    get: {
      code: 1,
      requests: 1,
      error: /HTTP 404 to GET http:\/\/127\.0\.0\.1:\d+\/api\/user: a text\/html body/,
      hint: /--base-url/,
    },
    rotate: { code: 1, requests: 1, error: /HTTP 404/ },
  },
  {
    name: 'HTTP 405',
    handler: json(405, { detail: 'Method "GET" not allowed.' }),
    get: {
      code: 1,
      requests: 1,
      error: /HTTP 405: Method "GET" not allowed\./,
      hint: /--api-path \/api\/user\//,
    },
    rotate: { code: 1, requests: 1, error: /HTTP 405/ },
  },
  ...(['error', 'message', 'detail'] as const).map(
    (key): FaultCase => ({
      name: `200 with success 0 and "${key}"`,
      handler: json(200, { success: 0, [key]: `the group is locked (${key})` }),
      get: { code: 1, requests: 1, error: new RegExp(`^the group is locked \\(${key}\\)$`) },
      rotate: { code: 1, requests: 1, error: /the group is locked/, hint: /check the token/ },
    }),
  ),
  {
    name: '200 with success 0 and no message',
    handler: json(200, { success: 0 }),
    get: { code: 1, requests: 1, error: /failure \(success: 0\) without a message/ },
    rotate: { code: 1, requests: 1, error: /without a message/ },
  },
  {
    name: '200 with a non-JSON body',
    handler: raw(200, 'text/plain', `ok ${HTML_MARKER}`),
    get: { code: 1, requests: 1, error: /HTTP 200 with a body that is not JSON \(text\/plain\)/ },
    rotate: { code: 5, requests: 1, error: /not JSON/ },
    check: (_command, result) => expect(result.stderr).not.toContain(HTML_MARKER),
  },
  {
    name: '200 with JSON that is not an object',
    handler: json(200, [okBody()]),
    get: { code: 1, requests: 1, error: /JSON that is not an object/ },
    rotate: { code: 5, requests: 1, error: /not an object/, hint: /rotation may have happened/ },
  },
  {
    name: '200 without user_group',
    handler: json(200, { success: 1, new_user_group: true }),
    get: { code: 1, requests: 1, error: /no "user_group" object/ },
    rotate: { code: 5, requests: 1, error: /no "user_group" object/, hint: READ_TOKEN_HINT },
  },
  {
    name: '200 with a token that is not a string',
    handler: json(200, { success: 1, user_group: userGroup({ token: 123456 }) }),
    get: { code: 1, requests: 1, error: /no "token" string/ },
    rotate: { code: 5, requests: 1, error: /no "token" string/ },
  },
  {
    name: 'a 5 MiB body',
    handler: hugeBody,
    get: { code: 1, requests: 1, error: /larger than 1 MiB/ },
    rotate: { code: 5, requests: 1, error: /larger than 1 MiB/ },
  },
  {
    name: 'a body with a UTF-8 BOM',
    handler: raw(200, 'application/json', `\ufeff${JSON.stringify(okBody())}`),
    get: { code: 0, requests: 1 },
    rotate: { code: 0, requests: 1 },
    check: (_command, result) => expect(result.stdout).toContain('ugt_hardening_token_0001'),
  },
  {
    name: 'success as "1"',
    handler: json(200, okBody({ success: '1' })),
    get: { code: 0, requests: 1 },
    rotate: { code: 0, requests: 1 },
    check: (command, result) =>
      expect(result.stderr).toContain(
        command === 'get' ? 'Found user group acme' : 'Rotated token of user group acme',
      ),
  },
  {
    name: 'success as true',
    handler: json(200, okBody({ success: true })),
    get: { code: 0, requests: 1 },
    rotate: { code: 0, requests: 1 },
    check: (_command, result) => expect(result.stdout).toContain('ugt_hardening_token_0001'),
  },
];

describe.concurrent('fault matrix: get and rotate against a misbehaving server', () => {
  for (const fault of CASES) {
    // The runs are in-process: a case timed against a baseline runs alone, so that no other case's
    // work (a 5 MiB body parsed on the same event loop) delays its timers.
    const timed = fault.check === expectAboutTheTimeout ? test.sequential : test;
    timed(fault.name, async () => {
      await Promise.all([runCase(fault, 'get'), runCase(fault, 'rotate')]);
    });
  }

  test('connection refused: exit 4; get and rotate both retry (nothing reached the server)', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    const [get, rotate, getTrace, rotateTrace] = await Promise.all([
      run('get', url),
      run('rotate', url),
      run('get', url, ['--debug']),
      run('rotate', url, ['--debug']),
    ]);
    for (const result of [get, rotate]) {
      const { error, hint } = expectFailure(result, 4);
      expect(error).toBe(`could not connect to 127.0.0.1:${port}: connection refused`);
      expect(hint).toMatch(/--base-url/);
    }
    // The trace shows every attempt: three each, since a refusal proves nothing was sent.
    expect(getTrace.code).toBe(4);
    expect(rotateTrace.code).toBe(4);
    expect(getTrace.stderr.match(/^\[debug\] > GET /gm), describeRun(getTrace)).toHaveLength(3);
    expect(rotateTrace.stderr.match(/^\[debug\] > POST /gm), describeRun(rotateTrace)).toHaveLength(
      3,
    );
    expect(rotateTrace.stderr).not.toContain(OLD_TOKEN);
    expect(rotateTrace.stderr).not.toContain(API_TOKEN);
  });

  test('a host name that does not resolve: exit 4, rotate not reported as "maybe rotated"', async () => {
    const url = 'http://ugs-test.invalid:1';
    const [get, rotate] = await Promise.all([
      run('get', url, ['--insecure-http']),
      run('rotate', url, ['--insecure-http']),
    ]);
    for (const result of [get, rotate]) {
      const { error, hint } = expectFailure(result, 4);
      expect(error).toMatch(/^could not resolve host ugs-test\.invalid/);
      expect(hint).toMatch(/host name|network/);
    }
  });

  test('an http:// base URL to a non-loopback host is refused without --insecure-http', async () => {
    const result = await run('get', 'http://ugs-test.invalid:1');
    const { error } = expectFailure(result, 2);
    expect(error).toMatch(/http/);
  });

  test('extra unknown fields are shown in the table and kept in --json', async () => {
    const body = {
      success: 1,
      new_user_group: true,
      request_id: 'req-5d41402abc4b',
      user_group: userGroup({
        environment: 'Testing',
        region: 'eu-west-3',
        quota: { seats: 25, burst: null },
        archived_at: null,
      }),
    };
    const server = await startServer(json(200, body));
    try {
      const [table, asJson, rotateTable, rotateJson] = await Promise.all([
        run('get', server.url),
        run('get', server.url, ['--json']),
        run('rotate', server.url),
        run('rotate', server.url, ['--json']),
      ]);
      for (const result of [table, asJson, rotateTable, rotateJson]) {
        expect(result.code, describeRun(result)).toBe(0);
      }
      for (const result of [table, rotateTable]) {
        const rows = tableRows(result.stdout);
        const context = describeRun(result);
        expect(rows, context).toEqual([
          ['provided_id', 'acme'],
          ['name', 'Acme Corp'],
          ['team_id', '7'],
          ['token', 'ugt_hardening_token_0001'],
          ['environment', 'Testing'],
          ['properties', '{}'],
          // Unknown fields after the known ones, in the order the server sent them.
          ['region', 'eu-west-3'],
          ['quota', '{"seats":25,"burst":null}'],
          ['archived_at', 'null'],
        ]);
      }
      expect(table.stderr).toContain('Created user group acme');
      for (const result of [asJson, rotateJson]) expect(JSON.parse(result.stdout)).toEqual(body);
      expect(server.requests).toHaveLength(4);
    } finally {
      await server.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// TLS with a self-signed certificate

describe.concurrent('TLS with a self-signed certificate', () => {
  let certFile = '';
  let tls: { key: string; cert: string };

  beforeAll(() => {
    const made = selfSignedCertificate();
    certFile = made.certFile;
    tls = { key: made.key, cert: made.cert };
  });

  test('untrusted: exit 4 with a hint naming --ca-file; nothing reaches the server', async () => {
    const server = await startServer({ tls }, okAnswer);
    try {
      const [get, rotate] = await Promise.all([run('get', server.url), run('rotate', server.url)]);
      for (const result of [get, rotate]) {
        // A failed handshake proves the request was not sent: rotate is exit 4, not 5.
        const { error, hint } = expectFailure(result, 4);
        expect(error).toMatch(/^TLS connection to 127\.0\.0\.1:\d+ failed: .*self-signed/);
        expect(hint).toContain('--ca-file');
        expect(hint).toContain('NODE_EXTRA_CA_CERTS');
      }
      expect(server.requests).toHaveLength(0);
      expect(server.connections).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });

  test('trusted through NODE_EXTRA_CA_CERTS', async () => {
    const server = await startServer({ tls }, okAnswer);
    try {
      const env = { ...ENV, NODE_EXTRA_CA_CERTS: certFile };
      const [get, rotate] = await Promise.all([
        runUgs([...GET_ARGS, '--base-url', server.url], { env }),
        runUgs([...ROTATE_ARGS, '--base-url', server.url], { env, stdin: OLD_TOKEN }),
      ]);
      expect(get.code, describeRun(get)).toBe(0);
      expect(get.stderr).toContain('Found user group acme');
      expect(rotate.code, describeRun(rotate)).toBe(0);
      expect(rotate.stdout).toContain('token\tugt_new_after_rotation\n');
      expect(server.requests.map((r) => r.method).sort()).toEqual(['GET', 'POST']);
    } finally {
      await server.close();
    }
  });

  test('trusted through --ca-file (and UGS_CA_FILE)', async () => {
    const server = await startServer({ tls }, okAnswer);
    try {
      const [get, rotate] = await Promise.all([
        run('get', server.url, ['--ca-file', certFile]),
        runUgs([...ROTATE_ARGS, '--base-url', server.url], {
          env: { ...ENV, UGS_CA_FILE: certFile },
          stdin: OLD_TOKEN,
        }),
      ]);
      expect(get.code, describeRun(get)).toBe(0);
      expect(rotate.code, describeRun(rotate)).toBe(0);
      expect(server.requests).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  test('--ca-file that is missing or not a certificate is a usage error before any request', async () => {
    const server = await startServer({ tls }, okAnswer);
    try {
      const [missing, notPem] = await Promise.all([
        run('get', server.url, ['--ca-file', join(tempDir('noca'), 'nope.pem')]),
        run('get', server.url, ['--ca-file', NOT_A_CERT]),
      ]);
      expect(expectFailure(missing, 2).error).toMatch(/cannot read --ca-file/);
      expect(expectFailure(notPem, 2).error).toMatch(/contains no certificate \(PEM or DER\)/);
      expect(server.connections).toBe(0);
    } finally {
      await server.close();
    }
  });
});
