import type { Command } from 'commander';
import { type DepsFactory, newCommand } from '../cli/shared.js';
import { CredentialStoreError, credentialAccounts } from '../config/secure-store.js';
import { embedSecretAccount } from '../context/embed-secret.js';
import type { Deps } from '../context/factory.js';
import { ConfigError } from '../errors.js';
import { printLine } from '../output/messages.js';
import { loginCommandFor } from '../service/target.js';
import { message } from '../text/message.js';

export function logoutCommand(makeDeps: DepsFactory, run = runLogout): Command {
  return newCommand(
    'logout',
    "Remove a profile's saved API token and embed secret (its base URL is kept)",
    ['ugs logout', 'ugs logout --profile staging'],
  ).action(async (_flags: unknown, cmd: Command) => {
    await run(makeDeps(cmd));
  });
}

/**
 * Removes the token from wherever the profile keeps it: the config file, the OS credential store,
 * or both (a hand-edited file). A store that cannot be reached fails the logout and changes
 * nothing: dropping the file's pointer would leave the secret in the store, forgotten.
 */
export async function runLogout(deps: Deps): Promise<void> {
  const { io, settings, config } = deps;
  const profile = config.readProfile(settings.profile);
  const inFile = profile?.apiToken !== undefined;
  const inStore = profile?.tokenStore === 'keyring';
  if (!inFile && !inStore) {
    printLine(
      deps.output,
      message`Profile "${settings.profile}" has no saved API token; nothing to remove.`,
    );
  } else {
    if (inStore) await removeFromStore(deps, settings.profile);
    await config.updateProfile(settings.profile, (current) => {
      const { apiToken: _token, tokenStore: _store, ...rest } = current ?? {};
      return rest;
    });
    if (inFile) {
      printLine(
        deps.output,
        message`Removed the API token of profile "${settings.profile}" from ${config.path}`,
      );
    }
  }
  await removeEmbedSecret(deps, settings.profile);
  if (io.env.UGS_API_TOKEN) {
    printLine(deps.output, 'note: UGS_API_TOKEN is still set in this environment and will be used');
  }
}

/**
 * A profile's embed secret (`ugs login --embed-secret-stdin`, for `ugs jwt`) is a secret of the
 * profile as the API token is: logging out forgets it too, from the file or the credential store
 * (a store out of reach fails and changes nothing, as for the token), with its key id.
 */
export async function removeEmbedSecret(deps: Deps, profileName: string): Promise<void> {
  const { config, credentialStore: store } = deps;
  const profile = config.readProfile(profileName);
  if (profile?.embedSecret === undefined && profile?.embedSecretStore === undefined) return;
  if (profile.embedSecretStore === 'keyring') {
    try {
      await store.delete(embedSecretAccount(profileName, config.path));
    } catch (error) {
      if (!(error instanceof CredentialStoreError)) throw error;
      throw new ConfigError(
        message`cannot remove the embed secret of profile "${profileName}" from the ${store.name}: ${error.reason}; nothing else was changed`,
        {
          hint: `run \`${loginCommandFor(profileName, 'logout')}\` again where the credential store is reachable (the session you logged in from)`,
          cause: error,
        },
      );
    }
  }
  await config.updateProfile(profileName, (current) => {
    const {
      embedSecret: _secret,
      embedSecretStore: _store,
      embedKeyId: _kid,
      ...rest
    } = current ?? {};
    return rest;
  });
  printLine(
    deps.output,
    profile.embedSecretStore === 'keyring'
      ? message`Removed the embed secret of profile "${profileName}" from the ${store.name}`
      : message`Removed the embed secret of profile "${profileName}" from ${config.path}`,
  );
}

/**
 * Removes `profile`'s token from the OS credential store (under every account it may be kept),
 * saying so; `ugs profile remove` uses it too. A store out of reach changes nothing.
 */
export async function removeFromStore(deps: Deps, profile: string): Promise<void> {
  const { config, credentialStore: store } = deps;
  let removed = false;
  try {
    // Under the current account and an earlier version's (see credentialAccounts).
    for (const account of credentialAccounts(profile, config.path)) {
      if (await store.delete(account)) removed = true;
    }
  } catch (error) {
    if (!(error instanceof CredentialStoreError)) throw error;
    throw new ConfigError(
      message`cannot remove the API token of profile "${profile}" from the ${store.name}: ${error.reason}; nothing was changed`,
      {
        hint: `run \`${loginCommandFor(profile, 'logout')}\` again where the credential store is reachable (the session you logged in from)`,
        cause: error,
      },
    );
  }
  printLine(
    deps.output,
    removed
      ? message`Removed the API token of profile "${profile}" from the ${store.name}`
      : message`The ${store.name} held no API token for profile "${profile}"; removed the profile's reference to it`,
  );
}
