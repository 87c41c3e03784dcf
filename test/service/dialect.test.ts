/**
 * A dialect per profile. `--dialect explo` (or UGS_DIALECT, or a profile saved
 * by `login --dialect explo`) sends each operation to the vendor's own path, as a POST, with the
 * API token in `Explo-Authorization`; `--api-path` is a usage error with it; login offers the
 * vendor's base URL; status and doctor say which dialect is in use.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runLogin } from '../../src/commands/login.js';
import { FakePrompter, makeDeps, makeIO, terminalIO, withPrompter } from '../kit/fakes.js';
import {
  describeRun,
  expectFailure,
  json,
  makeSandbox,
  readConfig,
  runMain,
  type Sandbox,
  type Service,
  serviceForTest,
  serviceWithProfile,
  text,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-dialect-test-9876wxyz';

function exploService(
  profile: Record<string, string> = {},
): Promise<{ sb: Sandbox; service: Service }> {
  return serviceWithProfile(API_TOKEN, { dialect: 'explo' }, profile);
}

describe('--dialect explo on the wire', () => {
  it("get: POST /api/create_user_group/ with Explo-Authorization, and the vendor's answer", async () => {
    const { sb, service } = await exploService();
    const result = await runMain(
      ['--dialect', 'explo', 'get', '--id', 'acme', '--name', 'Acme', '--field', 'token'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    const [request] = service.requests;
    expect(`${request?.method} ${request?.url}`).toBe('POST /api/create_user_group/');
    expect(request?.headers['explo-authorization']).toBe(`Token ${API_TOKEN}`);
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.json).toEqual({ name: 'Acme', user_group_id: 'acme' });
    expect(result.stdout.trim()).toBe((await service.group('acme')).token);
  });

  it('login --dialect explo checks the token with an empty token refresh, never create_user_group', async () => {
    const service = await serviceForTest([API_TOKEN], { dialect: 'explo' });
    const sb = makeSandbox();
    const good = await runMain(
      ['--dialect', 'explo', 'login', '--base-url', service.url, '--with-token'],
      { sandbox: sb, stdin: `${API_TOKEN}\n` },
    );
    expect(good.code, describeRun(good)).toBe(0);
    // The one request that cannot change anything: no token to rotate. The vendor's
    // get-or-create requires no field, so `{}` there might create a group.
    expect(service.requests.map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual([
      'POST /api/refresh_user_group_token/ {}',
    ]);
    const [probe] = service.requests;
    expect(probe?.headers['explo-authorization']).toBe(`Token ${API_TOKEN}`);
    expect(probe?.headers.authorization).toBeUndefined();
    // The emulator answered it as DRF would: the missing field, after the token passed.
    expect(service.answers).toEqual([
      { status: 400, body: { success: 0, current_token: ['This field is required.'] } },
    ]);
    expect(service.createdIds()).toEqual([]);
    expect(readConfig(sb)).toMatchObject({ profiles: { default: { dialect: 'explo' } } });

    const other = makeSandbox();
    const refused = await runMain(
      ['--dialect', 'explo', 'login', '--base-url', service.url, '--with-token'],
      { sandbox: other, stdin: 'not-the-token\n' },
    );
    expect(refused.code, describeRun(refused)).toBe(3);
    expect(existsSync(other.configPath)).toBe(false);
  });

  it('the token history records the dialect the request spoke', async () => {
    const { sb } = await exploService({ dialect: 'explo' });
    const result = await runMain(['get', '--id', 'hist', '--name', 'Hist', '--field', 'token'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(0);
    const history = await runMain(['history', '--json'], { sandbox: sb });
    expect(history.code, describeRun(history)).toBe(0);
    expect(JSON.parse(history.stdout.trim().split('\n')[0] ?? '{}')).toMatchObject({
      user_group_id: 'hist',
      dialect: 'explo',
    });
  });

  it('rotate: POST /api/refresh_user_group_token/ {current_token}, from a profile saved as explo', async () => {
    const { sb, service } = await exploService({ dialect: 'explo' });
    const before = await service.seed('acme', 'Acme');
    const result = await runMain(
      ['rotate', '--current-token-stdin', '--yes', '--field', 'api_environment_tag'],
      { sandbox: sb, stdin: `${before.token}\n` },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout.trim()).toBe('Customer');
    const [request] = service.requests;
    expect(`${request?.method} ${request?.url}`).toBe('POST /api/refresh_user_group_token/');
    expect(request?.headers['explo-authorization']).toBe(`Token ${API_TOKEN}`);
    expect(request?.json).toEqual({ current_token: before.token });
    expect((await service.group('acme')).token).not.toBe(before.token);
  });

  it('UGS_DIALECT=explo does the same; --dialect interface on the command line beats it', async () => {
    const { sb, service } = await exploService();
    const env = { UGS_DIALECT: 'explo' };
    const viaEnv = await runMain(['get', '--id', 'a', '--name', 'A', '--json'], {
      sandbox: sb,
      env,
    });
    expect(viaEnv.code, describeRun(viaEnv)).toBe(0);
    const viaFlag = await runMain(['--dialect', 'interface', 'get', '--id', 'a', '--name', 'A'], {
      sandbox: sb,
      env,
    });
    // The explo emulator has no /api/user: Django's 404 page, and nothing was created.
    expect(viaFlag.code, describeRun(viaFlag)).toBe(1);
    expect(service.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /api/create_user_group/',
      'GET /api/user',
    ]);
  });

  it('a token the explo service refuses is exit 3 with the login hint, as with the interface', async () => {
    const { sb } = await exploService();
    const result = await runMain(['--dialect', 'explo', 'get', '--id', 'a', '--name', 'A'], {
      sandbox: sb,
      env: { UGS_API_TOKEN: 'not-a-known-token' },
    });
    expect(result.code, describeRun(result)).toBe(3);
    expect(result.stderr).toContain('UGS_API_TOKEN');
    expect(result.stdout).toBe('');
  });

  it('--debug shows Explo-Authorization by its fingerprint only, like Authorization', async () => {
    const { sb } = await exploService();
    const result = await runMain(
      ['--debug', '--dialect', 'explo', 'get', '--id', 'a', '--name', 'A'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).toContain('[debug] * dialect: explo (flag --dialect)');
    expect(result.stderr).toContain(`> explo-authorization: Token …${API_TOKEN.slice(-4)}`);
    expect(result.stderr).not.toContain(API_TOKEN);
  });
});

describe('--dialect and --api-path', () => {
  it.each([
    [['--dialect', 'explo', '--api-path', '/api/user/'], {}, '--api-path'],
    [['--api-path', '/api/user/'], { UGS_DIALECT: 'explo' }, '--api-path'],
    [['--dialect', 'explo'], { UGS_API_PATH: '/api/user/' }, 'UGS_API_PATH'],
  ])('%j with %j is a usage error (exit 2), nothing sent', async (flags, env, named) => {
    const { sb, service } = await exploService();
    const result = await runMain([...flags, 'get', '--id', 'a', '--name', 'A'], {
      sandbox: sb,
      env,
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain(`error: ${named} applies to the interface dialect only`);
    expect(service.requests).toEqual([]);
  });

  it('an unknown dialect is a usage error naming the choices', async () => {
    const result = await runMain(['--dialect', 'vendor', 'status']);
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('--dialect must be interface, explo or customer, got "vendor"');
    const fromEnv = await runMain(['status'], { env: { UGS_DIALECT: 'xml' } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('UGS_DIALECT must be interface, explo or customer');
  });
});

describe('login, status and doctor with a dialect', () => {
  it('login --dialect explo without --base-url saves https://api.explo.co and the dialect', async () => {
    const sb = makeSandbox();
    const result = await runMain(['--dialect', 'explo', 'login', '--with-token', '--no-verify'], {
      sandbox: sb,
      stdin: `${API_TOKEN}\n`,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(readConfig(sb)).toMatchObject({
      profiles: {
        default: { baseUrl: 'https://api.explo.co', apiToken: API_TOKEN, dialect: 'explo' },
      },
    });
    const status = await runMain(['status', '--json'], { sandbox: sb });
    expect(JSON.parse(status.stdout)).toMatchObject({
      dialect: 'explo',
      dialectSource: 'profile',
      baseUrl: 'https://api.explo.co',
    });
    const table = await runMain(['status'], { sandbox: sb });
    expect(table.stdout).toMatch(/dialect\s+explo \(profile\)/);
  });

  it('the login prompt offers https://api.explo.co as the default with --dialect explo', async () => {
    const prompter = new FakePrompter([
      ['input', 'Base URL', 'https://api.explo.co'],
      ['password', 'API token', API_TOKEN],
    ]);
    const deps = withPrompter(
      makeDeps({
        io: terminalIO(),
        profiles: {},
        settings: { dialect: 'explo', dialectSource: 'flag' },
      }),
      prompter,
    );
    await runLogin({ withToken: false, secureStorage: false, verify: false }, deps);
    expect(prompter.calls[0]?.default).toBe('https://api.explo.co');
    expect(deps.config.profiles.default).toEqual({
      baseUrl: 'https://api.explo.co',
      apiToken: API_TOKEN,
      dialect: 'explo',
    });
  });

  it('login --dialect explo drops an API path saved earlier; --dialect interface drops the dialect', async () => {
    const deps = makeDeps({
      io: makeIO({ stdinText: API_TOKEN }),
      profiles: { default: { baseUrl: 'https://old.example', apiPath: '/api/user/' } },
      settings: {
        dialect: 'explo',
        dialectSource: 'flag',
        baseUrl: 'https://x.example',
        baseUrlSource: 'flag',
      },
    });
    await runLogin({ withToken: true, secureStorage: false, verify: false }, deps);
    expect(deps.config.profiles.default).toEqual({
      baseUrl: 'https://x.example',
      apiToken: API_TOKEN,
      dialect: 'explo',
    });
    const back = makeDeps({
      io: makeIO({ stdinText: API_TOKEN }),
      profiles: deps.config.profiles,
      settings: { dialect: 'interface', dialectSource: 'flag' },
    });
    await runLogin({ withToken: true, secureStorage: false, verify: false }, back);
    expect(back.config.profiles.default).toEqual({
      baseUrl: 'https://x.example',
      apiToken: API_TOKEN,
    });
  });

  it('switching a profile to explo without --base-url takes the vendor address, not the old one', async () => {
    const switching = makeDeps({
      io: makeIO({ stdinText: API_TOKEN }),
      profiles: { default: { baseUrl: 'https://interface.example', apiToken: 'old-token-1' } },
      settings: { dialect: 'explo', dialectSource: 'flag' },
    });
    await runLogin({ withToken: true, secureStorage: false, verify: false }, switching);
    expect(switching.config.profiles.default?.baseUrl).toBe('https://api.explo.co');
    // A profile already in the explo dialect keeps its own address (a local emulator, say).
    const again = makeDeps({
      io: makeIO({ stdinText: API_TOKEN }),
      profiles: { default: { baseUrl: 'http://127.0.0.1:4010', dialect: 'explo' } },
      settings: {},
    });
    await runLogin({ withToken: true, secureStorage: false, verify: false }, again);
    expect(again.config.profiles.default).toEqual({
      baseUrl: 'http://127.0.0.1:4010',
      apiToken: API_TOKEN,
      dialect: 'explo',
    });
  });

  it('status says interface (default) when nothing chose a dialect', async () => {
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: 'https://x.example', apiToken: 'tok' } } });
    const status = await runMain(['status', '--json'], { sandbox: sb });
    expect(JSON.parse(status.stdout)).toMatchObject({
      dialect: 'interface',
      dialectSource: 'default',
    });
  });

  it('doctor --probe names the dialect and probes with POST /api/refresh_user_group_token/ {}', async () => {
    const { sb, service } = await exploService({ dialect: 'explo' });
    const result = await runMain(['doctor', '--probe'], { sandbox: sb });
    expect(result.stdout).toContain('dialect explo (from profile)');
    expect(result.stdout).toMatch(
      /probe.*POST \/api\/refresh_user_group_token\/ with \{\}: HTTP 400 .*the token was accepted/,
    );
    expect(service.requests.map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual([
      'POST /api/refresh_user_group_token/ {}',
    ]);
    expect(service.requests[0]?.headers['explo-authorization']).toBe(`Token ${API_TOKEN}`);
    expect(service.createdIds()).toEqual([]);
  });
});

// `--api-path` is a usage error with the explo dialect, so no message may suggest it there; and
// every request of that dialect is a POST, which is what a 404 must name.
describe('--dialect explo at a wrong address', () => {
  /** The interface emulator: it has no vendor paths, so each of them is Django's 404 page. */
  async function interfaceOnly(): Promise<{ sb: Sandbox; service: Service }> {
    return serviceWithProfile(API_TOKEN, {}, { dialect: 'explo' });
  }

  it('get: the 404 names POST and the vendor path; the hint is --base-url or --dialect interface', async () => {
    const { sb, service } = await interfaceOnly();
    const result = await runMain(['get', '--id', 'a', '--name', 'A'], { sandbox: sb });
    const { error, hint } = expectFailure(result, 1);
    expect(error).toBe(
      `the service answered HTTP 404 to POST ${service.url}/api/create_user_group/: a text/html body`,
    );
    expect(hint).toContain('check --base-url');
    expect(hint).toContain('use --dialect interface');
    expect(hint).not.toContain('--api-path');
  });

  it('rotate: the same for the refresh path', async () => {
    const { sb, service } = await interfaceOnly();
    const result = await runMain(['rotate', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      stdin: 'ugt_some_group_token_1234\n',
    });
    const { error, hint } = expectFailure(result, 1);
    expect(error).toContain(
      `HTTP 404 to POST ${service.url}/api/refresh_user_group_token/: a text/html body`,
    );
    expect(hint).not.toContain('--api-path');
  });

  it.each([
    ['a 405', json(405, { detail: 'Method "POST" not allowed.' })],
    ['a redirect elsewhere', text(302, '', 'text/html', { location: '/accounts/login/' })],
    ['a 404 under a doubled /api', text(404, '<h1>Not Found</h1>', 'text/html')],
  ])('get: %s gets a hint without --api-path', async (_what, reply) => {
    const { sb, service } = await exploService();
    service.failAlways(reply);
    const result = await runMain(
      ['--dialect', 'explo', '--base-url', `${service.url}/api`, 'get', '--id', 'a', '--name', 'A'],
      { sandbox: sb },
    );
    const { hint } = expectFailure(result, 1);
    expect(hint).toMatch(/--base-url/);
    expect(hint).not.toContain('--api-path');
  });

  it('login: the 404 names POST /api/refresh_user_group_token/, the hint never --api-path', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    const result = await runMain(
      ['--dialect', 'explo', 'login', '--base-url', service.url, '--with-token'],
      { sandbox: sb, stdin: `${API_TOKEN}\n` },
    );
    const { error, hint } = expectFailure(result, 1);
    expect(error).toContain(
      `could not check the API token: POST ${service.url}/api/refresh_user_group_token/ answered HTTP 404 with text/html`,
    );
    expect(hint).toContain('check --base-url');
    expect(hint).toContain('--no-verify');
    expect(hint).not.toContain('--api-path');
    expect(existsSync(sb.configPath)).toBe(false);
  });

  it('login: a 400 from something else gets a hint without --api-path', async () => {
    const service = await serviceForTest([API_TOKEN], { dialect: 'explo' });
    service.fail(text(400, '<html>400 Bad Request</html>', 'text/html'));
    const sb = makeSandbox();
    const result = await runMain(
      ['--dialect', 'explo', 'login', '--base-url', service.url, '--with-token'],
      { sandbox: sb, stdin: `${API_TOKEN}\n` },
    );
    const { error, hint } = expectFailure(result, 1);
    expect(error).toContain(
      `POST ${service.url}/api/refresh_user_group_token/ answered HTTP 400 with text/html, not the service's refusal of an empty request (a JSON error with "success": 0, or field errors for current_token)`,
    );
    expect(hint).not.toContain('--api-path');
    expect(existsSync(sb.configPath)).toBe(false);
  });

  it('doctor --probe: the line names POST and the full URL; the fix never --api-path', async () => {
    const { sb, service } = await interfaceOnly();
    const result = await runMain(['doctor', '--probe'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    const lines = result.stdout.split('\n');
    const at = lines.findIndex((line) => / probe /.test(line));
    expect(lines[at]).toMatch(
      new RegExp(
        `probe +POST ${service.url.replace(/\./g, '\\.')}/api/refresh_user_group_token/ with \\{\\}: HTTP 404 with text/html, expected 400`,
      ),
    );
    expect(lines[at + 1]).toMatch(/fix: check the base URL .*use --dialect interface/);
    expect(result.stdout).not.toContain('--api-path');
  });
});
