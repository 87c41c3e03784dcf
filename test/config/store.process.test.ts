import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { runLogin } from '../../src/commands/login.js';
import { runLogout } from '../../src/commands/logout.js';
import { runStatus } from '../../src/commands/status.js';
import { CONFIG_FILE_NAME, configDir, FileConfigStore } from '../../src/config/config.js';
import { resolveCredentials, resolveTarget } from '../../src/context/credentials.js';
import { AuthError, ConfigError, UsageError } from '../../src/errors.js';
import { processStartTime } from '../../src/fs/file-lock.js';
import { main } from '../../src/main.js';
import {
  expectFailure,
  liveProcess,
  makeSandbox,
  NOBODY,
  runUgs,
  tempDir,
  unprivileged,
} from '../kit/binary.js';
import { type Deps, makeDeps, makeIO, rejection } from '../kit/fakes.js';

const posix = process.platform !== 'win32';
const root = posix && process.getuid?.() === 0;

let base: string;
let dir: string;
let file: string;

beforeEach(() => {
  base = tempDir('config');
  dir = join(base, 'ugs');
  file = join(dir, CONFIG_FILE_NAME);
});

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

function writeRaw(text: string | Buffer, fileMode = 0o600): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(file, text);
  chmodSync(file, fileMode);
}

function readJson(): unknown {
  return JSON.parse(readFileSync(file, 'utf8'));
}

const A = { baseUrl: 'https://a.example', apiToken: 'token-a-1111' };
const B = { baseUrl: 'https://b.example', apiToken: 'token-b-2222' };

describe('FileConfigStore', () => {
  it('reads nothing, and creates nothing, when there is no file', () => {
    const store = new FileConfigStore(dir);
    expect(store.path).toBe(file);
    expect(store.readProfile('default')).toBeUndefined();
    expect(existsSync(dir)).toBe(false);
  });

  it('writes the documented shape and reads it back', async () => {
    const store = new FileConfigStore(dir);
    await store.updateProfile('default', () => A);
    expect(readJson()).toEqual({ profiles: { default: A } });
    expect(new FileConfigStore(dir).readProfile('default')).toEqual(A);
  });

  it.skipIf(!posix)('creates the file 0600 in a directory 0700', async () => {
    await new FileConfigStore(dir).updateProfile('default', () => A);
    expect(mode(file)).toBe(0o600);
    expect(mode(dir)).toBe(0o700);
  });

  it.skipIf(!posix)(
    'tightens an existing 0644 file to 0600; an existing 0755 directory keeps its mode',
    async () => {
      mkdirSync(dir);
      chmodSync(dir, 0o755);
      writeRaw(JSON.stringify({ profiles: { default: A } }), 0o644);
      expect(mode(file)).toBe(0o644);
      await new FileConfigStore(dir).updateProfile('default', (p) => ({
        ...p,
        apiToken: 'new-token',
      }));
      expect(mode(file)).toBe(0o600);
      // Not ours to change: it existed before ugs ran.
      expect(mode(dir)).toBe(0o755);
    },
  );

  it('leaves no lock or temporary file behind', async () => {
    const store = new FileConfigStore(dir);
    await store.updateProfile('a', () => A);
    await store.updateProfile('b', () => B);
    expect(readdirSync(dir)).toEqual([CONFIG_FILE_NAME]);
  });

  it('keeps profiles apart', async () => {
    const store = new FileConfigStore(dir);
    await store.updateProfile('default', () => A);
    await store.updateProfile('staging', () => B);
    await store.updateProfile('default', (p) => ({ ...p, apiToken: 'rotated-a' }));
    expect(store.readProfile('default')).toEqual({ ...A, apiToken: 'rotated-a' });
    expect(store.readProfile('staging')).toEqual(B);
    expect(store.readProfile('other')).toBeUndefined();
  });

  it('removes a profile when the change returns undefined, and only that one', async () => {
    const store = new FileConfigStore(dir);
    await store.updateProfile('a', () => A);
    await store.updateProfile('b', () => B);
    await store.updateProfile('a', () => undefined);
    expect(readJson()).toEqual({ profiles: { b: B } });
  });

  it('hands the change function the current profile', async () => {
    const store = new FileConfigStore(dir);
    const seen: unknown[] = [];
    await store.updateProfile('a', (p) => {
      seen.push(p);
      return A;
    });
    await store.updateProfile('a', (p) => {
      seen.push(p);
      return p;
    });
    expect(seen).toEqual([undefined, A]);
  });

  it('preserves unknown top-level keys and unknown profile fields', async () => {
    const original = {
      version: 3,
      telemetry: { enabled: false },
      profiles: { default: { ...A, region: 'eu' } },
    };
    writeRaw(JSON.stringify(original));
    await new FileConfigStore(dir).updateProfile('staging', () => B);
    expect(readJson()).toEqual({
      version: 3,
      telemetry: { enabled: false },
      profiles: { default: { ...A, region: 'eu' }, staging: B },
    });
  });

  it('does not treat profile names like Object.prototype members as profiles', () => {
    writeRaw(JSON.stringify({ profiles: { default: A } }));
    const store = new FileConfigStore(dir);
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(store.readProfile(name)).toBeUndefined();
    }
  });

  it('a file without "profiles" has no profiles', () => {
    writeRaw('{"other": 1}');
    expect(new FileConfigStore(dir).readProfile('default')).toBeUndefined();
  });

  it('concurrent updates of different profiles all land', async () => {
    const names = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
    await Promise.all(
      names.map((name) =>
        new FileConfigStore(dir).updateProfile(name, () => ({ apiToken: `token-${name}` })),
      ),
    );
    const store = new FileConfigStore(dir);
    for (const name of names)
      expect(store.readProfile(name)).toEqual({ apiToken: `token-${name}` });
  });

  describe('a corrupt file', () => {
    it.each<[string, string, RegExp]>([
      ['invalid JSON', '{"profiles": {', /is not valid JSON/],
      ['an empty file', '', /is not valid JSON/],
      ['trailing garbage', '{"profiles": {}} x', /is not valid JSON/],
      ['a JSON array', '[]', /must contain a JSON object/],
      ['a JSON string', '"profiles"', /must contain a JSON object/],
      ['JSON null', 'null', /must contain a JSON object/],
      ['profiles as an array', '{"profiles": []}', /"profiles" must be an object/],
      ['profiles as null', '{"profiles": null}', /"profiles" must be an object/],
      [
        'a profile that is a string',
        '{"profiles": {"default": "x"}}',
        /profile "default" must be an object/,
      ],
      [
        'a profile that is null',
        '{"profiles": {"default": null}}',
        /profile "default" must be an object/,
      ],
      [
        'a numeric token',
        '{"profiles": {"default": {"apiToken": 5}}}',
        /"apiToken" of profile "default" must be a string/,
      ],
      [
        'a null base URL',
        '{"profiles": {"default": {"baseUrl": null}}}',
        /"baseUrl" of profile "default" must be a string/,
      ],
    ])(
      '(%s) is a ConfigError naming the path, exit 2, and is left byte-identical',
      async (_label, text, message) => {
        const bytes = Buffer.from(text);
        writeRaw(bytes, 0o644);
        const store = new FileConfigStore(dir);

        const readError = thrownBy(() => store.readProfile('default'));
        expect(readError).toBeInstanceOf(ConfigError);
        expect((readError as ConfigError).exitCode).toBe(2);
        expect((readError as Error).message).toContain(file);
        expect((readError as Error).message).toMatch(message);
        expect((readError as ConfigError).hint).toMatch(/will not overwrite/);
        expect(readFileSync(file).equals(bytes)).toBe(true);

        const writeError = await rejection(store.updateProfile('default', () => A));
        expect(writeError).toBeInstanceOf(ConfigError);
        expect((writeError as Error).message).toContain(file);
        expect(readFileSync(file).equals(bytes)).toBe(true);
        if (posix) expect(mode(file)).toBe(0o644);
        // The failed update released its lock.
        expect(readdirSync(dir)).toEqual([CONFIG_FILE_NAME]);
      },
    );

    it('stops every command that reads credentials with exit 2, not a missing-token error', async () => {
      writeRaw('{not json');
      const deps: Deps = { ...makeDeps(), config: new FileConfigStore(dir) };
      const error = await rejectionOf(resolveTarget(deps));
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).exitCode).toBe(2);
    });
  });

  it.each<[string, (deps: Deps) => Promise<void>]>([
    ['login', (deps) => runLogin({ withToken: true, secureStorage: false, verify: false }, deps)],
    ['logout', (deps) => runLogout(deps)],
    ['status', (deps) => runStatus({ json: true }, deps)],
  ])('%s on a corrupt file is exit 2 and leaves it byte-identical', async (_name, run) => {
    const bytes = Buffer.from('{"profiles": {"default": {"apiToken": 1234}}}');
    writeRaw(bytes);
    const deps: Deps = {
      ...makeDeps({
        io: makeIO({ stdinText: 'new-token-0000' }),
        settings: { baseUrl: 'https://ugs.example.com', baseUrlSource: 'flag' },
      }),
      config: new FileConfigStore(dir),
    };
    const error = await rejection(run(deps));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it('login then logout against a real file keeps the base URL and drops the token', async () => {
    const store = new FileConfigStore(dir);
    const deps = (stdinText?: string): Deps => ({
      ...makeDeps({
        io: makeIO(stdinText === undefined ? {} : { stdinText }),
        settings: { baseUrl: 'https://ugs.example.com/p/', baseUrlSource: 'flag' },
      }),
      config: store,
    });
    await runLogin(
      { withToken: true, secureStorage: false, verify: false },
      deps('file-token-4321\n'),
    );
    expect(readJson()).toEqual({
      profiles: { default: { baseUrl: 'https://ugs.example.com/p', apiToken: 'file-token-4321' } },
    });
    if (posix) expect(mode(file)).toBe(0o600);
    await runLogout(deps());
    expect(readJson()).toEqual({ profiles: { default: { baseUrl: 'https://ugs.example.com/p' } } });
  });

  it('a config path that is a directory is a ConfigError naming it', () => {
    mkdirSync(file, { recursive: true });
    const error = thrownBy(() => new FileConfigStore(dir).readProfile('default'));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(`cannot read config file ${file}`);
    expect((error as Error).message).toMatch(/it is a directory/);
  });

  it.skipIf(!posix)('an unreadable file is a ConfigError, and is left alone', async () => {
    // Root reads any file (and CI runs as root): there the case runs as nobody, through the binary.
    if (root) return unreadableAsNobody();
    writeRaw(JSON.stringify({ profiles: { default: A } }), 0o000);
    const store = new FileConfigStore(dir);
    const error = thrownBy(() => store.readProfile('default'));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/permission denied/);
    await expect(store.updateProfile('default', () => B)).rejects.toBeInstanceOf(ConfigError);
    chmodSync(file, 0o600);
    expect(readJson()).toEqual({ profiles: { default: A } });
  });

  it('a directory that cannot be created is a ConfigError', async () => {
    writeFileSync(join(base, 'blocker'), 'not a directory');
    const store = new FileConfigStore(join(base, 'blocker', 'ugs'));
    const error = await rejection(store.updateProfile('default', () => A));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/cannot write config/);
  });

  describe('the lock', () => {
    it('waits for a live holder, then gives up with a ConfigError that names the lock', async () => {
      writeRaw(JSON.stringify({ profiles: { default: A } }));
      // A live process that wrote its lock as ugs does: pid, nonce, start time.
      const pid = await liveProcess();
      writeFileSync(`${file}.lock`, `${pid}\n0123456789abcdef\n${processStartTime(pid) ?? ''}\n`);
      const store = new FileConfigStore(dir, { lockTimeoutMs: 50 });
      const error = await rejection(store.updateProfile('default', () => B));
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/locked by another ugs process/);
      expect((error as ConfigError).hint).toContain(`${file}.lock`);
      expect(readJson()).toEqual({ profiles: { default: A } });
      // Someone else's lock is not ours to remove.
      expect(existsSync(`${file}.lock`)).toBe(true);
    });

    it('takes over a lock whose process is gone', async () => {
      writeRaw(JSON.stringify({ profiles: {} }));
      writeFileSync(`${file}.lock`, '2147483646');
      await new FileConfigStore(dir, { lockTimeoutMs: 2_000 }).updateProfile('default', () => A);
      expect(readJson()).toEqual({ profiles: { default: A } });
      expect(existsSync(`${file}.lock`)).toBe(false);
    });

    it('takes over an old empty lock left by a crash', async () => {
      writeRaw(JSON.stringify({ profiles: {} }));
      writeFileSync(`${file}.lock`, '');
      const past = new Date(Date.now() - 60_000);
      utimesSync(`${file}.lock`, past, past);
      await new FileConfigStore(dir, { lockTimeoutMs: 2_000 }).updateProfile('default', () => A);
      expect(readJson()).toEqual({ profiles: { default: A } });
    });
  });
});

describe('configDir', () => {
  const home = '/home/ann';
  it.each<[string, Record<string, string>, NodeJS.Platform, string]>([
    [
      'UGS_CONFIG_DIR wins on linux',
      { UGS_CONFIG_DIR: '/x/ugs', XDG_CONFIG_HOME: '/xdg' },
      'linux',
      '/x/ugs',
    ],
    ['UGS_CONFIG_DIR wins on macOS', { UGS_CONFIG_DIR: '/x/ugs' }, 'darwin', '/x/ugs'],
    [
      'UGS_CONFIG_DIR wins on Windows',
      { UGS_CONFIG_DIR: '/x/ugs', APPDATA: '/appdata' },
      'win32',
      '/x/ugs',
    ],
    [
      'an empty UGS_CONFIG_DIR is ignored',
      { UGS_CONFIG_DIR: '' },
      'linux',
      join(home, '.config', 'ugs'),
    ],
    ['XDG_CONFIG_HOME on linux', { XDG_CONFIG_HOME: '/xdg' }, 'linux', join('/xdg', 'ugs')],
    ['~/.config on linux', {}, 'linux', join(home, '.config', 'ugs')],
    [
      'an empty XDG_CONFIG_HOME is ignored',
      { XDG_CONFIG_HOME: '' },
      'linux',
      join(home, '.config', 'ugs'),
    ],
    ['XDG_CONFIG_HOME on FreeBSD', { XDG_CONFIG_HOME: '/xdg' }, 'freebsd', join('/xdg', 'ugs')],
    ['~/Library/Preferences on macOS', {}, 'darwin', join(home, 'Library', 'Preferences', 'ugs')],
    [
      'macOS ignores XDG_CONFIG_HOME',
      { XDG_CONFIG_HOME: '/xdg' },
      'darwin',
      join(home, 'Library', 'Preferences', 'ugs'),
    ],
    ['APPDATA on Windows', { APPDATA: '/appdata' }, 'win32', join('/appdata', 'ugs', 'Config')],
    [
      'AppData/Roaming on Windows without APPDATA',
      {},
      'win32',
      join(home, 'AppData', 'Roaming', 'ugs', 'Config'),
    ],
  ])('%s', (_label, env, platform, expected) => {
    expect(configDir(env, platform, home)).toBe(expected);
  });

  it('never uses the -nodejs suffix', () => {
    for (const platform of ['linux', 'darwin', 'win32'] as const) {
      expect(configDir({}, platform, '/h')).not.toMatch(/nodejs/);
    }
  });
});

describe('precedence: flag > environment > profile', () => {
  const saved = { baseUrl: 'https://profile.example', apiToken: 'profile-token-1234' };

  it.each<[string, Partial<Deps['settings']>, string | undefined, string, string]>([
    ['profile only', {}, undefined, 'https://profile.example', 'profile'],
    [
      'env over profile',
      { baseUrl: 'https://env.example', baseUrlSource: 'env' },
      undefined,
      'https://env.example',
      'env',
    ],
    [
      'flag over profile',
      { baseUrl: 'https://flag.example', baseUrlSource: 'flag' },
      undefined,
      'https://flag.example',
      'flag',
    ],
  ])('base URL: %s', async (_label, settings, _unused, value, source) => {
    const deps = makeDeps({ settings, profiles: { default: saved } });
    expect(resolveCredentials(deps).baseUrl).toEqual({ value, source });
    expect((await resolveTarget(deps)).baseUrl.href).toBe(`${value}/`);
  });

  it.each<[string, string | undefined, { value: string; source: string } | undefined]>([
    [
      'profile when UGS_API_TOKEN is unset',
      undefined,
      { value: 'profile-token-1234', source: 'profile' },
    ],
    ['profile when UGS_API_TOKEN is empty', '', { value: 'profile-token-1234', source: 'profile' }],
    [
      'UGS_API_TOKEN over the profile',
      'env-token-5678',
      { value: 'env-token-5678', source: 'env UGS_API_TOKEN' },
    ],
  ])('API token: %s', async (_label, envToken, expected) => {
    const io = makeIO({ env: envToken === undefined ? {} : { UGS_API_TOKEN: envToken } });
    const deps = makeDeps({ io, profiles: { default: saved } });
    expect(resolveCredentials(deps).apiToken).toEqual(expected);
    expect((await resolveTarget(deps)).apiToken).toBe(expected?.value);
  });

  it('UGS_API_TOKEN alone, with a base URL from the environment, needs no profile', async () => {
    const io = makeIO({ env: { UGS_API_TOKEN: 'env-token-5678' } });
    const deps = makeDeps({
      io,
      profiles: {},
      settings: { baseUrl: 'https://env.example/p/', baseUrlSource: 'env' },
    });
    const target = await resolveTarget(deps);
    expect(target).toEqual({
      baseUrl: new URL('https://env.example/p'),
      apiToken: 'env-token-5678',
      apiPath: '/api/user',
      dialect: 'interface',
      profile: 'default',
      tokenSource: 'env UGS_API_TOKEN',
    });
  });

  it('reads the profile named by the settings', async () => {
    const deps = makeDeps({
      settings: { profile: 'staging' },
      profiles: {
        default: saved,
        staging: { baseUrl: 'https://staging.example', apiToken: 'st-tok' },
      },
    });
    expect(await resolveTarget(deps)).toEqual({
      baseUrl: new URL('https://staging.example'),
      apiToken: 'st-tok',
      apiPath: '/api/user',
      dialect: 'interface',
      profile: 'staging',
      tokenSource: 'profile',
    });
  });

  it('no token anywhere is an AuthError (exit 3); no base URL is a UsageError (exit 2)', async () => {
    const noToken = await rejectionOf(
      resolveTarget(makeDeps({ profiles: { default: { baseUrl: 'https://x.example' } } })),
    );
    expect(noToken).toBeInstanceOf(AuthError);
    expect((noToken as AuthError).exitCode).toBe(3);
    const noUrl = await rejectionOf(
      resolveTarget(makeDeps({ profiles: { default: { apiToken: 'tok-1234' } } })),
    );
    expect(noUrl).toBeInstanceOf(UsageError);
    expect((noUrl as UsageError).hint).toContain('--base-url');
  });

  it('a saved plain-http base URL is refused at use too, unless --insecure-http', async () => {
    const profiles = { default: { baseUrl: 'http://ugs.example.com', apiToken: 'tok-1234' } };
    await expect(resolveTarget(makeDeps({ profiles }))).rejects.toThrow(UsageError);
    expect(
      (await resolveTarget(makeDeps({ profiles, settings: { insecureHttp: true } }))).baseUrl.href,
    ).toBe('http://ugs.example.com/');
  });

  it('works the same against a real config file', async () => {
    const store = new FileConfigStore(dir);
    await store.updateProfile('default', () => saved);
    const deps: Deps = {
      ...makeDeps({
        io: makeIO({ env: { UGS_API_TOKEN: 'env-token-5678' } }),
        settings: { baseUrl: 'https://flag.example', baseUrlSource: 'flag' },
      }),
      config: store,
    };
    const credentials = resolveCredentials(deps);
    expect(credentials.apiToken).toEqual({ value: 'env-token-5678', source: 'env UGS_API_TOKEN' });
    expect(credentials.baseUrl).toEqual({ value: 'https://flag.example', source: 'flag' });
    expect(credentials.profile).toEqual(saved);
  });
});

describe('precedence through main (commander applies flag over environment)', () => {
  const system = {
    platform: process.platform,
    homedir: '/nonexistent-home',
    nodeVersion: 'v20.0.0',
    uid: process.getuid?.(),
    waitForShutdown: () => new Promise<string>(() => {}),
  };

  async function status(argv: string[], env: Record<string, string>) {
    // The variables go in the injected env only; process.env is cleared of them so that a
    // read of process.env behind main's back would be caught.
    for (const key of ['UGS_BASE_URL', 'UGS_PROFILE', 'UGS_CA_FILE', 'UGS_API_TOKEN']) {
      vi.stubEnv(key, undefined);
    }
    try {
      const io = makeIO({ env: { ...env, UGS_CONFIG_DIR: dir } });
      const code = await main(['status', '--json', ...argv], io, system);
      return { code, io, json: io.stdout.text === '' ? undefined : JSON.parse(io.stdout.text) };
    } finally {
      vi.unstubAllEnvs();
    }
  }

  beforeEach(async () => {
    const store = new FileConfigStore(dir);
    await store.updateProfile('default', () => ({
      baseUrl: 'https://profile.example',
      apiToken: 'profile-token-1234',
    }));
    await store.updateProfile('staging', () => ({ baseUrl: 'https://staging.example' }));
  });

  it('--base-url beats UGS_BASE_URL, which beats the profile', async () => {
    const flag = await status(['--base-url', 'https://flag.example'], {
      UGS_BASE_URL: 'https://env.example',
    });
    expect(flag.code).toBe(0);
    expect(flag.json).toMatchObject({ baseUrl: 'https://flag.example', baseUrlSource: 'flag' });
    const env = await status([], { UGS_BASE_URL: 'https://env.example' });
    expect(env.json).toMatchObject({ baseUrl: 'https://env.example', baseUrlSource: 'env' });
    const profile = await status([], {});
    expect(profile.json).toMatchObject({
      baseUrl: 'https://profile.example',
      baseUrlSource: 'profile',
    });
  });

  it('--profile beats UGS_PROFILE; a profile without a token is exit 3', async () => {
    const env = await status([], { UGS_PROFILE: 'staging' });
    expect(env.json).toMatchObject({ profile: 'staging', tokenSource: null });
    expect(env.code).toBe(3);
    expect(env.io.stderr.text).toMatch(/^error: no API token for profile "staging"/m);
    expect(env.io.stderr.text).toMatch(/^hint: run `ugs login --profile staging`/m);
    const flag = await status(['--profile', 'default'], { UGS_PROFILE: 'staging' });
    expect(flag.code).toBe(0);
    expect(flag.json).toMatchObject({
      profile: 'default',
      tokenSource: 'profile',
      token: '****1234',
    });
  });

  it('a corrupt config file is exit 2 with the path on stderr, and stays as it was', async () => {
    writeRaw('{"profiles": oops', 0o600);
    const before = readFileSync(file);
    const result = await status([], {});
    expect(result.code).toBe(2);
    expect(result.io.stderr.text).toContain(file);
    expect(result.io.stderr.text).not.toMatch(/\n\s+at /);
    expect(readFileSync(file).equals(before)).toBe(true);
  });
});

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error, but none was thrown');
}

describe('profile names are data', () => {
  it('a profile named __proto__ is stored and read back like any other', async () => {
    const profileDir = tempDir('proto');
    try {
      const store = new FileConfigStore(profileDir);
      await store.updateProfile('__proto__', () => ({
        baseUrl: 'https://p.example',
        apiToken: 'proto-token-1',
      }));
      await store.updateProfile('default', () => ({ apiToken: 'default-token-1' }));
      const fresh = new FileConfigStore(profileDir);
      expect(fresh.readProfile('__proto__')).toEqual({
        baseUrl: 'https://p.example',
        apiToken: 'proto-token-1',
      });
      expect(fresh.readProfile('default')).toEqual({ apiToken: 'default-token-1' });
    } finally {
      rmSync(profileDir, { recursive: true, force: true });
    }
  });
});

/** The unreadable-file case as `nobody`, where the tests run as root: `ugs status` and `ugs login`. */
async function unreadableAsNobody(): Promise<void> {
  const sandbox = makeSandbox();
  const user = unprivileged(sandbox);
  mkdirSync(sandbox.configDir, { mode: 0o700 });
  const text = JSON.stringify({ profiles: { default: A } });
  writeFileSync(sandbox.configPath, text, { mode: 0o000 });
  chmodSync(sandbox.configPath, 0o000);
  for (const path of [sandbox.configDir, sandbox.configPath]) chownSync(path, NOBODY, NOBODY);
  const read = await runUgs(['status'], { sandbox, ...user });
  expect(expectFailure(read, 2).error).toMatch(/permission denied/);
  const write = await runUgs(['login', '--with-token', '--base-url', B.baseUrl], {
    sandbox,
    ...user,
    stdin: `${B.apiToken}\n`,
  });
  expect(expectFailure(write, 2).error).toContain(sandbox.configPath);
  chmodSync(sandbox.configPath, 0o600);
  expect(readFileSync(sandbox.configPath, 'utf8')).toBe(text);
}
