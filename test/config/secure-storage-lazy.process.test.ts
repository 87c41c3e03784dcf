// The native credential-store module (@napi-rs/keyring) loads only for a profile whose token
// lives in the store, or for `login --secure-storage`. Every run here points the binding's loader
// (NAPI_RS_NATIVE_LIBRARY_PATH, honoured by napi-rs) at a file that records that it was loaded and
// then fails: a run that does not need the store must not notice, and must leave no record.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeRun,
  expectFailure,
  makeSandbox,
  type RunResult,
  runUgs,
  type Sandbox,
  type Service,
  startService,
  tempDir,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-lazy-keyring-77aa88bb';

let service: Service;
let marker: string;
let unloadable: string;
beforeAll(async () => {
  service = await startService([API_TOKEN]);
  const dir = tempDir('keyring');
  marker = join(dir, 'loaded');
  unloadable = join(dir, 'unloadable-keyring.cjs');
  writeFileSync(
    unloadable,
    `require('node:fs').appendFileSync(${JSON.stringify(marker)}, 'loaded\\n');
throw new Error('the credential store module was made unloadable by the test');
`,
  );
});
afterAll(() => service.close());

async function run(
  args: readonly string[],
  sb: Sandbox,
  env: Record<string, string> = {},
  stdin = '',
): Promise<{ result: RunResult; loaded: boolean }> {
  const before = existsSync(marker) ? readFileSync(marker, 'utf8') : '';
  const result = await runUgs(args, {
    sandbox: sb,
    stdin,
    env: { NAPI_RS_NATIVE_LIBRARY_PATH: unloadable, ...env },
  });
  const after = existsSync(marker) ? readFileSync(marker, 'utf8') : '';
  return { result, loaded: after.length > before.length };
}

const GET = ['get', '--id', 'acme', '--name', 'Acme Corp', '--json'];

function fileProfile(sb: Sandbox): Sandbox {
  writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
  return sb;
}

function storeProfile(sb: Sandbox): Sandbox {
  writeConfig(sb, { profiles: { default: { baseUrl: service.url, tokenStore: 'keyring' } } });
  return sb;
}

describe('the native credential-store module is not loaded', () => {
  it.each<[string, string[], (sb: Sandbox) => Sandbox, Record<string, string>, string?]>([
    ['--help', ['--help'], (sb) => sb, {}],
    ['--version', ['--version'], (sb) => sb, {}],
    ['login --help', ['login', '--help'], (sb) => sb, {}],
    ['get with the token in the config file', GET, fileProfile, {}],
    ['status with the token in the config file', ['status'], fileProfile, {}],
    ['logout with the token in the config file', ['logout'], fileProfile, {}],
    [
      'a plain login',
      ['login', '--no-verify', '--with-token', '--base-url', 'https://ugs.example.com'],
      fileProfile,
      {},
      `${API_TOKEN}\n`,
    ],
    [
      'get with UGS_API_TOKEN and no profile',
      GET,
      (sb) => sb,
      { UGS_API_TOKEN: API_TOKEN, UGS_BASE_URL: '' },
    ],
    [
      'get with UGS_API_TOKEN over a profile whose token is in the store',
      GET,
      storeProfile,
      { UGS_API_TOKEN: API_TOKEN },
    ],
  ])('%s', async (_label, args, setUp, env, stdin) => {
    const sb = setUp(makeSandbox());
    // UGS_BASE_URL: '' stands for "the service": its address is known only once it runs.
    const withUrl = env.UGS_BASE_URL === '' ? { ...env, UGS_BASE_URL: service.url } : env;
    const { result, loaded } = await run(args, sb, withUrl, stdin);
    expect(loaded, describeRun(result)).toBe(false);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).not.toContain('credential store');
  });
});

describe('the native credential-store module is loaded (the check above can fail)', () => {
  it('for get with the token in the store: exit 2 with a hint when it cannot load', async () => {
    const { result, loaded } = await run(GET, storeProfile(makeSandbox()));
    expect(loaded, describeRun(result)).toBe(true);
    const { error, hint } = expectFailure(result, 2);
    expect(error).toContain('the credential store module (@napi-rs/keyring) could not be loaded');
    expect(hint).toContain('UGS_API_TOKEN');
  });

  it('for login --secure-storage: exit 2, nothing saved', async () => {
    const sb = makeSandbox();
    const { result, loaded } = await run(
      ['login', '--secure-storage', '--with-token', '--base-url', service.url],
      sb,
      {},
      `${API_TOKEN}\n`,
    );
    expect(loaded, describeRun(result)).toBe(true);
    expectFailure(result, 2);
    expect(existsSync(sb.configPath)).toBe(false);
  });
});
