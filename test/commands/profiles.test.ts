/**
 * Profiles you can see and pick: `ugs profile list [--json]`, `use <name>`
 * (the default when neither -p nor UGS_PROFILE names one, shown by `status`), `remove <name>`;
 * and a `-p` naming no saved profile is exit 2 with "did you mean ...?", except for `login`
 * (which creates it) and when the environment gives both the base URL and the API token.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  expectFailure,
  makeSandbox,
  readConfig,
  runMain,
  type Sandbox,
  useService,
  writeConfig,
} from '../kit/index.js';

const TOKEN = 'apitoken-profiles-test-1234abcd';
const STAGING_TOKEN = 'apitoken-profiles-staging-5678';

const service = useService([TOKEN, STAGING_TOKEN]);

/** Three profiles, as earlier versions wrote the file (no `defaultProfile`). */
function threeProfiles(): Sandbox {
  const sandbox = makeSandbox();
  writeConfig(sandbox, {
    profiles: {
      default: { baseUrl: service.url, apiToken: TOKEN },
      staging: { baseUrl: service.url, apiToken: STAGING_TOKEN, apiPath: '/api/user' },
      old: { baseUrl: 'https://old.example.com' },
    },
  });
  return sandbox;
}

/** The three, and one saved by `ugs login --dialect explo`. */
function withVendorProfile(): Sandbox {
  const sandbox = makeSandbox();
  writeConfig(sandbox, {
    profiles: {
      default: { baseUrl: service.url, apiToken: TOKEN },
      staging: { baseUrl: service.url, apiToken: STAGING_TOKEN, apiPath: '/api/user' },
      old: { baseUrl: 'https://old.example.com' },
      vendor: { baseUrl: 'https://api.explo.co', apiToken: TOKEN, dialect: 'explo' },
    },
  });
  return sandbox;
}

describe('ugs profile list', () => {
  it('--json: name, default, base URL, dialect, API path and where the token is, one entry each', async () => {
    const sandbox = withVendorProfile();
    const result = await runMain(['profile', 'list', '--json'], { sandbox });
    expect(result.code, describeRun(result)).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([
      {
        name: 'default',
        default: true,
        baseUrl: service.url,
        dialect: 'interface',
        apiPath: '/api/user',
        tokenLocation: 'config file',
        production: false,
      },
      {
        name: 'staging',
        default: false,
        baseUrl: service.url,
        dialect: 'interface',
        apiPath: '/api/user',
        tokenLocation: 'config file',
        production: false,
      },
      {
        name: 'old',
        default: false,
        baseUrl: 'https://old.example.com',
        dialect: 'interface',
        apiPath: '/api/user',
        tokenLocation: null,
        production: false,
      },
      {
        name: 'vendor',
        default: false,
        baseUrl: 'https://api.explo.co',
        dialect: 'explo',
        apiPath: null,
        tokenLocation: 'config file',
        production: false,
      },
    ]);
    expect(result.stderr).toBe('');
    expect(result.stdout).not.toContain(TOKEN);
  });

  it('the table marks the default with *, shows each dialect, and never shows a token', async () => {
    const sandbox = withVendorProfile();
    const result = await runMain(['profile', 'list'], { sandbox });
    expect(result.code, describeRun(result)).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^default +name +base URL +dialect +API path +token$/);
    expect(lines[1]).toMatch(
      /^\* +default +http:\/\/127\.0\.0\.1:\d+ +interface +\/api\/user +config file$/,
    );
    expect(lines[2]).toMatch(/^ +staging /);
    expect(lines[3]).toMatch(
      /^ +old +https:\/\/old\.example\.com +interface +\/api\/user +\(none\)$/,
    );
    expect(lines[4]).toMatch(
      /^ +vendor +https:\/\/api\.explo\.co +explo +\(the vendor's\) +config file$/,
    );
    expect(result.stdout).not.toContain(TOKEN);
  });

  it('with no config file: an empty --json array, and a line on stderr for the table', async () => {
    const sandbox = makeSandbox();
    const json = await runMain(['profile', 'list', '--json'], { sandbox });
    expect(json.code, describeRun(json)).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
    const table = await runMain(['profile', 'list'], { sandbox });
    expect(table.code, describeRun(table)).toBe(0);
    expect(table.stdout).toBe('');
    expect(table.stderr).toMatch(/No saved profiles/);
  });
});

describe('ugs profile use', () => {
  it('makes a profile the default: commands without -p use it, status says why', async () => {
    const sandbox = threeProfiles();
    const use = await runMain(['profile', 'use', 'staging'], { sandbox });
    expect(use.code, describeRun(use)).toBe(0);
    expect(use.stdout).toBe('');
    expect(use.stderr).toContain('Default profile is now "staging"');
    expect(readConfig(sandbox)).toMatchObject({ defaultProfile: 'staging' });

    const [status, table, list, get] = await Promise.all([
      runMain(['status', '--json'], { sandbox }),
      runMain(['status'], { sandbox }),
      runMain(['profile', 'list', '--json'], { sandbox }),
      runMain(['get', '--id', 'use-staging', '--name', 'S', '--json'], { sandbox }),
    ]);
    expect(JSON.parse(status.stdout)).toMatchObject({
      profile: 'staging',
      profileSource: 'config',
      defaultProfile: 'staging',
      defaultProfileSource: 'config',
      token: `****${STAGING_TOKEN.slice(-4)}`,
    });
    expect(table.stdout).toMatch(/^profile\tstaging \(the default, set by ugs profile use\)$/m);
    expect(table.stdout).toMatch(/^default profile\tstaging \(set by ugs profile use\)$/m);
    const marked = (JSON.parse(list.stdout) as { name: string; default: boolean }[]).filter(
      (entry) => entry.default,
    );
    expect(marked.map((entry) => entry.name)).toEqual(['staging']);
    expect(get.code, describeRun(get)).toBe(0);
    const sent = service.requests.filter(
      (r) => (r.json as { user_group_id?: string } | undefined)?.user_group_id === 'use-staging',
    );
    expect(sent.map((r) => r.headers.authorization)).toEqual([`Token ${STAGING_TOKEN}`]);

    // -p and UGS_PROFILE still win over the chosen default.
    const [flag, env] = await Promise.all([
      runMain(['status', '--json', '-p', 'default'], { sandbox }),
      runMain(['status', '--json'], { sandbox, env: { UGS_PROFILE: 'default' } }),
    ]);
    expect(JSON.parse(flag.stdout)).toMatchObject({ profile: 'default', profileSource: 'flag' });
    expect(JSON.parse(env.stdout)).toMatchObject({ profile: 'default', profileSource: 'env' });
  });

  it("login's next: line leaves --profile out for the profile chosen as default", async () => {
    const sandbox = threeProfiles();
    await runMain(['profile', 'use', 'staging'], { sandbox });
    const login = (profile: string) =>
      runMain(['login', '-p', profile, '--base-url', service.url, '--with-token'], {
        sandbox,
        stdin: `${STAGING_TOKEN}\n`,
      });
    const [staging, other] = [await login('staging'), await login('default')];
    expect(staging.stderr).toContain('next: ugs get --id <id> --name <name>\n');
    expect(other.stderr).toContain('next: ugs get --profile default --id <id> --name <name>\n');
  });

  it('a name that is not saved: exit 2, did you mean, nothing written', async () => {
    const sandbox = threeProfiles();
    const before = readFileSync(sandbox.configPath);
    const { error, hint } = expectFailure(
      await runMain(['profile', 'use', 'stagin'], { sandbox }),
      2,
    );
    expect(error).toBe('no saved profile "stagin" (ugs profile use)');
    expect(hint).toMatch(/^did you mean staging\?/);
    expect(readFileSync(sandbox.configPath).equals(before)).toBe(true);
  });

  it('an old config file (no defaultProfile) still loads, and the new one is still a valid config', async () => {
    const sandbox = threeProfiles();
    expect(readConfig(sandbox)).not.toHaveProperty('defaultProfile');
    expect((await runMain(['status'], { sandbox })).code).toBe(0);
    await runMain(['profile', 'use', 'staging'], { sandbox });
    // A later write through Conf (its schema knows defaultProfile) keeps the choice.
    const login = await runMain(['login', '--no-verify', '-p', 'old', '--with-token'], {
      sandbox,
      stdin: 'apitoken-old-0000aaaa\n',
    });
    expect(login.code, describeRun(login)).toBe(0);
    expect(readConfig(sandbox)).toMatchObject({ defaultProfile: 'staging' });
  });
});

describe('ugs profile remove', () => {
  it('without a terminal it needs --yes (exit 2, nothing removed)', async () => {
    const sandbox = threeProfiles();
    const before = readFileSync(sandbox.configPath);
    const { error, hint } = expectFailure(
      await runMain(['profile', 'remove', 'staging'], { sandbox }),
      2,
    );
    expect(error).toContain('--yes is required');
    expect(hint).toContain('ugs profile remove staging --yes');
    expect(readFileSync(sandbox.configPath).equals(before)).toBe(true);
  });

  it('--yes removes the token and settings; removing the default goes back to "default"', async () => {
    const sandbox = threeProfiles();
    await runMain(['profile', 'use', 'staging'], { sandbox });
    const result = await runMain(['profile', 'remove', 'staging', '--yes'], { sandbox });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).toContain('Removed profile "staging"');
    expect(result.stderr).toContain('it was the default profile');
    const config = readConfig(sandbox) as { profiles: object; defaultProfile?: string };
    expect(Object.keys(config.profiles)).toEqual(['default', 'old']);
    expect(config).not.toHaveProperty('defaultProfile');
    expect(JSON.stringify(config)).not.toContain(STAGING_TOKEN);
  });

  it('a name that is not saved: exit 2 with did you mean', async () => {
    const sandbox = threeProfiles();
    const { hint } = expectFailure(
      await runMain(['profile', 'remove', 'stagng', '--yes'], { sandbox }),
      2,
    );
    expect(hint).toMatch(/^did you mean staging\?/);
  });
});

describe('-p naming no saved profile', () => {
  it.each([
    [['get', '--id', 'x', '--name', 'X']],
    [['rotate', '--current-token-stdin', '--yes']],
    [['status']],
    [['logout']],
    [['doctor']],
  ])('%j -p stagin: exit 2 with did you mean staging, nothing sent', async (argv) => {
    const sandbox = threeProfiles();
    const before = service.requests.length;
    const result = await runMain([...argv, '-p', 'stagin'], { sandbox, stdin: 'x' });
    const { error, hint } = expectFailure(result, 2);
    expect(error).toBe('no saved profile "stagin" (--profile)');
    expect(hint).toMatch(/^did you mean staging\? `ugs profile list` shows them$/);
    // No invitation to save the typo.
    expect(hint).not.toContain('ugs login');
    expect(service.requests.length).toBe(before);
  });

  it('logout -p nosuch is exit 2 and names the saved profiles', async () => {
    const sandbox = threeProfiles();
    const { hint } = expectFailure(await runMain(['logout', '-p', 'nosuch'], { sandbox }), 2);
    expect(hint).toContain('default, staging, old');
  });

  it('UGS_PROFILE naming no saved profile is exit 2 too, naming UGS_PROFILE', async () => {
    const sandbox = threeProfiles();
    const result = await runMain(['status'], { sandbox, env: { UGS_PROFILE: 'stagin' } });
    expect(expectFailure(result, 2).error).toBe('no saved profile "stagin" (UGS_PROFILE)');
  });

  it('login -p creates the profile (no check)', async () => {
    const sandbox = threeProfiles();
    const result = await runMain(
      ['login', '-p', 'brand-new', '--base-url', service.url, '--with-token'],
      {
        sandbox,
        stdin: `${TOKEN}\n`,
      },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(readConfig(sandbox)).toMatchObject({ profiles: { 'brand-new': { apiToken: TOKEN } } });
  });

  it('env-only CI (UGS_BASE_URL and UGS_API_TOKEN) keeps working with any profile name', async () => {
    const sandbox = makeSandbox();
    const result = await runMain(['get', '--id', 'ci-only', '--name', 'CI', '--json', '-p', 'ci'], {
      sandbox,
      env: { UGS_BASE_URL: service.url, UGS_API_TOKEN: TOKEN, UGS_PROFILE: 'ci' },
    });
    expect(result.code, describeRun(result)).toBe(0);
  });
});

describe('a profile name that would not paste as it is', () => {
  // Each would be shown escaped, break the line, vanish or reorder it in a `next:` hint or a
  // `ugs login --profile ...` hint: pasted, that command names another profile.
  const BAD: [string, string][] = [
    ['LF', 'U+000A'],
    ['ESC', 'U+001B'],
    ['DEL', 'U+007F'],
    ['a C1 control', 'U+0085'],
    ['a bidi override', 'U+202E'],
    ['a zero-width space', 'U+200B'],
    ['a no-break space', 'U+00A0'],
  ];
  const nameWith = (code: string) =>
    `stag${String.fromCodePoint(Number.parseInt(code.slice(2), 16))}ing`;

  it.each(BAD)('login --profile with %s (%s): exit 2 naming it, nothing saved', async (_, code) => {
    const sandbox = threeProfiles();
    const before = readFileSync(sandbox.configPath);
    const result = await runMain(
      ['login', '--profile', nameWith(code), '--base-url', service.url, '--with-token'],
      { sandbox, stdin: `${TOKEN}\n` },
    );
    const { error, hint } = expectFailure(result, 2);
    expect(error).toMatch(
      new RegExp(`^profile name "stag.*ing" contains ${code.replace('+', '\\+')} \\(--profile\\)$`),
    );
    expect(hint).toContain('must paste as it is');
    // What is shown can be pasted: the character itself is not in the message.
    expect(`${result.stdout}${result.stderr}`).toMatch(/^[\x20-\x7e\n]*$/);
    expect(readFileSync(sandbox.configPath).equals(before)).toBe(true);
  });

  it('-p and UGS_PROFILE with login are refused the same way, before anything is asked', async () => {
    const sandbox = makeSandbox();
    const [flag, env] = await Promise.all([
      runMain(['login', '-p', 'a\u001b[2Jb', '--base-url', service.url, '--with-token'], {
        sandbox,
        stdin: `${TOKEN}\n`,
      }),
      runMain(['login', '--base-url', service.url, '--with-token'], {
        sandbox,
        stdin: `${TOKEN}\n`,
        env: { UGS_PROFILE: 'a\nb' },
      }),
    ]);
    expect(expectFailure(flag, 2).error).toContain('contains U+001B (--profile)');
    expect(expectFailure(env, 2).error).toContain('contains U+000A (UGS_PROFILE)');
    expect(() => readFileSync(sandbox.configPath)).toThrow();
  });

  it('profile use of such a name (saved by hand) is exit 2 and changes nothing; remove still works', async () => {
    const sandbox = makeSandbox();
    writeConfig(sandbox, {
      profiles: { default: { baseUrl: service.url }, 'x\u202ey': { baseUrl: service.url } },
    });
    const before = readFileSync(sandbox.configPath);
    const use = await runMain(['profile', 'use', 'x\u202ey'], { sandbox });
    expect(expectFailure(use, 2).error).toBe(
      'profile name "x\\u202ey" contains U+202E (ugs profile use)',
    );
    expect(readFileSync(sandbox.configPath).equals(before)).toBe(true);
    const remove = await runMain(['profile', 'remove', 'x\u202ey', '--yes'], { sandbox });
    expect(remove.code, describeRun(remove)).toBe(0);
    expect(Object.keys((readConfig(sandbox) as { profiles: object }).profiles)).toEqual([
      'default',
    ]);
  });

  it('names that paste fine are saved: spaces, accents, other scripts', async () => {
    const sandbox = makeSandbox();
    for (const name of ['my staging', 'café', 'プロファイル']) {
      const result = await runMain(
        ['login', '-p', name, '--base-url', service.url, '--with-token'],
        { sandbox, stdin: `${TOKEN}\n` },
      );
      expect(result.code, describeRun(result)).toBe(0);
    }
    expect(Object.keys((readConfig(sandbox) as { profiles: object }).profiles)).toEqual([
      'my staging',
      'café',
      'プロファイル',
    ]);
  });
});
