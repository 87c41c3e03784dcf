/**
 * Errors name what was tried: a TLS handshake with a server that does not
 * speak TLS says so and suggests http://; every 404 names the full URL that was requested; and
 * `doctor` warns when the base URL's path already ends in the API path's first segment
 * (`--base-url http://host/api` with `/api/user` asks for `/api/api/user`).
 */
import { describe, expect, it } from 'vitest';
import { describeRun, makeSandbox, runMain, serviceForTest, writeConfig } from '../kit/index.js';

const API_TOKEN = 'apitoken-what-was-tried-55aa';

describe('https:// to a plain-HTTP server', () => {
  it('says the server does not speak TLS and suggests http://, not --ca-file (exit 4)', async () => {
    // The emulator's own server answers a TLS hello as Node's http server does: `HTTP/1.1 400`.
    const service = await serviceForTest([API_TOKEN]);
    const port = new URL(service.emulator.url).port;
    const base = `https://127.0.0.1:${port}`;
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--base-url', base], {
      sandbox: makeSandbox(),
      env: { UGS_API_TOKEN: API_TOKEN },
    });
    expect(result.code, describeRun(result)).toBe(4);
    expect(result.stderr).toMatch(
      /error: TLS connection to 127\.0\.0\.1:\d+ failed: the server does not speak TLS there/,
    );
    expect(result.stderr).toContain(
      `hint: a plain-HTTP service (such as \`ugs serve\`) is reached with http://: use --base-url http://127.0.0.1:${port}`,
    );
    expect(result.stderr).not.toMatch(/certificate|--ca-file/);
  });
});

describe('a 404 names the full URL', () => {
  it('--base-url http://host/api: the URL tried is /api/api/user, and the hint says to drop /api', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const result = await runMain(
      ['get', '--id', 'acme', '--name', 'Acme', '--base-url', `${service.url}/api`],
      { sandbox: makeSandbox(), env: { UGS_API_TOKEN: API_TOKEN } },
    );
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain(
      `error: the service answered HTTP 404 to GET ${service.url}/api/api/user: a text/html body`,
    );
    expect(result.stderr).toMatch(
      /hint: the base URL ends in \/api and the API path \/api\/user starts with it: drop \/api/,
    );
  });

  it('a JSON 404 (rotate of an unknown token) names the URL too, with its own hint', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const result = await runMain(['rotate', '--current-token-stdin', '--yes'], {
      sandbox: makeSandbox(),
      env: { UGS_API_TOKEN: API_TOKEN, UGS_BASE_URL: service.url },
      stdin: 'ugt_nobody_has_this_token',
    });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(`error: the service answered HTTP 404 to POST ${service.url}/api/user: `),
    );
  });
});

describe('doctor and a doubled API prefix', () => {
  const doctor = async (args: string[]) => {
    const service = await serviceForTest([API_TOKEN]);
    const sandbox = makeSandbox();
    writeConfig(sandbox, {
      profiles: { default: { baseUrl: `${service.url}/api`, apiToken: API_TOKEN } },
    });
    return { service, result: await runMain(['doctor', ...args], { sandbox }) };
  };

  it('the base URL check is a warning, not a check mark, and says which base URL to use', async () => {
    const { service, result } = await doctor([]);
    expect(result.code, describeRun(result)).toBe(0);
    const line = result.stdout.split('\n').find((l) => /^\S+ base URL/.test(l)) ?? '';
    expect(line).toMatch(
      /^!{1,2} base URL\s+http:\/\/127\.0\.0\.1:\d+\/api\/api\/user .*\/api twice/,
    );
    expect(result.stdout).toContain(`fix: use the base URL without it, ${service.url}`);
  });

  it('--json: status "warn", and ok stays true', async () => {
    const { result } = await doctor(['--json']);
    expect(result.code, describeRun(result)).toBe(0);
    const report = JSON.parse(result.stdout) as {
      ok: boolean;
      checks: { id: string; status: string }[];
    };
    expect(report.ok).toBe(true);
    expect(report.checks.find((c) => c.id === 'base-url')?.status).toBe('warn');
  });

  it('--probe: its 404 names the full URL tried', async () => {
    const { service, result } = await doctor(['--probe']);
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout).toContain(`GET ${service.url}/api/api/user with {}: HTTP 404`);
  });
});
