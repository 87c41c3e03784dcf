/**
 * What a server answers, run in-process (`runMain`: the same main, argv, env and streams as the
 * binary; nothing here needs a process of its own): a server that answers with 100,000-level
 * nesting in every position, with terminal escape sequences in every field that
 * reaches a message, a hint, a --debug line or --json, with numbers JSON.parse would change; and
 * the real Django REST Framework service (test/kit/drf.ts), in both routings.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, test } from 'vitest';
import { controlCharacters } from '../../src/platform/io.js';
import {
  type DrfSite,
  describeRun,
  djangoRequiredInCi,
  drfSites,
  expectFailure,
  hasRealDrf,
  makeSandbox,
  okBody,
  runMain,
  STACK_LINE,
  startServer,
  type TestServer,
  userGroup,
} from '../kit/index.js';

const API_TOKEN = 'api_hostile_suite_5e1d0c9b';
const OLD_TOKEN = 'ugt_old_hostile_token_0042';
const GET = ['get', '--id', 'acme', '--name', 'Acme Corp'];
const ROTATE = ['rotate', '--yes', '--current-token-stdin'];
const DEPTH = 100_000;
/** Terminal-driving sequences: CSI (7-bit and C1), OSC title set, BEL, a cursor move. */
const EVIL = '\u001b[2J\u001b]0;pwned\u0007\u009b31m\u009d8;;http://x\u0007\u0085';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
});

/** A server that answers every request with `status` and this exact body text. */
async function answering(
  status: number,
  text: string,
  headers: Record<string, string> = {},
): Promise<TestServer> {
  const server = await startServer(({ res }) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(text);
  });
  cleanup.push(server.close);
  return server;
}

const env = { UGS_API_TOKEN: API_TOKEN };
const run = (server: TestServer, args: string[], stdin?: string) =>
  runMain([...args, '--base-url', server.url], { env, ...(stdin !== undefined && { stdin }) });

/** No crash: no stack overflow, no "unexpected failure", no stack (--debug prints one). */
function expectNoCrash(result: Awaited<ReturnType<typeof runMain>>): void {
  const all = result.stdout + result.stderr;
  expect(all, describeRun(result)).not.toContain('Maximum call stack');
  expect(all, describeRun(result)).not.toContain('unexpected failure');
  if (!result.args.includes('--debug')) expect(all, describeRun(result)).not.toMatch(STACK_LINE);
}

const deepArray = (inner = '1') => `${'['.repeat(DEPTH)}${inner}${']'.repeat(DEPTH)}`;
const deepObject = (inner = '1') => `${'{"k":'.repeat(DEPTH)}${inner}${'}'.repeat(DEPTH)}`;
const group = (extra: string) =>
  `{"provided_id":"acme","name":"Acme","team_id":7,"token":"ugt_new_deep_0001"${extra}}`;

describe.concurrent('100,000 levels of nesting in every answer position', () => {
  const valid: [string, string][] = [
    [
      'user_group.properties',
      `{"success":1,"user_group":${group(`,"properties":${deepObject()}`)}}`,
    ],
    ['an extra user_group field', `{"success":1,"user_group":${group(`,"extra":${deepArray()}`)}}`],
    ['an extra top-level field', `{"success":1,"meta":${deepArray()},"user_group":${group('')}}`],
  ];
  for (const [where, text] of valid) {
    for (const [label, args, stdin] of [
      ['get (table)', GET, undefined],
      ['get --json', [...GET, '--json'], undefined],
      ['get --field token', [...GET, '--field', 'token'], undefined],
      ['get --debug', [...GET, '--debug'], undefined],
      ['rotate (table)', ROTATE, OLD_TOKEN],
      ['rotate --json', [...ROTATE, '--json'], OLD_TOKEN],
      ['rotate --field token', [...ROTATE, '--field', 'token'], OLD_TOKEN],
    ] as const) {
      test(`${where}: ${label} succeeds`, async () => {
        const server = await answering(200, text);
        const result = await run(server, [...args], stdin);
        expectNoCrash(result);
        expect(result.code, describeRun(result)).toBe(0);
        if (label.endsWith('--field token')) expect(result.stdout).toBe('ugt_new_deep_0001\n');
        if (label.endsWith('--json')) {
          // Whitespace is all that may change.
          expect(result.stdout.replace(/\s/g, '')).toBe(text);
        }
      });
    }
  }

  test('--field of a deep field prints it compactly', async () => {
    const server = await answering(200, valid[0]?.[1] ?? '');
    const result = await run(server, [...GET, '--field', 'properties']);
    expectNoCrash(result);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe(`${deepObject()}\n`);
  });

  const unusable: [string, string][] = [
    ['success', `{"success":${deepArray()},"user_group":${group('')}}`],
    ['user_group', `{"success":1,"user_group":${deepArray()}}`],
    ['user_group.token', `{"success":1,"user_group":{"token":${deepArray('"t"')}}}`],
    ['the whole answer', deepArray()],
  ];
  for (const [where, text] of unusable) {
    test(`deep ${where}: get is exit 1, rotate exit 5 (it may have rotated)`, async () => {
      const server = await answering(200, text);
      const [get, rotate, rotateJson] = await Promise.all([
        run(server, GET),
        run(server, ROTATE, OLD_TOKEN),
        run(server, [...ROTATE, '--json'], OLD_TOKEN),
      ]);
      for (const result of [get, rotate, rotateJson]) expectNoCrash(result);
      expectFailure(get, 1);
      const { hint } = expectFailure(rotate, 5);
      expect(hint).toContain('--field token');
      expect(rotateJson.code, describeRun(rotateJson)).toBe(5);
    });
  }

  test('a deep error body: exit 1, and --json prints it whole', async () => {
    const text = `{"detail":${deepObject()},"name":${deepArray('"x"')}}`;
    const server = await answering(400, text);
    const [plain, json, debug] = await Promise.all([
      run(server, GET),
      run(server, [...GET, '--json']),
      run(server, [...GET, '--debug']),
    ]);
    for (const result of [plain, json, debug]) expectNoCrash(result);
    expectFailure(plain, 1);
    expect(json.code, describeRun(json)).toBe(1);
    expect(json.stdout.replace(/\s/g, '')).toBe(text);
    expect(debug.code, describeRun(debug)).toBe(1);
    expect(debug.stderr).toContain('[debug] < {"detail":{"k":{"k":');
  });
});

describe.concurrent('escape sequences from the server never reach the terminal raw', () => {
  const raw = (text: string) => text.match(controlCharacters()) ?? [];
  /** stderr lines may only hold their own newline; stdout the newlines of its JSON too. */
  const expectClean = (result: Awaited<ReturnType<typeof runMain>>) => {
    expect(raw(result.stderr.replace(/\n/g, '')), describeRun(result)).toEqual([]);
    expect(raw(result.stdout.replace(/\n/g, '')), describeRun(result)).toEqual([]);
  };

  const bodies: [string, number, string, Record<string, string>][] = [
    ['detail', 400, JSON.stringify({ detail: EVIL }), {}],
    ['error', 500, JSON.stringify({ success: 0, error: EVIL }), {}],
    ['a field name and message', 400, JSON.stringify({ [`na${EVIL}me`]: [EVIL] }), {}],
    ['a text/plain body', 502, `${EVIL}\nmore`, { 'content-type': 'text/plain' }],
    ['an HTML body', 404, `<h1>${EVIL}</h1>`, { 'content-type': 'text/html' }],
    ['a 401 detail', 401, JSON.stringify({ detail: EVIL }), { 'www-authenticate': 'Token' }],
  ];
  for (const [where, status, text, headers] of bodies) {
    test(`${where} (HTTP ${status}): message, hint, --json and --debug`, async () => {
      const server = await answering(status, text, headers);
      const results = await Promise.all([
        run(server, GET),
        run(server, [...GET, '--json']),
        run(server, [...GET, '--debug']),
        run(server, [...ROTATE, '--json', '--debug'], OLD_TOKEN),
      ]);
      for (const result of results) {
        expect(result.code, describeRun(result)).not.toBe(0);
        expectNoCrash(result);
        expectClean(result);
      }
    });
  }

  test('a successful answer with escapes: --json writes them as \\u escapes', async () => {
    const text = JSON.stringify(
      okBody({ note: EVIL, user_group: userGroup({ name: EVIL, provided_id: 'acme' }) }),
    );
    const server = await answering(200, text, { 'x-evil': '\u009b31m' });
    const [json, debug] = await Promise.all([
      run(server, [...GET, '--json']),
      run(server, [...GET, '--json', '--debug']),
    ]);
    for (const result of [json, debug]) {
      expect(result.code, describeRun(result)).toBe(0);
      expectClean(result);
    }
    expect(JSON.parse(json.stdout).note).toBe(EVIL);
    expect(json.stdout).toContain('\\u009b31m');
  });

  test('a redirect Location with escapes is named, escaped', async () => {
    const server = await startServer(({ req }) => {
      req.socket.end(
        Buffer.from(
          `HTTP/1.1 302 Found\r\nLocation: http://evil.example/\u009b31m\u0085\r\nContent-Length: 0\r\n\r\n`,
          'latin1',
        ),
      );
    });
    cleanup.push(server.close);
    const result = await run(server, ROTATE, OLD_TOKEN);
    const { error } = expectFailure(result, 1);
    expect(error).toContain('http://evil.example/');
    expect(error).toContain('the token was not rotated');
    expectClean(result);
  });
});

describe.concurrent('--json prints the numbers as the server sent them', () => {
  test('big integers, 1e400 and 1.50 survive, in a result and in an error body', async () => {
    const numbers = '"big":12345678901234567890123,"huge":1e400,"f":1.50';
    const ok = await answering(200, `{"success":1,${numbers},"user_group":${group('')}}`);
    const bad = await answering(400, `{"detail":"no",${numbers}}`);
    const [okRun, badRun] = await Promise.all([
      run(ok, [...GET, '--json']),
      run(bad, [...GET, '--json']),
    ]);
    expect(okRun.code, describeRun(okRun)).toBe(0);
    expect(badRun.code, describeRun(badRun)).toBe(1);
    for (const result of [okRun, badRun]) {
      expect(result.stdout).toContain('"big": 12345678901234567890123');
      expect(result.stdout).toContain('"huge": 1e400');
      expect(result.stdout).toContain('"f": 1.50');
    }
  });

  test('an error body that quotes the API token is printed without it', async () => {
    const server = await answering(400, JSON.stringify({ detail: `bad token ${API_TOKEN}` }));
    const result = await run(server, [...GET, '--json']);
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout + result.stderr).not.toContain(API_TOKEN);
    expect(JSON.parse(result.stdout).detail).toBe('bad token [REDACTED]');
  });
});

describe.concurrent('API tokens that cannot be sent are refused, nothing sent', () => {
  for (const [what, token] of [
    ['a newline', 'tok-en-part\nrest-of-token'],
    ['a space', 'tok-en-part rest-of-token'],
    ['a control character', 'tok-en-part\u0001rest'],
    ['a non-ASCII letter', 'tok-en-partérest'],
  ] as const) {
    test(`UGS_API_TOKEN with ${what}: exit 3 naming the variable; rotate is not exit 5`, async () => {
      const server = await answering(200, JSON.stringify(okBody()));
      const [get, rotate] = await Promise.all([
        runMain([...GET, '--base-url', server.url], { env: { UGS_API_TOKEN: token } }),
        runMain([...ROTATE, '--base-url', server.url], {
          env: { UGS_API_TOKEN: token },
          stdin: OLD_TOKEN,
        }),
      ]);
      for (const result of [get, rotate]) {
        const { error } = expectFailure(result, 3);
        expect(error).toMatch(/^UGS_API_TOKEN contains /);
        expect(result.stderr).not.toContain('tok-en-part');
      }
      expect(server.requests).toHaveLength(0);
    });
  }

  test('a profile whose saved token has a line break: exit 3 naming the profile', async () => {
    const server = await answering(200, JSON.stringify(okBody()));
    const sandbox = makeSandbox();
    mkdirSync(sandbox.configDir, { recursive: true, mode: 0o700 });
    writeFileSync(
      sandbox.configPath,
      JSON.stringify({ profiles: { staging: { baseUrl: server.url, apiToken: 'tok-en\r\n' } } }),
      { mode: 0o600 },
    );
    const result = await runMain([...ROTATE, '--profile', 'staging'], {
      sandbox,
      stdin: OLD_TOKEN,
    });
    const { error, hint } = expectFailure(result, 3);
    expect(error).toBe(
      'the API token saved in profile "staging" contains a line break at position 7 of 8',
    );
    expect(hint).toContain('ugs login --profile staging');
    expect(server.requests).toHaveLength(0);
  });

  test('login --with-token refuses it: exit 2, nothing saved', async () => {
    const server = await answering(200, JSON.stringify(okBody()));
    const sandbox = makeSandbox();
    const result = await runMain(['login', '--base-url', server.url, '--with-token'], {
      sandbox,
      stdin: 'tok-en-part rest-of-token\n',
    });
    const { error } = expectFailure(result, 2);
    expect(error).toContain('contains a space or tab');
    expect(result.stderr).not.toContain('tok-en-part');
    expect(existsSync(sandbox.configPath)).toBe(false);
  });
});

djangoRequiredInCi();
describe('against the real DRF service, the built binary', {
  concurrent: true,
  skip: !hasRealDrf(),
}, () => {
  const drf = drfSites(API_TOKEN);
  const drfRun = (server: DrfSite, args: string[], options: { stdin?: string } = {}) =>
    runMain([...args, '--base-url', server.url], { env, ...options });

  test('APPEND_SLASH: get and rotate follow the slash redirect once, with a note on stderr', async () => {
    const server = await drf('api/user/');
    const get = await drfRun(server, [...GET, '--field', 'token']);
    expect(get.code, describeRun(get)).toBe(0);
    const token = get.stdout.trim();
    expect(get.stderr).toMatch(/^note: .*--api-path \/api\/user\//m);
    const rotate = await drfRun(server, [...ROTATE, '--json'], { stdin: token });
    expect(rotate.code, describeRun(rotate)).toBe(0);
    expect(JSON.parse(rotate.stdout).user_group.token).not.toBe(token);
    expect(rotate.stderr).toMatch(/^note: the service redirected \/api\/user to \/api\/user\//m);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /api/user',
      'GET /api/user/',
      'POST /api/user',
      'POST /api/user/',
    ]);
  });

  test('--api-path /api/user/ (flag, env, or saved by login) skips the redirect', async () => {
    const server = await drf('api/user/');
    const [flag, viaEnv] = await Promise.all([
      drfRun(server, [...GET, '--api-path', '/api/user/']),
      runMain([...GET, '--base-url', server.url], {
        env: { ...env, UGS_API_PATH: '/api/user/' },
      }),
    ]);
    for (const result of [flag, viaEnv]) {
      expect(result.code, describeRun(result)).toBe(0);
      // The only note left is get-or-create's own (the group existed); none about a redirect.
      expect(result.stderr).not.toMatch(/note:.*redirect/i);
    }
    const sandbox = makeSandbox();
    const login = await runMain(
      ['login', '--base-url', server.url, '--api-path', '/api/user/', '--with-token'],
      { sandbox, stdin: `${API_TOKEN}\n` },
    );
    expect(login.code, describeRun(login)).toBe(0);
    const [saved, status] = await Promise.all([
      runMain(GET, { sandbox }),
      runMain(['status', '--json'], { sandbox }),
    ]);
    expect(saved.code, describeRun(saved)).toBe(0);
    expect(saved.stderr).not.toMatch(/note:.*redirect/i);
    expect(JSON.parse(status.stdout)).toMatchObject({
      apiPath: '/api/user/',
      apiPathSource: 'profile',
    });
    expect(server.requests.every((r) => r.url === '/api/user/')).toBe(true);
  });

  test('an --api-path that is not a path is a usage error', async () => {
    const server = await drf('api/user');
    const result = await drfRun(server, [...GET, '--api-path', 'api/user']);
    expect(expectFailure(result, 2).error).toBe('--api-path must start with "/"');
    expect(server.requests).toHaveLength(0);
  });

  test('exact routing: no redirect; field errors, unknown token, unknown rotation token', async () => {
    const server = await drf('api/user');
    const [ok, long, wrongToken, unknown] = await Promise.all([
      drfRun(server, GET),
      drfRun(server, ['get', '--id', 'acme', '--name', 'n'.repeat(300)]),
      runMain([...GET, '--base-url', server.url, '--profile', 'staging'], {
        env: { UGS_API_TOKEN: 'not-the-token-1234' },
      }),
      drfRun(server, ROTATE, { stdin: 'ugt_unknown_token_9999' }),
    ]);
    expect(ok.code, describeRun(ok)).toBe(0);
    expect(ok.stderr).not.toContain('note:');
    expect(expectFailure(long, 1).error).toBe(
      'the service answered HTTP 400: name: Ensure this field has no more than 255 characters.',
    );
    const auth = expectFailure(wrongToken, 3);
    expect(auth.error).toBe('the API token was not accepted (HTTP 401: Invalid token.)');
    expect(auth.hint).toContain('UGS_API_TOKEN');
    expect(auth.hint).toContain('ugs login --profile staging');
    const notFound = expectFailure(unknown, 1);
    expect(notFound.error).toMatch(
      /^the service answered HTTP 404 to POST http:\/\/127\.0\.0\.1:\d+\/\S*api\/user\/?: Not found\.$/,
    );
    expect(notFound.hint).toContain('rotated already');
  });

  test('a slash --api-path on the exact routing: HTML 404, base-URL hint, HTML never shown', async () => {
    const server = await drf('api/user');
    const result = await drfRun(server, [...GET, '--api-path', '/api/user/']);
    const { error, hint } = expectFailure(result, 1);
    expect(error).not.toContain('<');
    expect(hint).toContain('--base-url');
  });

  test('rotate and an HTML 500 after the commit: exit 5 with the recovery command', async () => {
    const server = await drf('api/user');
    const get = await drfRun(server, [...GET, '--field', 'token']);
    await server.failNextRotation();
    const rotate = await drfRun(server, ROTATE, { stdin: get.stdout.trim() });
    const { error, hint } = expectFailure(rotate, 5);
    expect(error).toContain('HTTP 500');
    expect(hint).toContain('ugs get --id');
  });
});
