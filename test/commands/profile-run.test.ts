import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProfile } from '../../src/commands/profile.js';
import { FileConfigStore, type Profile } from '../../src/config/config.js';
import { credentialAccount } from '../../src/config/secure-store.js';
import type { Deps } from '../../src/context/factory.js';
import { CancelledError, UsageError } from '../../src/errors.js';
import { MemoryCredentialStore, makeDeps, rejection, terminalIO } from '../kit/fakes.js';
import { tempDir } from '../kit/index.js';

const profiles = () => ({
  default: { baseUrl: 'https://ugs.example.com', apiToken: 'api-token-default-1111' },
  staging: { baseUrl: 'https://staging.example.com', tokenStore: 'keyring' as const },
});

describe('runProfile remove at a terminal', () => {
  it('asks first, naming the profile, its base URL and where its token is; no removes nothing', async () => {
    const deps = makeDeps({
      io: terminalIO(),
      profiles: profiles(),
      prompts: [
        [
          'confirm',
          'Remove profile "staging", https://staging.example.com (its API token in the credential store)?',
          false,
        ],
      ],
    });
    const error = await rejection(
      runProfile({ action: 'remove', name: 'staging', yes: false }, deps),
    );
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as CancelledError).exitCode).toBe(130);
    expect(deps.config.profiles.staging).toBeDefined();
    expect(deps.config.writes).toBe(0);
    expect(deps.prompter.calls[0]?.default).toBe(false);
  });

  it('yes: the token leaves the credential store, then the profile leaves the file', async () => {
    const store = new MemoryCredentialStore();
    const deps = makeDeps({
      io: terminalIO(),
      profiles: profiles(),
      credentialStore: store,
      prompts: [['confirm', 'Remove profile "staging"', true]],
    });
    store.secrets.set(credentialAccount('staging', deps.config.path), 'api-token-staging-2222');
    await runProfile({ action: 'remove', name: 'staging', yes: false }, deps);
    expect(store.secrets.size).toBe(0);
    expect(Object.keys(deps.config.profiles)).toEqual(['default']);
  });

  it('a credential store out of reach changes nothing', async () => {
    const store = new MemoryCredentialStore();
    store.unreachable = 'no D-Bus session bus';
    const deps = makeDeps({ profiles: profiles(), credentialStore: store });
    const error = await rejection(
      runProfile({ action: 'remove', name: 'staging', yes: true }, deps),
    );
    expect((error as Error).message).toContain('no D-Bus session bus');
    expect(deps.config.profiles.staging).toBeDefined();
    expect(deps.config.writes).toBe(0);
  });
});

describe('profile use and profile remove of one name at the same moment', () => {
  const dir = tempDir('profile-race');
  let rounds = 0;

  /** A config directory holding `default` and `staging`, no default chosen. */
  function configDir(): string {
    const path = join(dir, `config-${++rounds}`);
    mkdirSync(path, { mode: 0o700 });
    writeFileSync(join(path, 'config.json'), JSON.stringify({ profiles: profiles() }), {
      mode: 0o600,
    });
    return path;
  }

  /** A config store whose `setDefaultProfile` first lets `meanwhile` run to its end. */
  class Interleaved extends FileConfigStore {
    constructor(
      dir: string,
      private readonly meanwhile: () => Promise<void>,
    ) {
      super(dir);
    }
    override async setDefaultProfile(
      name: string,
      check?: (profiles: Readonly<Record<string, Profile>>) => void,
    ): Promise<void> {
      await this.meanwhile();
      return super.setDefaultProfile(name, check);
    }
  }

  const withConfig = (config: FileConfigStore): Deps => ({ ...makeDeps(), config });

  it("a remove between use's first look and its write: use fails (exit 2), no default names a missing profile", async () => {
    const path = configDir();
    const remove = () =>
      runProfile(
        { action: 'remove', name: 'staging', yes: true },
        withConfig(new FileConfigStore(path)),
      );
    const error = await rejection(
      runProfile({ action: 'use', name: 'staging' }, withConfig(new Interleaved(path, remove))),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe('no saved profile "staging" (ugs profile use)');
    const file = JSON.parse(readFileSync(join(path, 'config.json'), 'utf8'));
    expect(Object.keys(file.profiles)).toEqual(['default']);
    expect(file).not.toHaveProperty('defaultProfile');
  });

  it('a use that lands first is undone by the remove: the default goes back to none', async () => {
    const path = configDir();
    await runProfile({ action: 'use', name: 'staging' }, withConfig(new FileConfigStore(path)));
    await runProfile(
      { action: 'remove', name: 'staging', yes: true },
      withConfig(new FileConfigStore(path)),
    );
    const file = JSON.parse(readFileSync(join(path, 'config.json'), 'utf8'));
    expect(file).not.toHaveProperty('defaultProfile');
  });
});
