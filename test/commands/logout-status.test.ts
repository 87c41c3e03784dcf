import { describe, expect, it } from 'vitest';
import { runLogout } from '../../src/commands/logout.js';
import { collectStatus, runStatus } from '../../src/commands/status.js';
import { embedSecretAccount } from '../../src/context/embed-secret.js';
import { AuthError } from '../../src/errors.js';
import { maskToken } from '../../src/text/redact.js';
import { MemoryCredentialStore, makeDeps, makeIO, rejection, terminalIO } from '../kit/fakes.js';

const SAVED = 'saved-api-token-abcd';
const ENV = 'env-api-token-wxyz';

describe('runLogout', () => {
  it("removes the profile's token, keeps its base URL, and says so on stderr", async () => {
    const deps = makeDeps({
      profiles: {
        default: { baseUrl: 'https://ugs.example.com', apiToken: SAVED },
        staging: { baseUrl: 'https://staging.example', apiToken: 'staging-token-1' },
      },
    });
    await runLogout(deps);
    expect(deps.config.profiles).toEqual({
      default: { baseUrl: 'https://ugs.example.com' },
      staging: { baseUrl: 'https://staging.example', apiToken: 'staging-token-1' },
    });
    expect(deps.io.stdout.text).toBe('');
    expect(deps.io.stderr.text).toContain('Removed the API token of profile "default"');
    expect(deps.io.stderr.text).toContain(deps.config.path);
    expect(deps.io.stderr.text).not.toContain(SAVED);
  });

  it('forgets the embed secret too, with its key id: from the file, or from the credential store', async () => {
    const inFile = makeDeps({
      profiles: {
        default: {
          baseUrl: 'https://ugs.example.com',
          apiToken: SAVED,
          embedSecret: 'embed-secret-in-the-file-0123456',
          embedKeyId: 'k1',
        },
      },
    });
    await runLogout(inFile);
    expect(inFile.config.profiles).toEqual({ default: { baseUrl: 'https://ugs.example.com' } });
    expect(inFile.io.stderr.text).toContain('Removed the embed secret of profile "default" from');
    expect(inFile.io.stderr.text).not.toContain('embed-secret-in-the-file');

    const store = new MemoryCredentialStore();
    const inStore = makeDeps({
      credentialStore: store,
      profiles: {
        default: {
          baseUrl: 'https://ugs.example.com',
          embedSecretStore: 'keyring',
          embedKeyId: 'k1',
        },
      },
    });
    const account = embedSecretAccount('default', inStore.config.path);
    store.secrets.set(account, 'embed-secret-in-the-store-012345');
    await runLogout(inStore);
    expect(store.secrets.has(account)).toBe(false);
    expect(inStore.config.profiles).toEqual({ default: { baseUrl: 'https://ugs.example.com' } });
    expect(inStore.io.stderr.text).toContain(
      'Removed the embed secret of profile "default" from the Fake Keychain',
    );
  });

  it('a credential store out of reach keeps the embed secret and its reference', async () => {
    const store = new MemoryCredentialStore();
    const deps = makeDeps({
      credentialStore: store,
      profiles: { default: { baseUrl: 'https://ugs.example.com', embedSecretStore: 'keyring' } },
    });
    store.unreachable = 'no D-Bus session';
    const error = await rejection(runLogout(deps));
    expect((error as Error).message).toContain(
      'cannot remove the embed secret of profile "default"',
    );
    expect(deps.config.profiles.default?.embedSecretStore).toBe('keyring');
  });

  it('logs out of the profile in use only', async () => {
    const deps = makeDeps({
      settings: { profile: 'staging' },
      profiles: {
        default: { baseUrl: 'https://ugs.example.com', apiToken: SAVED },
        staging: { baseUrl: 'https://staging.example', apiToken: 'staging-token-1' },
      },
    });
    await runLogout(deps);
    expect(deps.config.profiles.default?.apiToken).toBe(SAVED);
    expect(deps.config.profiles.staging).toEqual({ baseUrl: 'https://staging.example' });
  });

  it.each([
    ['no profile at all', {}],
    ['a profile with only a base URL', { default: { baseUrl: 'https://ugs.example.com' } }],
  ])('succeeds (exit 0) with %s, writing nothing', async (_label, profiles) => {
    const deps = makeDeps({ profiles });
    await expect(runLogout(deps)).resolves.toBeUndefined();
    expect(deps.config.writes).toBe(0);
    expect(deps.io.stderr.text).toMatch(/has no saved API token; nothing to remove/);
    expect(deps.io.stdout.text).toBe('');
  });

  it('notes that UGS_API_TOKEN is still set', async () => {
    const deps = makeDeps({ io: makeIO({ env: { UGS_API_TOKEN: ENV } }) });
    await runLogout(deps);
    expect(deps.io.stderr.text).toMatch(/UGS_API_TOKEN is still set/);
    expect(deps.io.stderr.text).not.toContain(ENV);
  });

  it('needs no terminal and never prompts', async () => {
    const deps = makeDeps({ io: terminalIO() });
    await runLogout(deps);
    expect(deps.prompter.asked).toEqual([]);
  });
});

describe('maskToken', () => {
  it.each([
    ['abcdefghijkl', '****ijkl'],
    ['api-token-0123456789', '****6789'],
    ['abcdefgh', '****efgh'],
    ['abcdefg', '****'],
    ['abcd', '****'],
    ['', '****'],
  ])('%j -> %j', (token, masked) => {
    expect(maskToken(token)).toBe(masked);
  });
});

describe('runStatus', () => {
  it('shows the profile, base URL and source, masked token, token source and config path', async () => {
    const deps = makeDeps({
      profiles: { default: { baseUrl: 'https://ugs.example.com', apiToken: SAVED } },
    });
    await runStatus({ json: false }, deps);
    const out = deps.io.stdout.text;
    expect(out).toMatch(/profile\tdefault/);
    expect(out).toMatch(/base URL\thttps:\/\/ugs\.example\.com \(profile\)/);
    expect(out).toMatch(/token\t\*\*\*\*abcd/);
    expect(out).toMatch(/token source\tprofile/);
    expect(out).toContain(deps.config.path);
    expect(out).not.toContain(SAVED);
    expect(deps.io.stderr.text).toBe('');
  });

  it('names env UGS_API_TOKEN as the source when it is set, and masks that token', async () => {
    const deps = makeDeps({
      io: makeIO({ env: { UGS_API_TOKEN: ENV } }),
      profiles: { default: { baseUrl: 'https://ugs.example.com', apiToken: SAVED } },
    });
    await runStatus({ json: false }, deps);
    const out = deps.io.stdout.text;
    expect(out).toMatch(/token source\tenv UGS_API_TOKEN/);
    expect(out).toMatch(/token\t\*\*\*\*wxyz/);
    expect(out).not.toContain(ENV);
    expect(out).not.toContain('abcd');
  });

  const WITH_PASSWORD = 'https://ci:Pa55-w0rd@ugs.example.com/p?key=k3y-v4lue';
  it.each([
    ['flag', { baseUrl: WITH_PASSWORD, baseUrlSource: 'flag' }, undefined],
    ['env', { baseUrl: WITH_PASSWORD, baseUrlSource: 'env' }, undefined],
    ['profile', {}, WITH_PASSWORD],
  ] as const)(
    'masks a password (and query values) in a base URL from the %s, as doctor does',
    async (source, settings, saved) => {
      for (const json of [false, true]) {
        const deps = makeDeps({
          settings,
          profiles: {
            default: { apiToken: SAVED, ...(saved !== undefined && { baseUrl: saved }) },
          },
        });
        await runStatus({ json }, deps);
        const out = deps.io.stdout.text;
        expect(out).not.toContain('Pa55-w0rd');
        expect(out).not.toContain('k3y-v4lue');
        if (json) expect(JSON.parse(out).baseUrl).toBe('https://***@ugs.example.com/p?key=***');
        else expect(out).toContain(`base URL\thttps://***@ugs.example.com/p?key=*** (${source})`);
      }
    },
  );

  it('--json prints the status object and nothing else on stdout', async () => {
    const deps = makeDeps({
      io: makeIO({ env: { UGS_API_TOKEN: ENV } }),
      settings: { profile: 'ci', baseUrl: 'https://flag.example', baseUrlSource: 'flag' },
      profiles: { ci: { baseUrl: 'https://saved.example', apiToken: SAVED } },
    });
    await runStatus({ json: true }, deps);
    expect(JSON.parse(deps.io.stdout.text)).toEqual({
      profile: 'ci',
      profileSource: 'default',
      production: false,
      defaultProfile: 'default',
      defaultProfileSource: 'default',
      baseUrl: 'https://flag.example',
      baseUrlSource: 'flag',
      apiPath: '/api/user',
      apiPathSource: 'default',
      dialect: 'interface',
      dialectSource: 'default',
      tokenSource: 'env UGS_API_TOKEN',
      tokenLocation: 'environment',
      token: '****wxyz',
      configPath: deps.config.path,
    });
    expect(deps.io.stdout.text).not.toContain(ENV);
    expect(deps.io.stderr.text).toBe('');
  });

  it('without a token it still shows the status, then fails with exit 3', async () => {
    const deps = makeDeps({ profiles: { default: { baseUrl: 'https://ugs.example.com' } } });
    const error = await rejection(runStatus({ json: false }, deps));
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).exitCode).toBe(3);
    expect((error as AuthError).hint).toContain('ugs login');
    expect(deps.io.stdout.text).toMatch(/token source\t\(none\)/);
  });

  it('without a token, --json shows null token fields and exits 3', async () => {
    const deps = makeDeps({ profiles: {}, settings: { profile: 'staging' } });
    const error = await rejection(runStatus({ json: true }, deps));
    expect((error as AuthError).exitCode).toBe(3);
    expect((error as AuthError).hint).toContain('ugs login --profile staging');
    expect(JSON.parse(deps.io.stdout.text)).toEqual({
      profile: 'staging',
      profileSource: 'default',
      production: false,
      defaultProfile: 'default',
      defaultProfileSource: 'default',
      baseUrl: null,
      baseUrlSource: null,
      apiPath: '/api/user',
      apiPathSource: 'default',
      dialect: 'interface',
      dialectSource: 'default',
      tokenSource: null,
      tokenLocation: null,
      token: null,
      configPath: deps.config.path,
    });
  });

  it('an empty UGS_API_TOKEN does not count as a token', async () => {
    const deps = makeDeps({
      io: makeIO({ env: { UGS_API_TOKEN: '' } }),
      profiles: { default: { baseUrl: 'https://ugs.example.com', apiToken: SAVED } },
    });
    expect((await collectStatus(deps)).tokenSource).toBe('profile');
    const none = makeDeps({ io: makeIO({ env: { UGS_API_TOKEN: '' } }), profiles: {} });
    await expect(runStatus({ json: true }, none)).rejects.toBeInstanceOf(AuthError);
  });

  it('shows where the base URL comes from: env', async () => {
    const deps = makeDeps({
      settings: { baseUrl: 'https://env.example', baseUrlSource: 'env' },
    });
    const status = await collectStatus(deps);
    expect(status.baseUrl).toBe('https://env.example');
    expect(status.baseUrlSource).toBe('env');
  });

  it('shows the API path and where it comes from: flag > env > profile > default', async () => {
    const saved = { default: { baseUrl: 'https://ugs.example.com', apiPath: '/saved/' } };
    const flag = makeDeps({
      settings: { apiPath: '/flag/', apiPathSource: 'flag' },
      profiles: saved,
    });
    expect(await collectStatus(flag)).toMatchObject({ apiPath: '/flag/', apiPathSource: 'flag' });
    const env = makeDeps({ settings: { apiPath: '/env', apiPathSource: 'env' }, profiles: saved });
    expect(await collectStatus(env)).toMatchObject({ apiPath: '/env', apiPathSource: 'env' });
    expect(await collectStatus(makeDeps({ profiles: saved }))).toMatchObject({
      apiPath: '/saved/',
      apiPathSource: 'profile',
    });
    expect(await collectStatus(makeDeps())).toMatchObject({
      apiPath: '/api/user',
      apiPathSource: 'default',
    });
  });

  it('the table has an API path row', async () => {
    const deps = makeDeps({
      profiles: { default: { baseUrl: 'https://ugs.example.com', apiPath: '/api/user/' } },
    });
    await runStatus({ json: false }, deps).catch(() => {});
    expect(deps.io.stdout.text).toMatch(/API path\t\/api\/user\/ \(profile\)/);
  });

  it('colours only on a terminal', async () => {
    const plain = makeDeps();
    await runStatus({ json: false }, plain);
    expect(plain.io.stdout.text).not.toContain('\u001b[');
    const coloured = makeDeps({ io: terminalIO() });
    await runStatus({ json: false }, coloured);
    expect(coloured.io.stdout.text).toContain('\u001b[');
    const noColor = makeDeps({ io: terminalIO(), settings: { noColor: true } });
    await runStatus({ json: false }, noColor);
    expect(noColor.io.stdout.text).not.toContain('\u001b[');
  });
});
