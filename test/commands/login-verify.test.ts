/**
 * `ugs login` checks the token before saving it, with doctor's probe: a GET of
 * the API path with `{}`. The service's own 400 (fields missing, or its error shape) means the
 * token passed; 401/403 it was refused (exit 3); no answer exit 4; any other answer (another
 * server's 400 included) exit 1 naming the status, content type and URL tried. Nothing is saved
 * unless the token was accepted, or `--no-verify` skipped the check.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  closedPort,
  describeRun,
  expectFailure,
  json,
  makeSandbox,
  readConfig,
  runMain,
  type Sandbox,
  serviceForTest,
  startEmulator,
  text,
  useService,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-verify-test-1234abcd';
const WRONG_TOKEN = 'apitoken-verify-wrong-9876zyxw';

const service = useService([API_TOKEN]);

function login(sandbox: Sandbox, token: string, extra: string[] = [], url = service.url) {
  return runMain(['login', '--base-url', url, '--with-token', ...extra], {
    sandbox,
    stdin: `${token}\n`,
  });
}

/** The requests this test sent: the service is shared by the file. */
function requestsSince(count: number) {
  return service.requests.slice(count);
}

describe('ugs login verifies the token', () => {
  it('accepted: one GET with {} to the API path, saved, and one next: line', async () => {
    const sb = makeSandbox();
    const before = service.requests.length;
    const result = await login(sb, API_TOKEN);
    expect(result.code, describeRun(result)).toBe(0);
    const sent = requestsSince(before);
    expect(sent.map((r) => [r.method, r.url, r.json])).toEqual([['GET', '/api/user', {}]]);
    expect(readConfig(sb)).toEqual({
      profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } },
    });
    expect(result.stdout).toBe('');
    const next = result.stderr.split('\n').filter((line) => line.startsWith('next:'));
    expect(next).toEqual(['next: ugs get --id <id> --name <name>']);
    expect(result.stderr).not.toContain(API_TOKEN);
  });

  it('names the profile in the next: line when it is not the one used without --profile', async () => {
    const sb = makeSandbox();
    const result = await login(sb, API_TOKEN, ['--profile', 'staging']);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).toContain('next: ugs get --profile staging --id <id> --name <name>\n');
  });

  it('refused (401): exit 3, nothing saved, an existing profile left byte-identical', async () => {
    const sb = makeSandbox();
    const fresh = await login(sb, WRONG_TOKEN);
    const { error, hint } = expectFailure(fresh, 3);
    expect(error).toMatch(
      /refused the API token: GET http:\/\/127\.0\.0\.1:\d+\/api\/user answered HTTP 401/,
    );
    expect(error).toContain('nothing was saved');
    expect(hint).toBeDefined();
    expect(existsSync(sb.configPath)).toBe(false);
    expect(fresh.stderr).not.toContain(WRONG_TOKEN);

    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
    const saved = readFileSync(sb.configPath);
    expectFailure(await login(sb, WRONG_TOKEN), 3);
    expect(readFileSync(sb.configPath).equals(saved)).toBe(true);
  });

  it('refused (403) is exit 3 too', async () => {
    const sb = makeSandbox();
    // DRF's 403 for an authentication class with no WWW-Authenticate header.
    service.fail(json(403, { detail: 'Authentication credentials were not provided.' }));
    const { error } = expectFailure(await login(sb, API_TOKEN), 3);
    expect(error).toContain('HTTP 403 (Authentication credentials were not provided.)');
    expect(existsSync(sb.configPath)).toBe(false);
  });

  it('no answer: exit 4, nothing saved, a hint to use --no-verify', async () => {
    const sb = makeSandbox();
    const url = `http://127.0.0.1:${await closedPort()}`;
    const { error, hint } = expectFailure(await login(sb, API_TOKEN, [], url), 4);
    expect(error).toMatch(/^could not check the API token: .*; nothing was saved$/);
    expect(hint).toContain('--no-verify');
    expect(existsSync(sb.configPath)).toBe(false);
  });

  it.each([
    [
      'an HTML 404 (a wrong base URL)',
      text(404, '<html>Not Found</html>', 'text/html'),
      404,
      /--base-url/,
    ],
    [
      'a 405 (the service wants the slash)',
      json(405, { detail: 'Method "GET" not allowed.' }),
      405,
      /--api-path \/api\/user\//,
    ],
    ['a 502 from a gateway', text(502, 'Bad Gateway'), 502, /try again later/],
    ['a 200 (not the User Group Service)', json(200, { ok: true }), 200, /--base-url/],
  ])(
    '%s: exit 1, nothing saved, naming the URL tried and --no-verify',
    async (_what, reply, status, why) => {
      const sb = makeSandbox();
      service.fail(reply);
      const { error, hint } = expectFailure(await login(sb, API_TOKEN), 1);
      expect(error).toContain(`GET ${service.url}/api/user answered HTTP ${status}`);
      expect(error).toContain('nothing was saved');
      expect(hint).toMatch(why);
      expect(hint).toContain('--no-verify');
      expect(existsSync(sb.configPath)).toBe(false);
    },
  );

  // A 400 says the token passed only when it is the service's own refusal of `{}`: nginx, a load
  // balancer or another application answer 400 too, without ever looking at the token.
  it.each([
    [
      "nginx's HTML 400 page",
      text(400, '<html><head><title>400 Bad Request</title></head></html>', 'text/html'),
      'text/html',
    ],
    ['a text/plain 400', text(400, 'Bad Request', 'text/plain'), 'text/plain'],
    [
      'a JSON 400 of another shape',
      json(400, { message: 'Bad Request', statusCode: 400 }),
      'application/json',
    ],
    [
      'field errors for fields the request does not have',
      json(400, { email: ['This field is required.'] }),
      'application/json',
    ],
  ])(
    '%s is not an accepted token: exit 1, nothing saved, naming status, content type, URL and --no-verify',
    async (_what, reply, contentType) => {
      const sb = makeSandbox();
      service.fail(reply);
      const result = await login(sb, API_TOKEN);
      const { error, hint } = expectFailure(result, 1);
      expect(error).toContain(
        `could not check the API token: GET ${service.url}/api/user answered HTTP 400 with ${contentType}`,
      );
      expect(error).toContain("not the service's refusal of an empty request");
      expect(error).toMatch(/; nothing was saved$/);
      expect(hint).toMatch(/another server .*check --base-url/);
      expect(hint).toContain('--no-verify');
      expect(existsSync(sb.configPath)).toBe(false);
      expect(result.stderr).not.toContain(API_TOKEN);
    },
  );

  it.each([
    [
      "DRF's field errors",
      json(400, {
        name: ['This field is required.'],
        user_group_id: ['This field is required.'],
      }),
    ],
    ["the interface's error shape", json(400, { success: 0, error: 'name is required' })],
  ])('%s in a 400: the token was accepted and saved', async (_what, reply) => {
    const sb = makeSandbox();
    service.fail(reply);
    const result = await login(sb, API_TOKEN);
    expect(result.code, describeRun(result)).toBe(0);
    expect(readConfig(sb)).toEqual({
      profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } },
    });
  });

  it.each(['customer', 'explo'] as const)(
    "the vendor's %s API at that URL: the 404/405 hint names --dialect, after read-only probes only",
    async (dialect) => {
      const vendor = await serviceForTest([API_TOKEN], { dialect });
      const sb = makeSandbox();
      const { error, hint } = expectFailure(await login(sb, API_TOKEN, [], vendor.url), 1);
      expect(error).toMatch(/GET .*\/api\/user answered HTTP 40[45]/);
      expect(hint).toContain(`ugs login --dialect ${dialect}`);
      expect(existsSync(sb.configPath)).toBe(false);
      // The interface's probe, then the vendor's probes: a read for an empty id, and a token
      // refresh with no token. Nothing that could change a group.
      const probes = [
        ['POST', '/api/get_customer/', { provided_id: '' }],
        ['POST', '/api/refresh_user_group_token/', {}],
      ];
      expect(vendor.requests.map((r) => [r.method, r.url, r.json])).toEqual([
        ['GET', '/api/user', {}],
        ...probes.slice(0, dialect === 'customer' ? 1 : 2),
      ]);
    },
  );

  it('an interface service whose path is wrong: no vendor API answers, the hint stays', async () => {
    const sb = makeSandbox();
    const { hint } = expectFailure(await login(sb, API_TOKEN, ['--api-path', '/nothing']), 1);
    expect(hint).not.toContain('--dialect');
    expect(hint).toContain('--api-path');
  });

  it('a base URL whose path already holds /api: the 404 names /api/api/user', async () => {
    const sb = makeSandbox();
    const { error } = expectFailure(await login(sb, API_TOKEN, [], `${service.url}/api`), 1);
    expect(error).toContain(`GET ${service.url}/api/api/user answered HTTP 404`);
    expect(existsSync(sb.configPath)).toBe(false);
  });

  it('--no-verify saves without a request, and says the token was not checked', async () => {
    const sb = makeSandbox();
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await login(sb, WRONG_TOKEN, ['--no-verify'], url);
    expect(result.code, describeRun(result)).toBe(0);
    expect(readConfig(sb)).toEqual({
      profiles: { default: { baseUrl: url, apiToken: WRONG_TOKEN } },
    });
    expect(result.stderr).toMatch(/^note: the token was not checked \(--no-verify\)/m);
  });
});

describe('ugs login with a read-only API token', () => {
  const readOnly = { token: 'ro-key-login-5e4f', environment: 'Customer' as const, readOnly: true };

  it('explo: the probe (a token refresh) gets 403; saved, with a warning that it may be read-only', async () => {
    const emulator = await startEmulator({ dialect: 'explo', apiTokens: [readOnly] });
    try {
      const sb = makeSandbox();
      const result = await login(sb, readOnly.token, ['--dialect', 'explo'], emulator.url);
      expect(result.code, describeRun(result)).toBe(0);
      expect(readConfig(sb)).toMatchObject({
        profiles: { default: { apiToken: readOnly.token, dialect: 'explo' } },
      });
      const warning = result.stderr.split('\n').find((line) => line.startsWith('warning:'));
      expect(warning).toMatch(
        /^warning: the service accepted the API token but refused the check, a call that changes data with --dialect explo \(POST http:\/\/127\.0\.0\.1:\d+\/api\/refresh_user_group_token\/ answered HTTP 403 \(You do not have permission to perform this action\.\)\): the token may be read-only/,
      );
      expect(warning).toContain('run `ugs login` with a read-write API token');
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toContain(readOnly.token);
    } finally {
      await emulator.close();
    }
  });

  it('customer: the probe reads (get_customer/), so the token is accepted without a warning', async () => {
    const emulator = await startEmulator({ dialect: 'customer', apiTokens: [readOnly] });
    try {
      const sb = makeSandbox();
      const result = await login(sb, readOnly.token, ['--dialect', 'customer'], emulator.url);
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stderr).toContain('(the service accepted the token)');
      expect(result.stderr).not.toContain('warning:');
    } finally {
      await emulator.close();
    }
  });
});
