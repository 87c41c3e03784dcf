import { describe, expect, it } from 'vitest';
import { runProfile } from '../../src/commands/profile.js';
import { credentialAccount } from '../../src/config/secure-store.js';
import { CancelledError } from '../../src/errors.js';
import { MemoryCredentialStore, makeDeps, rejection, terminalIO } from '../kit/fakes.js';

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
