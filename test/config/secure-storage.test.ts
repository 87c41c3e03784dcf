// `ugs login --secure-storage` and every command that meets a token in the OS credential store,
// against an in-memory store (the real Secret Service: test/config/secure-storage-e2e.process.test.ts).
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLogin } from '../../src/commands/login.js';
import { runLogout } from '../../src/commands/logout.js';
import { collectStatus, runStatus } from '../../src/commands/status.js';
import { FileConfigStore, type Profile } from '../../src/config/config.js';
import { credentialAccount, describeKeyringError } from '../../src/config/secure-store.js';
import { readApiToken, resolveCredentials, resolveTarget } from '../../src/context/credentials.js';
import type { Deps } from '../../src/context/factory.js';
import { AuthError, ConfigError } from '../../src/errors.js';
import { tempDir } from '../kit/binary.js';
import {
  MemoryConfigStore,
  MemoryCredentialStore,
  makeDeps,
  makeIO,
  rejection,
  type TestDeps,
} from '../kit/fakes.js';

const TOKEN = 'stored-api-token-5678';
const FILE_TOKEN = 'file-api-token-1234';
const BASE = 'https://ugs.example.com';
const NO_DBUS = 'no D-Bus session bus to reach the Secret Service (test)';
const secure = { withToken: true, secureStorage: true, verify: false };
const plain = { withToken: true, secureStorage: false, verify: false };

function loginDeps(
  options: { profiles?: Record<string, Profile>; store?: MemoryCredentialStore; env?: object } = {},
): TestDeps {
  return makeDeps({
    io: makeIO({ stdinText: `${TOKEN}\n`, env: { ...options.env } }),
    profiles: options.profiles ?? {},
    settings: { baseUrl: BASE, baseUrlSource: 'flag' },
    ...(options.store && { credentialStore: options.store }),
  });
}

/** A store that holds TOKEN for the default profile of the fake config, as after a login. */
function storeWithToken(): MemoryCredentialStore {
  return new MemoryCredentialStore({
    [credentialAccount('default', new MemoryConfigStore().path)]: TOKEN,
  });
}

const inStore: Record<string, Profile> = { default: { baseUrl: BASE, tokenStore: 'keyring' } };

describe('login --secure-storage', () => {
  it('puts the token in the credential store; the profile records that and holds no token', async () => {
    const deps = loginDeps({ profiles: { default: { baseUrl: BASE, apiToken: FILE_TOKEN } } });
    await runLogin(secure, deps);
    expect(deps.config.profiles).toEqual({ default: { baseUrl: BASE, tokenStore: 'keyring' } });
    expect([...deps.credentialStore.secrets]).toEqual([
      [credentialAccount('default', deps.config.path), TOKEN],
    ]);
    expect(deps.io.stderr.text).toContain('the API token is in the Fake Keychain');
    expect(deps.io.stdout.text + deps.io.stderr.text).not.toContain(TOKEN);
  });

  it('with no reachable store fails with exit 2, says why, and saves nothing anywhere', async () => {
    const store = new MemoryCredentialStore();
    store.unreachable = NO_DBUS;
    const before = { default: { baseUrl: 'https://old.example', apiToken: FILE_TOKEN } };
    const deps = loginDeps({ profiles: structuredClone(before), store });
    const error = await rejection(runLogin(secure, deps));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    expect((error as ConfigError).message).toContain(NO_DBUS);
    expect((error as ConfigError).message).toContain('nothing was saved');
    expect((error as ConfigError).hint).toContain('without --secure-storage');
    // No silent downgrade to the file: the old profile is untouched and was not even written.
    expect(deps.config.writes).toBe(0);
    expect(deps.config.profiles).toEqual(before);
    expect(store.secrets.size).toBe(0);
  });

  it('takes the stored copy back when the config file cannot be written', async () => {
    const deps = loginDeps();
    deps.config.updateProfile = async () => {
      throw new ConfigError('cannot write config /fake/ugs/config.json: disk full');
    };
    await expect(runLogin(secure, deps)).rejects.toThrow('disk full');
    expect(deps.credentialStore.secrets.size).toBe(0);
  });

  it('a later plain login stores in the file again and removes the store copy', async () => {
    const deps = loginDeps({ profiles: structuredClone(inStore), store: storeWithToken() });
    await runLogin(plain, deps);
    expect(deps.config.profiles).toEqual({ default: { baseUrl: BASE, apiToken: TOKEN } });
    expect(deps.credentialStore.secrets.size).toBe(0);
  });

  it('a plain login that cannot reach the store still logs in, and warns where the old copy is', async () => {
    const store = storeWithToken();
    store.unreachable = NO_DBUS;
    const deps = loginDeps({ profiles: structuredClone(inStore), store });
    await runLogin(plain, deps);
    expect(deps.config.profiles).toEqual({ default: { baseUrl: BASE, apiToken: TOKEN } });
    expect(deps.io.stderr.text).toMatch(/warning: could not remove the old API token/);
    expect(deps.io.stderr.text).toContain(credentialAccount('default', deps.config.path));
  });

  it('a plain login of a profile that never used the store does not touch it', async () => {
    const deps = loginDeps({ profiles: { default: { baseUrl: BASE, apiToken: FILE_TOKEN } } });
    await runLogin(plain, deps);
    expect(deps.credentialStore.calls).toBe(0);
  });
});

describe('a token in the credential store at use', () => {
  it('resolveTarget reads it from the store', async () => {
    const deps = makeDeps({ profiles: inStore, credentialStore: storeWithToken() });
    expect(resolveCredentials(deps).tokenLocation).toBe('credential store');
    const target = await resolveTarget(deps);
    expect(target.apiToken).toBe(TOKEN);
    expect(target.tokenSource).toBe('profile');
  });

  it('--debug: the trace header shows the token read from the store (its last four), not "none"', async () => {
    const io = makeIO();
    const deps = makeDeps({
      io,
      profiles: inStore,
      credentialStore: storeWithToken(),
      settings: { debug: true },
    });
    await resolveTarget(deps);
    expect(io.stderr.text).toContain(`* API token: …${TOKEN.slice(-4)} (profile "default")`);
    expect(io.stderr.text).not.toContain(TOKEN);

    const failing = makeIO();
    const store = storeWithToken();
    store.unreachable = NO_DBUS;
    const unreachable = makeDeps({
      io: failing,
      profiles: inStore,
      credentialStore: store,
      settings: { debug: true },
    });
    await rejection(resolveTarget(unreachable));
    expect(failing.stderr.text).toContain('* API token: none');
  });

  it('an unreachable store is a ConfigError (exit 2) with a hint, never a crash', async () => {
    const store = storeWithToken();
    store.unreachable = NO_DBUS;
    const error = await rejection(
      resolveTarget(makeDeps({ profiles: inStore, credentialStore: store })),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    expect((error as ConfigError).message).toContain('from the Fake Keychain');
    expect((error as ConfigError).message).toContain(NO_DBUS);
    expect((error as ConfigError).hint).toContain('ugs login --secure-storage');
    expect((error as ConfigError).hint).toContain('UGS_API_TOKEN');
  });

  it('a store without the entry is an AuthError (exit 3) saying where it looked', async () => {
    const error = await rejection(
      resolveTarget(makeDeps({ profiles: inStore, credentialStore: new MemoryCredentialStore() })),
    );
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).exitCode).toBe(3);
    expect((error as AuthError).message).toContain('Fake Keychain holds no API token');
  });

  it('UGS_API_TOKEN overrides it without touching the store', async () => {
    const store = storeWithToken();
    const deps = makeDeps({
      io: makeIO({ env: { UGS_API_TOKEN: 'env-token-9999' } }),
      profiles: inStore,
      credentialStore: store,
    });
    expect((await resolveTarget(deps)).apiToken).toBe('env-token-9999');
    expect(store.calls).toBe(0);
  });

  it('a token in the config file never touches the store', async () => {
    const deps = makeDeps({ profiles: { default: { baseUrl: BASE, apiToken: FILE_TOKEN } } });
    expect((await readApiToken(deps, resolveCredentials(deps)))?.value).toBe(FILE_TOKEN);
    expect((await resolveTarget(deps)).apiToken).toBe(FILE_TOKEN);
    expect(deps.credentialStore.calls).toBe(0);
  });
});

describe('status and logout with the credential store', () => {
  it.each([
    ['credential store', inStore, {}, 'credential store (Fake Keychain)'],
    ['config file', { default: { baseUrl: BASE, apiToken: FILE_TOKEN } }, {}, 'config file'],
    ['environment', inStore, { UGS_API_TOKEN: 'env-token-9999' }, 'environment (UGS_API_TOKEN)'],
  ] as const)('status says the token lives in the %s', async (location, profiles, env, shown) => {
    const deps = makeDeps({
      io: makeIO({ env }),
      profiles: structuredClone(profiles) as Record<string, Profile>,
      credentialStore: storeWithToken(),
    });
    expect(await collectStatus(deps)).toMatchObject({ tokenLocation: location });
    await runStatus({ json: false }, deps);
    expect(deps.io.stdout.text).toMatch(
      new RegExp(`token stored in\t${escapeRegExp(shown)}$`, 'm'),
    );
  });

  it('status of an unreachable store shows where the token lives, then fails with exit 2', async () => {
    const store = storeWithToken();
    store.unreachable = NO_DBUS;
    const deps = makeDeps({ profiles: inStore, credentialStore: store });
    const error = await rejection(runStatus({ json: true }, deps));
    expect((error as ConfigError).exitCode).toBe(2);
    expect(JSON.parse(deps.io.stdout.text)).toMatchObject({
      tokenSource: 'profile',
      tokenLocation: 'credential store',
      token: null,
    });
  });

  it('logout removes the token from the store and the reference from the profile', async () => {
    const deps = makeDeps({
      profiles: structuredClone(inStore),
      credentialStore: storeWithToken(),
    });
    await runLogout(deps);
    expect(deps.credentialStore.secrets.size).toBe(0);
    expect(deps.config.profiles).toEqual({ default: { baseUrl: BASE } });
    expect(deps.io.stderr.text).toContain('from the Fake Keychain');
  });

  it('logout with an unreachable store fails with exit 2 and changes nothing', async () => {
    const store = storeWithToken();
    store.unreachable = NO_DBUS;
    const deps = makeDeps({ profiles: structuredClone(inStore), credentialStore: store });
    const error = await rejection(runLogout(deps));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).hint).toContain('ugs logout');
    expect(deps.config.profiles).toEqual(inStore);
    expect(deps.config.writes).toBe(0);
    expect(store.secrets.size).toBe(1);
  });

  it('logout of a profile whose store entry is already gone drops the reference', async () => {
    const deps = makeDeps({ profiles: structuredClone(inStore) });
    await runLogout(deps);
    expect(deps.config.profiles).toEqual({ default: { baseUrl: BASE } });
    expect(deps.io.stderr.text).toContain('held no API token');
  });

  it('logout of a file token does not touch the store', async () => {
    const deps = makeDeps({ profiles: { default: { baseUrl: BASE, apiToken: FILE_TOKEN } } });
    await runLogout(deps);
    expect(deps.config.profiles).toEqual({ default: { baseUrl: BASE } });
    expect(deps.credentialStore.calls).toBe(0);
  });
});

describe('the config file with tokenStore', () => {
  it('round-trips tokenStore through the real file and refuses an unknown store', async () => {
    const dir = tempDir('secure');
    const store = new FileConfigStore(dir);
    await store.updateProfile('default', () => ({ baseUrl: BASE, tokenStore: 'keyring' }));
    expect(JSON.parse(readFileSync(store.path, 'utf8'))).toEqual({
      profiles: { default: { baseUrl: BASE, tokenStore: 'keyring' } },
    });
    writeFileSync(store.path, JSON.stringify({ profiles: { default: { tokenStore: 'vault' } } }));
    expect(() => new FileConfigStore(dir).readProfile('default')).toThrow(
      /"tokenStore" of profile "default" must be "keyring"/,
    );
  });
});

describe('describeKeyringError', () => {
  it.each([
    [
      'Platform failure: DBus error: Using X11 for dbus-daemon autolaunch was disabled at compile time, set your DBUS_SESSION_BUS_ADDRESS instead',
      /^no D-Bus session bus to reach the Secret Service \(Platform failure/,
    ],
    [
      'Platform failure: DBus error: Failed to connect to socket /run/user/0/bus: No such file or directory',
      /^no D-Bus session bus to reach the Secret Service \(Platform failure/,
    ],
    [
      'Platform failure: DBus error: The name org.freedesktop.secrets was not provided by any .service files',
      /^no Secret Service on the D-Bus session bus \(Platform failure/,
    ],
    [
      "Couldn't access platform storage: Secret Service: unlock prompt was dismissed",
      /^Couldn't access platform storage: Secret Service: unlock prompt was dismissed$/,
    ],
    ['first line\n    at stack (x.js:1:1)', /^first line$/],
  ])('%s', (message, expected) => {
    expect(describeKeyringError(new Error(message), 'linux')).toMatch(expected);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('one config directory, one store entry, however it is spelt', () => {
  /** The real directory, and spellings of it: through a symlink, with `.` and `..`, relative. */
  function spellings(): { real: string; others: string[] } {
    const root = realpathSync(tempDir('spelt'));
    const real = join(root, 'real');
    mkdirSync(join(real, 'sub'), { recursive: true });
    symlinkSync(real, join(root, 'link'));
    return {
      real,
      others: [
        join(root, 'link'),
        `${root}/link/./sub/..`,
        `${root}/link/sub/../`,
        relative(process.cwd(), join(root, 'link')),
        `${real}/`,
      ],
    };
  }

  const depsIn = (dir: string, store: MemoryCredentialStore, stdin = `${TOKEN}\n`): Deps => ({
    ...makeDeps({
      io: makeIO({ stdinText: stdin }),
      settings: { baseUrl: BASE, baseUrlSource: 'flag' },
      credentialStore: store,
    }),
    config: new FileConfigStore(dir),
  });

  it('every spelling maps to the account of the real path', () => {
    const { real, others } = spellings();
    const expected = `default (${join(real, 'config.json')})`;
    for (const dir of [real, ...others]) {
      expect(credentialAccount('default', join(dir, 'config.json')), dir).toBe(expected);
    }
  });

  it('login through any spelling, status and logout through any other: the entry is removed', async () => {
    const { real, others } = spellings();
    for (const [loginDir, logoutDir] of [
      [others[0], real],
      [real, others[0]],
      [others[1], others[2]],
      [others[3], others[4]],
    ] as const) {
      const store = new MemoryCredentialStore();
      await runLogin(secure, depsIn(loginDir ?? '', store));
      expect(store.secrets.size).toBe(1);
      const reader = depsIn(logoutDir ?? '', store);
      expect((await readApiToken(reader, resolveCredentials(reader)))?.value).toBe(TOKEN);
      await runLogout(reader);
      expect(store.secrets.size, `${loginDir} then ${logoutDir}`).toBe(0);
    }
  });

  it('an entry an earlier version keyed on the spelt path is read, replaced and removed', async () => {
    const { others } = spellings();
    const dir = others[0] ?? '';
    const legacy = `default (${resolve(dir, 'config.json')})`;
    expect(legacy).not.toBe(credentialAccount('default', join(dir, 'config.json')));
    await new FileConfigStore(dir).updateProfile('default', () => ({
      baseUrl: BASE,
      tokenStore: 'keyring',
    }));

    const store = new MemoryCredentialStore({ [legacy]: 'older-api-token-0000' });
    const reader = depsIn(dir, store);
    expect((await readApiToken(reader, resolveCredentials(reader)))?.value).toBe(
      'older-api-token-0000',
    );
    await runLogout(reader);
    expect(store.secrets.size).toBe(0);

    const again = new MemoryCredentialStore({ [legacy]: 'older-api-token-0000' });
    await runLogin(secure, depsIn(dir, again));
    expect([...again.secrets.values()]).toEqual([TOKEN]);
  });
});
