/** Flag > environment > profile, profiles isolated, global options anywhere on the line. */
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  makeSandbox,
  readConfig,
  runMain,
  serviceForTest,
  writeConfig,
} from '../kit/index.js';

const PROFILE_TOKEN = 'profile-token-aaaa1111';
const ENV_TOKEN = 'env-token-bbbb2222';
const OTHER_TOKEN = 'other-token-cccc3333';

describe('precedence (main in-process)', () => {
  it('UGS_API_TOKEN overrides the profile token', async () => {
    const service = await serviceForTest([PROFILE_TOKEN, ENV_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: PROFILE_TOKEN } } });
    const [withEnv, emptyEnv, status] = await Promise.all([
      runMain(['get', '--id', 'a', '--name', 'A', '--json'], {
        sandbox: sb,
        env: { UGS_API_TOKEN: ENV_TOKEN },
      }),
      // An empty variable is as good as unset.
      runMain(['get', '--id', 'b', '--name', 'B', '--json'], {
        sandbox: sb,
        env: { UGS_API_TOKEN: '' },
      }),
      runMain(['status', '--json'], { sandbox: sb, env: { UGS_API_TOKEN: ENV_TOKEN } }),
    ]);
    expect(withEnv.code, describeRun(withEnv)).toBe(0);
    expect(emptyEnv.code, describeRun(emptyEnv)).toBe(0);
    const byGroup = Object.fromEntries(
      service.requests.map((r) => [
        (r.json as { user_group_id: string }).user_group_id,
        r.headers.authorization,
      ]),
    );
    expect(byGroup).toEqual({ a: `Token ${ENV_TOKEN}`, b: `Token ${PROFILE_TOKEN}` });
    expect(JSON.parse(status.stdout)).toMatchObject({
      tokenSource: 'env UGS_API_TOKEN',
      token: '****2222',
    });
  });

  it('--base-url beats UGS_BASE_URL, which beats the profile', async () => {
    const [profileStub, envStub, flagStub] = await Promise.all([
      serviceForTest([PROFILE_TOKEN]),
      serviceForTest([PROFILE_TOKEN]),
      serviceForTest([PROFILE_TOKEN]),
    ]);
    const sb = makeSandbox();
    writeConfig(sb, {
      profiles: { default: { baseUrl: profileStub.url, apiToken: PROFILE_TOKEN } },
    });
    const env = { UGS_BASE_URL: envStub.url };
    const [fromProfile, fromEnv, fromFlag, statusEnv, statusFlag] = await Promise.all([
      runMain(['get', '--id', 'p', '--name', 'P'], { sandbox: sb }),
      runMain(['get', '--id', 'e', '--name', 'E'], { sandbox: sb, env }),
      runMain(['get', '--id', 'f', '--name', 'F', '--base-url', flagStub.url], {
        sandbox: sb,
        env,
      }),
      runMain(['status', '--json'], { sandbox: sb, env }),
      runMain(['status', '--json', '--base-url', flagStub.url], { sandbox: sb, env }),
    ]);
    for (const result of [fromProfile, fromEnv, fromFlag]) {
      expect(result.code, describeRun(result)).toBe(0);
    }
    expect(profileStub.createdIds()).toEqual(['p']);
    expect(envStub.createdIds()).toEqual(['e']);
    expect(flagStub.createdIds()).toEqual(['f']);
    expect(JSON.parse(statusEnv.stdout)).toMatchObject({
      baseUrl: envStub.url,
      baseUrlSource: 'env',
    });
    expect(JSON.parse(statusFlag.stdout)).toMatchObject({
      baseUrl: flagStub.url,
      baseUrlSource: 'flag',
    });
    // A flag or env base URL is used, never saved.
    expect(readConfig(sb)).toEqual({
      profiles: { default: { baseUrl: profileStub.url, apiToken: PROFILE_TOKEN } },
    });
  });

  it('--profile other is isolated from default, and UGS_PROFILE selects a profile', async () => {
    const [defaultStub, otherStub] = await Promise.all([
      serviceForTest([PROFILE_TOKEN]),
      serviceForTest([OTHER_TOKEN]),
    ]);
    const sb = makeSandbox();
    const loginDefault = await runMain(['login', '--base-url', defaultStub.url, '--with-token'], {
      sandbox: sb,
      stdin: PROFILE_TOKEN,
    });
    expect(loginDefault.code, describeRun(loginDefault)).toBe(0);
    const loginOther = await runMain(
      ['login', '--profile', 'other', '--base-url', otherStub.url, '--with-token'],
      { sandbox: sb, stdin: OTHER_TOKEN },
    );
    expect(loginOther.code, describeRun(loginOther)).toBe(0);
    expect(loginOther.stderr).toContain('"other"');
    expect(readConfig(sb)).toEqual({
      profiles: {
        default: { baseUrl: defaultStub.url, apiToken: PROFILE_TOKEN },
        other: { baseUrl: otherStub.url, apiToken: OTHER_TOKEN },
      },
    });

    const [viaDefault, viaFlag, viaShortFlag, viaEnv, flagBeatsEnv, missing] = await Promise.all([
      runMain(['get', '--id', 'd', '--name', 'D'], { sandbox: sb }),
      runMain(['--profile', 'other', 'get', '--id', 'o1', '--name', 'O'], { sandbox: sb }),
      runMain(['-p', 'other', 'get', '--id', 'o2', '--name', 'O'], { sandbox: sb }),
      runMain(['get', '--id', 'o3', '--name', 'O'], { sandbox: sb, env: { UGS_PROFILE: 'other' } }),
      runMain(['get', '--id', 'd2', '--name', 'D', '--profile', 'default'], {
        sandbox: sb,
        env: { UGS_PROFILE: 'other' },
      }),
      runMain(['get', '--id', 'x', '--name', 'X', '--profile', 'nobody'], { sandbox: sb }),
    ]);
    for (const result of [viaDefault, viaFlag, viaShortFlag, viaEnv, flagBeatsEnv]) {
      expect(result.code, describeRun(result)).toBe(0);
    }
    expect(defaultStub.createdIds().sort()).toEqual(['d', 'd2']);
    expect(otherStub.createdIds().sort()).toEqual(['o1', 'o2', 'o3']);
    for (const r of defaultStub.requests) {
      expect(r.headers.authorization).toBe(`Token ${PROFILE_TOKEN}`);
    }
    for (const r of otherStub.requests) {
      expect(r.headers.authorization).toBe(`Token ${OTHER_TOKEN}`);
    }
    // A profile that is not saved is a usage error, no longer "no API token".
    expect(missing.code, describeRun(missing)).toBe(2);
    expect(missing.stderr).toMatch(/^hint: .*ugs login --profile nobody/m);

    // Logging out of one profile leaves the other alone.
    const logout = await runMain(['logout'], { sandbox: sb, env: { UGS_PROFILE: 'other' } });
    expect(logout.code, describeRun(logout)).toBe(0);
    expect(readConfig(sb)).toEqual({
      profiles: {
        default: { baseUrl: defaultStub.url, apiToken: PROFILE_TOKEN },
        other: { baseUrl: otherStub.url },
      },
    });
  });

  it('global options work after the subcommand', async () => {
    const service = await serviceForTest([OTHER_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, {
      profiles: { other: { baseUrl: 'https://unused.example.com', apiToken: OTHER_TOKEN } },
    });
    const [debugAfter, allAfter, statusAfter] = await Promise.all([
      runMain(
        [
          'get',
          '--id',
          'x',
          '--name',
          'y',
          '--profile',
          'other',
          '--base-url',
          service.url,
          '--debug',
        ],
        { sandbox: sb },
      ),
      runMain(
        [
          'get',
          '--id',
          'z',
          '--name',
          'Z',
          '-p',
          'other',
          '--base-url',
          service.url,
          '--timeout',
          '5',
          '--no-input',
          '--no-color',
          '--json',
        ],
        { sandbox: sb },
      ),
      runMain(['status', '--json', '--profile', 'other'], { sandbox: sb }),
    ]);
    expect(debugAfter.code, describeRun(debugAfter)).toBe(0);
    expect(debugAfter.stderr).toContain(`[debug] > GET ${service.url}/api/user`);
    expect(allAfter.code, describeRun(allAfter)).toBe(0);
    expect(JSON.parse(allAfter.stdout).user_group.provided_id).toBe('z');
    expect(statusAfter.code, describeRun(statusAfter)).toBe(0);
    expect(JSON.parse(statusAfter.stdout)).toMatchObject({ profile: 'other', token: '****3333' });
    expect(service.requests).toHaveLength(2);
  });

  it.runIf(process.platform === 'linux')(
    'the OS config dir under HOME is used when UGS_CONFIG_DIR is not set',
    async () => {
      const sb = makeSandbox();
      const result = await runMain(['status', '--json'], {
        sandbox: sb,
        env: { UGS_CONFIG_DIR: undefined, XDG_CONFIG_HOME: undefined },
      });
      expect(result.code, describeRun(result)).toBe(3);
      expect(JSON.parse(result.stdout).configPath).toBe(`${sb.home}/.config/ugs/config.json`);
    },
  );
});
