import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  makeSandbox,
  readConfig,
  runMain,
  useService,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-login-test-1234abcd';

const service = useService([API_TOKEN]);

describe('ugs login --with-token (main in-process)', () => {
  it('saves the profile in a 0600 file in a 0700 directory and never prints the token', async () => {
    const sb = makeSandbox();
    const login = await runMain(['login', '--base-url', service.url, '--with-token'], {
      sandbox: sb,
      stdin: `${API_TOKEN}\n`,
    });
    expect(login.code, describeRun(login)).toBe(0);
    expect(login.stdout).not.toContain(API_TOKEN);
    expect(login.stderr).not.toContain(API_TOKEN);
    // Says which profile and which file were written.
    expect(login.stderr).toContain('"default"');
    expect(login.stderr).toContain(sb.configPath);

    expect(statSync(sb.configPath).mode & 0o777).toBe(0o600);
    expect(statSync(sb.configDir).mode & 0o777).toBe(0o700);
    expect(readConfig(sb)).toEqual({
      profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } },
    });
    // Written atomically and the lock released: nothing else is left in the directory.
    expect(readdirSync(sb.configDir)).toEqual(['config.json']);

    const [status, statusJson] = await Promise.all([
      runMain(['status'], { sandbox: sb }),
      runMain(['status', '--json'], { sandbox: sb }),
    ]);
    expect(status.code, describeRun(status)).toBe(0);
    expect(status.stdout).toContain(`****${API_TOKEN.slice(-4)}`);
    expect(status.stdout).toContain(service.url);
    expect(status.stdout).toContain('profile');
    expect(status.stdout).toContain(sb.configPath);
    expect(status.stdout + status.stderr).not.toContain(API_TOKEN);

    expect(statusJson.code, describeRun(statusJson)).toBe(0);
    expect(JSON.parse(statusJson.stdout)).toEqual({
      profile: 'default',
      profileSource: 'default',
      production: false,
      defaultProfile: 'default',
      defaultProfileSource: 'default',
      baseUrl: service.url,
      baseUrlSource: 'profile',
      apiPath: '/api/user',
      apiPathSource: 'default',
      dialect: 'interface',
      dialectSource: 'default',
      tokenSource: 'profile',
      tokenLocation: 'config file',
      token: `****${API_TOKEN.slice(-4)}`,
      configPath: sb.configPath,
    });
    expect(statusJson.stdout + statusJson.stderr).not.toContain(API_TOKEN);
  });

  it('trims the token and keeps other profiles when logging in again', async () => {
    const sb = makeSandbox();
    writeConfig(sb, {
      profiles: { other: { baseUrl: 'https://other.example.com', apiToken: 'other-token' } },
    });
    const result = await runMain(['login', '--base-url', `${service.url}/`, '--with-token'], {
      sandbox: sb,
      stdin: `  \t${API_TOKEN}  \r\n`,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(readConfig(sb)).toEqual({
      profiles: {
        other: { baseUrl: 'https://other.example.com', apiToken: 'other-token' },
        default: { baseUrl: service.url, apiToken: API_TOKEN },
      },
    });
    expect(statSync(sb.configPath).mode & 0o777).toBe(0o600);
  });

  it('leaves an existing 0755 config directory alone, still writes the file 0600', async () => {
    const sb = makeSandbox();
    writeConfig(sb, { profiles: {} });
    chmodSync(sb.configDir, 0o755);
    chmodSync(sb.configPath, 0o644);
    const result = await runMain(['login', '--base-url', service.url, '--with-token'], {
      sandbox: sb,
      stdin: API_TOKEN,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(statSync(sb.configDir).mode & 0o777).toBe(0o755);
    expect(statSync(sb.configPath).mode & 0o777).toBe(0o600);
  });

  it('refuses empty stdin (exit 2) and writes nothing', async () => {
    const sb = makeSandbox();
    const result = await runMain(['login', '--base-url', service.url, '--with-token'], {
      sandbox: sb,
      stdin: ' \n',
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toMatch(/^error: .*--with-token/m);
    expect(() => statSync(sb.configPath)).toThrow();
  });

  it('without --with-token and without a terminal is a usage error, not a hang', async () => {
    const sb = makeSandbox();
    const result = await runMain(['login', '--base-url', service.url], {
      sandbox: sb,
      stdin: API_TOKEN,
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toMatch(/^error: /m);
    expect(result.stderr).not.toContain(API_TOKEN);
  });

  it('warns that UGS_API_TOKEN overrides the token just saved', async () => {
    const sb = makeSandbox();
    const result = await runMain(['login', '--base-url', service.url, '--with-token'], {
      sandbox: sb,
      stdin: API_TOKEN,
      env: { UGS_API_TOKEN: 'env-token-0000zzzz' },
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).toMatch(/UGS_API_TOKEN/);
    expect(result.stderr).not.toContain('env-token-0000zzzz');
    expect(result.stderr).not.toContain(API_TOKEN);
  });

  it('refuses a plain http base URL to another host (exit 2) and writes nothing', async () => {
    const sb = makeSandbox();
    const result = await runMain(['login', '--base-url', 'http://example.com', '--with-token'], {
      sandbox: sb,
      stdin: API_TOKEN,
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toMatch(/^error: .*http/m);
    expect(() => statSync(sb.configPath)).toThrow();
  });
});

describe('ugs logout and status (main in-process)', () => {
  it('logout removes the token but keeps the base URL; status then exits 3', async () => {
    const sb = makeSandbox();
    writeConfig(sb, {
      profiles: {
        default: { baseUrl: service.url, apiToken: API_TOKEN },
        other: { baseUrl: service.url, apiToken: 'other-token-5678' },
      },
    });
    const logout = await runMain(['logout'], { sandbox: sb });
    expect(logout.code, describeRun(logout)).toBe(0);
    expect(logout.stdout + logout.stderr).not.toContain(API_TOKEN);
    expect(readConfig(sb)).toEqual({
      profiles: {
        default: { baseUrl: service.url },
        other: { baseUrl: service.url, apiToken: 'other-token-5678' },
      },
    });
    expect(statSync(sb.configPath).mode & 0o777).toBe(0o600);

    const [again, status] = await Promise.all([
      runMain(['logout'], { sandbox: sb }),
      runMain(['status', '--json'], { sandbox: sb }),
    ]);
    expect(again.code, describeRun(again)).toBe(0);
    expect(status.code, describeRun(status)).toBe(3);
    expect(JSON.parse(status.stdout)).toMatchObject({ tokenSource: null, token: null });
    expect(status.stderr).toMatch(/^error: /m);
    expect(status.stderr).toMatch(/^hint: .*ugs login/m);
  });

  it('status masks short tokens whole and reports the env token source', async () => {
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: 'abc1234' } } });
    const [short, env] = await Promise.all([
      runMain(['status', '--json'], { sandbox: sb }),
      runMain(['status', '--json'], { sandbox: sb, env: { UGS_API_TOKEN: 'env-token-9876wxyz' } }),
    ]);
    expect(short.code, describeRun(short)).toBe(0);
    expect(short.stdout).not.toContain('1234');
    expect(JSON.parse(short.stdout).token).toMatch(/^\*+$/);
    expect(env.code, describeRun(env)).toBe(0);
    expect(JSON.parse(env.stdout)).toMatchObject({
      tokenSource: 'env UGS_API_TOKEN',
      token: '****wxyz',
    });
    expect(env.stdout).not.toContain('env-token-9876wxyz');
    expect(readFileSync(sb.configPath, 'utf8')).toContain('abc1234');
  });
});
