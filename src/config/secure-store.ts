/**
 * The OS credential store (macOS Keychain, Windows Credential Manager, the Secret Service on
 * Linux) for `ugs login --secure-storage`, through `@napi-rs/keyring`.
 *
 * The native module is imported on the first call only, and only profiles whose token lives in
 * the store call: `--help`, `--version` and runs with the token in the environment or the config
 * file never load it. esbuild keeps it external (scripts/build.mjs): a `.node` binary cannot be
 * bundled, and npm installs the prebuilt one for the platform as an optional dependency.
 *
 * Every failure (no module, no D-Bus session, no Secret Service, a locked keyring) becomes a
 * `CredentialStoreError` whose message says why in one line; callers turn it into a ConfigError.
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { escapeControls } from '../platform/io.js';

export interface CredentialStore {
  /** What the store is called on this platform, for messages. */
  readonly name: string;
  /** The token saved for `account`, or undefined when the store holds none. */
  get(account: string): Promise<string | undefined>;
  set(account: string, secret: string): Promise<void>;
  /** True when a saved token was removed, false when there was none. */
  delete(account: string): Promise<boolean>;
}

/** The store could not be used; `reason` is one line, safe to print (it never holds a secret). */
export class CredentialStoreError extends Error {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(reason, options);
    this.name = 'CredentialStoreError';
  }
}

/** The service name under which every ugs token is saved. */
const CREDENTIAL_SERVICE = 'ugs';

/**
 * One entry per profile and config file: two config directories (UGS_CONFIG_DIR) with a profile
 * of the same name must not overwrite each other's token. The directory is named by its real path
 * (symlinks, `.`, `..` and a relative spelling resolved), so one directory is one entry however
 * it was spelt: a login through `~/cfg-link` and a logout through its target meet the same token.
 */
export function credentialAccount(profile: string, configPath: string): string {
  return `${profile} (${realConfigPath(configPath)})`;
}

/**
 * Every account a token of this profile may be under, the current one first: earlier versions of
 * ugs keyed on the path as spelt (made absolute), which differs when a symlink is on the way.
 * Reads fall back to it and logout removes both, so an upgrade neither loses nor strands a token.
 */
export function credentialAccounts(profile: string, configPath: string): string[] {
  const current = credentialAccount(profile, configPath);
  const spelt = `${profile} (${resolve(configPath)})`;
  return spelt === current ? [current] : [current, spelt];
}

/** The config file's path with its directory's real path; a directory not made yet, its nearest real ancestor. */
function realConfigPath(configPath: string): string {
  return join(realPath(dirname(configPath)), basename(configPath));
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? resolve(path) : join(realPath(parent), basename(path));
  }
}

function credentialStoreName(platform: NodeJS.Platform): string {
  if (platform === 'darwin') return 'macOS Keychain';
  if (platform === 'win32') return 'Windows Credential Manager';
  return 'Secret Service';
}

type Keyring = typeof import('@napi-rs/keyring');

export class OsCredentialStore implements CredentialStore {
  readonly name: string;
  private keyring: Promise<Keyring> | undefined;

  constructor(private readonly platform: NodeJS.Platform) {
    this.name = credentialStoreName(platform);
  }

  async get(account: string): Promise<string | undefined> {
    const entry = await this.entry(account);
    try {
      return (await entry.getPassword()) ?? undefined;
    } catch (error) {
      throw this.failure(error);
    }
  }

  async set(account: string, secret: string): Promise<void> {
    const entry = await this.entry(account);
    try {
      await entry.setPassword(secret);
    } catch (error) {
      throw this.failure(error);
    }
  }

  async delete(account: string): Promise<boolean> {
    const entry = await this.entry(account);
    try {
      return await entry.deleteCredential();
    } catch (error) {
      throw this.failure(error);
    }
  }

  private async entry(account: string): Promise<InstanceType<Keyring['AsyncEntry']>> {
    const keyring = await this.load();
    try {
      // Pinned to the Secret Service on Linux: by default the binding falls back to the kernel
      // keyring, which forgets the token at logout or reboot: a silent downgrade the user did
      // not ask for. The option is ignored on other platforms.
      return new keyring.AsyncEntry(CREDENTIAL_SERVICE, account, {
        linux: { store: 'secret-service' },
      });
    } catch (error) {
      throw this.failure(error);
    }
  }

  private load(): Promise<Keyring> {
    this.keyring ??= (async () => {
      try {
        const loaded = (await import('@napi-rs/keyring')) as Keyring & { default?: Keyring };
        // A CommonJS package imported from an ES module: its exports may sit on `default` only.
        return typeof loaded.AsyncEntry === 'function' ? loaded : (loaded.default ?? loaded);
      } catch (error) {
        throw new CredentialStoreError(
          `the credential store module (@napi-rs/keyring) could not be loaded: ${firstLine(error)}`,
          { cause: error },
        );
      }
    })();
    return this.keyring;
  }

  private failure(error: unknown): CredentialStoreError {
    if (error instanceof CredentialStoreError) return error;
    return new CredentialStoreError(describeKeyringError(error, this.platform), { cause: error });
  }
}

/**
 * keyring-rs messages nest the cause ("Platform failure: DBus error: ..."). The two usual headless
 * cases are said plainly: no session bus at all, or a bus without a Secret Service on it.
 */
export function describeKeyringError(error: unknown, platform: NodeJS.Platform): string {
  const text = firstLine(error);
  if (platform !== 'linux') return text;
  if (/org\.freedesktop\.secrets|ServiceUnknown|NameHasNoOwner/i.test(text)) {
    return `no Secret Service on the D-Bus session bus (${text})`;
  }
  if (/DBUS_SESSION_BUS_ADDRESS|autolaunch|Failed to connect to socket/i.test(text)) {
    return `no D-Bus session bus to reach the Secret Service (${text})`;
  }
  return text;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return escapeControls(message.split('\n')[0]?.trim() || 'unknown error');
}
