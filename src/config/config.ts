/**
 * The config file: `{"profiles": {"<name>": {"baseUrl": "...", "apiToken": "..."}}}`, and
 * `"defaultProfile": "<name>"` once `ugs profile use` has chosen one (a file without it, as every
 * earlier version wrote, uses the profile named `default`).
 *
 * Reads parse the file directly: they are most invocations, and loading Conf (and the JSON-schema
 * validator it pulls in) costs more than the request itself. Writes happen under a lock file
 * (src/fs/file-lock.ts) so that two `ugs login` runs at the same moment cannot lose each other's
 * profile. Conf still applies the defaults, validates the data against the schema and serialises
 * it, but the bytes reach the disk through src/fs/durable-file.ts, because Conf's own writer
 * (`atomically`) renames a short-written file over the config on a nearly full disk.
 * A file that cannot be parsed is reported with its path, line and column, and never rewritten.
 * `config.json` and its lock are never followed as symlinks, for reading or writing.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError } from '../errors.js';
import { READ_NO_FOLLOW, UnsafeFileError, writeFileDurably } from '../fs/durable-file.js';
import { FileLock, LockBusyError } from '../fs/file-lock.js';
import { commandWordFor, setOwn } from '../input/parse.js';
import { errorCode, isPlainObject } from '../platform/guards.js';
import {
  hasModeBits,
  insideUserProfile,
  type Platform,
  runningPlatform,
  shellOf,
} from '../platform/host.js';
import type { Env } from '../platform/io.js';
import { findJsonSyntaxError } from '../text/json-lexer.js';
import { message } from '../text/message.js';

export interface Profile {
  baseUrl?: string;
  apiToken?: string;
  /** `ugs login --api-path`: the endpoint path when it is not `/api/user`. */
  apiPath?: string;
  /** `ugs login --ca-file`: the absolute path of the CA certificate that verifies the service. */
  caFile?: string;
  /** `ugs login --secure-storage`: the API token is in the OS credential store, not in this file. */
  tokenStore?: 'keyring';
  /** `ugs login --dialect explo|customer`: the vendor's wire format; absent means `interface`. */
  dialect?: 'interface' | 'explo' | 'customer';
  /**
   * `ugs login --embed-secret-stdin`: the secret that encrypts embed JWTs (`ugs jwt`), kept as
   * the API token is: here (mode 0600), or with `--secure-storage` in the OS credential store
   * (`embedSecretStore`), never both.
   */
  embedSecret?: string;
  /** `ugs login --embed-key-id`: the key id the vendor gave the embed secret (the JWT's `kid`). */
  embedKeyId?: string;
  /** The embed secret is in the OS credential store, not in this file. */
  embedSecretStore?: 'keyring';
  /**
   * `ugs login --production`, `ugs profile protect`: every command that changes data asks first
   * (or needs `--yes` without a terminal), and the profile is never the default. Absent: false.
   */
  production?: boolean;
}

export interface ConfigStore {
  /** Absolute path of the config file, for messages. */
  readonly path: string;
  readProfile(name: string): Profile | undefined;
  /** Every saved profile, by name, in the file's order. */
  listProfiles(): Record<string, Profile>;
  /** The profile `ugs profile use` chose; undefined: `default`. */
  readDefaultProfile(): string | undefined;
  /**
   * `ugs profile use <name>`. `check` is given the profiles as they are under the lock, just
   * before the write, and throws to refuse: a check made before the lock could pass for a
   * profile that a `profile remove` running at the same moment is removing.
   */
  setDefaultProfile(
    name: string,
    check?: (profiles: Readonly<Record<string, Profile>>) => void,
  ): Promise<void>;
  /**
   * Removes a profile and, when it was the chosen default, that choice, in one write. Returns
   * whether it was the default.
   */
  removeProfile(name: string): Promise<{ wasDefault: boolean }>;
  /**
   * `ugs profile protect|unprotect`: marks a profile as production (or not) and, when it is
   * marked and was the chosen default, drops that choice, in one write: a production profile is
   * never used without being named. Returns whether it was the default.
   */
  protectProfile(name: string, production: boolean): Promise<{ wasDefault: boolean }>;
  /** Replaces one profile with what `change` returns (`undefined` removes it), atomically. */
  updateProfile(
    name: string,
    change: (current: Profile | undefined) => Profile | undefined,
  ): Promise<void>;
}

export const CONFIG_FILE_NAME = 'config.json';

/** Where the config lives: `$UGS_CONFIG_DIR`, else the OS config dir for `ugs` (as Conf computes it). */
export function configDir(env: Env, platform: NodeJS.Platform, homedir: string): string {
  if (env.UGS_CONFIG_DIR) return env.UGS_CONFIG_DIR;
  if (platform === 'darwin') return join(homedir, 'Library', 'Preferences', 'ugs');
  if (platform === 'win32')
    return join(env.APPDATA || join(homedir, 'AppData', 'Roaming'), 'ugs', 'Config');
  return join(env.XDG_CONFIG_HOME || join(homedir, '.config'), 'ugs');
}

interface ConfigFile {
  profiles?: Record<string, Profile>;
  defaultProfile?: string;
  [key: string]: unknown;
}

export interface FileConfigStoreOptions {
  /** How long a write waits for another ugs process to release the lock. */
  lockTimeoutMs?: number;
  /** Where a warning goes (stderr in the real CLI); the store has no other output. */
  warn?: (message: string) => void;
  /** The platform (file modes mean nothing on Windows) and the user's home, for that warning. */
  platform?: Platform;
  homedir?: string;
}

export class FileConfigStore implements ConfigStore {
  readonly path: string;
  private readonly lockTimeoutMs: number;
  private readonly warn: (message: string) => void;
  private readonly platform: Platform;
  private readonly homedir: string;
  private warned = false;

  constructor(
    private readonly dir: string,
    options: FileConfigStoreOptions = {},
  ) {
    this.path = join(dir, CONFIG_FILE_NAME);
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
    this.warn = options.warn ?? (() => {});
    this.platform = options.platform ?? runningPlatform();
    this.homedir = options.homedir ?? '';
  }

  readProfile(name: string): Profile | undefined {
    const profiles = this.readFile().profiles;
    return profiles && Object.hasOwn(profiles, name) ? profiles[name] : undefined;
  }

  listProfiles(): Record<string, Profile> {
    return { ...this.readFile().profiles };
  }

  readDefaultProfile(): string | undefined {
    return this.readFile().defaultProfile;
  }

  async setDefaultProfile(
    name: string,
    check?: (profiles: Readonly<Record<string, Profile>>) => void,
  ): Promise<void> {
    this.prepareDirectory();
    await this.withLock(async () => {
      // Read again under the lock: what was read before it may have changed since.
      const file = this.readFile();
      check?.({ ...file.profiles });
      await this.write({ ...file, defaultProfile: name });
    });
  }

  async removeProfile(name: string): Promise<{ wasDefault: boolean }> {
    this.prepareDirectory();
    return this.withLock(async () => {
      const { defaultProfile, ...file } = this.readFile();
      const profiles: Record<string, Profile> = { ...file.profiles };
      delete profiles[name];
      const wasDefault = defaultProfile === name;
      await this.write({
        ...file,
        profiles,
        ...(defaultProfile !== undefined && !wasDefault && { defaultProfile }),
      });
      return { wasDefault };
    });
  }

  async protectProfile(name: string, production: boolean): Promise<{ wasDefault: boolean }> {
    this.prepareDirectory();
    return this.withLock(async () => {
      const { defaultProfile, ...file } = this.readFile();
      const profiles: Record<string, Profile> = { ...file.profiles };
      const current = Object.hasOwn(profiles, name) ? profiles[name] : undefined;
      if (current === undefined) return { wasDefault: false };
      const { production: _old, ...rest } = current;
      setOwn(profiles, name, production ? { ...rest, production: true } : rest);
      const wasDefault = production && defaultProfile === name;
      await this.write({
        ...file,
        profiles,
        ...(defaultProfile !== undefined && !wasDefault && { defaultProfile }),
      });
      return { wasDefault };
    });
  }

  async updateProfile(
    name: string,
    change: (current: Profile | undefined) => Profile | undefined,
  ): Promise<void> {
    this.prepareDirectory();
    await this.withLock(async () => {
      const file = this.readFile();
      const profiles: Record<string, Profile> = { ...file.profiles };
      const next = change(Object.hasOwn(profiles, name) ? profiles[name] : undefined);
      if (next === undefined) delete profiles[name];
      else setOwn(profiles, name, next);
      await this.write({ ...file, profiles });
    });
  }

  private readFile(): ConfigFile {
    let text: string;
    try {
      text = readRegularFile(this.path);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return {};
      if (error instanceof UnsafeFileError) throw unsafeFileError(error, 'read');
      throw new ConfigError(`cannot read config file ${this.path}: ${describeFsError(error)}`, {
        hint: 'check the file and its permissions, or point UGS_CONFIG_DIR at another directory',
        cause: error,
      });
    }
    return parseConfigFile(text, this.path);
  }

  private async write(data: ConfigFile): Promise<void> {
    try {
      const text = await serialiseWithConf(this.dir, data);
      await writeFileDurably(this.path, text, { mode: 0o600 });
    } catch (error) {
      if (error instanceof UnsafeFileError) throw unsafeFileError(error, 'write');
      throw writeError(this.path, error);
    }
  }

  /**
   * Creates the directory 0700 when it is missing. An existing one keeps its mode: it may be a
   * shared or sticky directory the user chose (`/tmp`, a setgid project folder), and changing it
   * would break whoever else uses it. If others can write there, say so once.
   */
  private prepareDirectory(): void {
    let mode: number;
    try {
      makeDirectories(this.dir);
      mode = statSync(this.dir).mode;
    } catch (error) {
      throw writeError(this.dir, error);
    }
    if (this.warned) return;
    if (!hasModeBits(this.platform)) {
      // Windows: the mode is made up (every folder reads as 0777), so it cannot be judged. In the
      // user's profile the folder's ACL lets only the user in; elsewhere it is inherited.
      if (insideUserProfile(this.dir, this.platform, this.homedir)) return;
      this.warned = true;
      this.warn(inheritedPermissionsWarning('config directory', this.dir, this.platform));
      return;
    }
    if ((mode & 0o022) !== 0) {
      this.warned = true;
      this.warn(
        message`warning: config directory ${this.dir} is writable by ${
          (mode & 0o002) !== 0 ? 'others' : 'its group'
        }; ugs keeps ${CONFIG_FILE_NAME} 0600 and never follows links there, but a private directory (chmod 700) is safer`,
      );
    }
  }

  private async withLock<T>(work: () => Promise<T>): Promise<T> {
    let lock: FileLock;
    try {
      lock = await FileLock.acquire(this.path, { waitMs: this.lockTimeoutMs });
    } catch (error) {
      if (error instanceof LockBusyError) {
        const who =
          error.owner.pid === process.pid
            ? 'another update in this same ugs process'
            : error.owner.pid > 0
              ? `another ugs process (pid ${error.owner.pid})`
              : 'another ugs process (its lock is still being written)';
        throw new ConfigError(`config file ${this.path} is locked by ${who}`, {
          hint: `if no other ugs is running, delete ${error.lockPath}`,
        });
      }
      if (error instanceof UnsafeFileError) throw unsafeFileError(error, 'write');
      throw writeError(`${this.path}.lock`, error);
    }
    try {
      return await work();
    } finally {
      await lock.release().catch(() => undefined);
    }
  }
}

/**
 * The warning for a file ugs keeps secrets in, made on Windows outside the user's profile: it
 * takes the ACL of its folder, which ugs does not change (an ACL written by ugs could also lock
 * out the administrators or backup tools the folder was set up for).
 */
export function inheritedPermissionsWarning(what: string, path: string, on: Platform): string {
  const word = commandWordFor(on);
  const check = shellOf(on) === 'powershell' ? `icacls ${word(path)}` : `ls -ld ${word(path)}`;
  return message`warning: ${what} ${path} is outside your user profile: files ugs writes there take that folder's permissions, which may let other users read them (ugs cannot make them private); check them with \`${check}\`, or keep it under your profile`;
}

/**
 * What Conf is told about the config file, its schema above all. Only writes go through Conf;
 * reads (parseConfigFile) check the same rules without loading it and its validator (ajv), and
 * test/config/files.process.test.ts checks that both accept and refuse the same files.
 */
export function confOptions(dir: string) {
  return {
    projectName: 'ugs',
    projectSuffix: '',
    cwd: dir,
    configName: 'config',
    configFileMode: 0o600,
    // The schema below is ours and fixed: checking it against JSON Schema's meta-schema on every
    // Conf made (what Ajv does by default) was 30 of the 35 ms each one cost, in every login and
    // logout. The files it validates are checked as before.
    ajvOptions: { validateSchema: false },
    defaults: { profiles: {} },
    schema: {
      // Added by `ugs profile use`; a file without it (every earlier one) still validates.
      defaultProfile: { type: 'string' },
      profiles: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          properties: {
            baseUrl: { type: 'string' },
            apiToken: { type: 'string' },
            apiPath: { type: 'string' },
            caFile: { type: 'string' },
            tokenStore: { enum: ['keyring'] },
            dialect: { enum: ['interface', 'explo', 'customer'] },
            embedSecret: { type: 'string' },
            embedKeyId: { type: 'string' },
            embedSecretStore: { enum: ['keyring'] },
            // Added by `ugs login --production` / `ugs profile protect`; older files lack it.
            production: { type: 'boolean' },
          },
        },
      },
    },
  } as const;
}

/**
 * Conf's part of a write: defaults, schema validation and serialisation. Its `_write` (bytes to
 * disk through `atomically`) and `_ensureDirectory` (mkdir with a loose mode) are replaced, so
 * the text comes back here and writeFileDurably puts it on disk.
 */
async function serialiseWithConf(dir: string, data: ConfigFile): Promise<string> {
  const { Conf } = await import('../vendor/conf.js');
  let captured: string | undefined;
  class SchemaOnlyConf extends Conf<ConfigFile> {}
  const hooks = SchemaOnlyConf.prototype as unknown as {
    _write(this: { _serialize(value: unknown): string }, value: unknown): void;
    _ensureDirectory(): void;
  };
  hooks._write = function (value) {
    captured = this._serialize(value);
  };
  hooks._ensureDirectory = () => {};
  const conf = new SchemaOnlyConf(confOptions(dir));
  captured = undefined;
  conf.store = data;
  if (captured === undefined) throw new Error('Conf did not serialise the config');
  return captured;
}

/** Reads `path` only if it is a regular file itself: a symlink (O_NOFOLLOW) or a FIFO is refused. */
function readRegularFile(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, READ_NO_FOLLOW);
  } catch (error) {
    if (errorCode(error) === 'ELOOP') throw new UnsafeFileError(path, 'symlink');
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (stats.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    if (!stats.isFile()) throw new UnsafeFileError(path, 'not-regular');
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

function unsafeFileError(error: UnsafeFileError, doing: 'read' | 'write'): ConfigError {
  const what =
    error.kind === 'symlink'
      ? 'it is a symbolic link, and ugs never reads or writes its config through a link'
      : 'it is not a regular file';
  const verb = doing === 'read' ? 'cannot read config file' : 'cannot write config';
  return new ConfigError(message`${verb} ${error.path}: ${what}`, {
    hint: 'remove it (check who made it: a link there can be an attempt to catch your token) and run the command again',
  });
}

function parseConfigFile(text: string, path: string): ConfigFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text around the error, which may be part of a token and
    // may hold raw control characters: report where, never what.
    const { offset, reason } = findJsonSyntaxError(text);
    const { line, column } = lineAndColumn(text, offset);
    throw corrupt(path, `is not valid JSON: ${reason} at line ${line}, column ${column}`);
  }
  if (!isPlainObject(data)) throw corrupt(path, 'must contain a JSON object');
  if (data.defaultProfile !== undefined && typeof data.defaultProfile !== 'string') {
    throw corrupt(path, '"defaultProfile" must be a string');
  }
  const profiles = data.profiles;
  if (profiles === undefined) return data;
  if (!isPlainObject(profiles)) throw corrupt(path, '"profiles" must be an object');
  for (const [name, profile] of Object.entries(profiles)) {
    if (!isPlainObject(profile)) throw corrupt(path, message`profile "${name}" must be an object`);
    for (const key of [
      'baseUrl',
      'apiToken',
      'apiPath',
      'caFile',
      'embedSecret',
      'embedKeyId',
    ] as const) {
      if (profile[key] !== undefined && typeof profile[key] !== 'string') {
        throw corrupt(path, message`"${key}" of profile "${name}" must be a string`);
      }
    }
    if (profile.tokenStore !== undefined && profile.tokenStore !== 'keyring') {
      throw corrupt(path, message`"tokenStore" of profile "${name}" must be "keyring"`);
    }
    if (profile.embedSecretStore !== undefined && profile.embedSecretStore !== 'keyring') {
      throw corrupt(path, message`"embedSecretStore" of profile "${name}" must be "keyring"`);
    }
    if (profile.production !== undefined && typeof profile.production !== 'boolean') {
      throw corrupt(path, message`"production" of profile "${name}" must be true or false`);
    }
    if (
      profile.dialect !== undefined &&
      profile.dialect !== 'interface' &&
      profile.dialect !== 'explo' &&
      profile.dialect !== 'customer'
    ) {
      throw corrupt(
        path,
        message`"dialect" of profile "${name}" must be "interface", "explo" or "customer"`,
      );
    }
  }
  return data as ConfigFile;
}

/** 1-based line and column (in UTF-16 code units) of `offset`. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++;
    lineStart = at + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

function corrupt(path: string, what: string): ConfigError {
  return new ConfigError(`config file ${path} ${what}`, {
    hint: 'fix the file by hand or delete it and run `ugs login` again; ugs will not overwrite it',
  });
}

function writeError(path: string, error: unknown): ConfigError {
  if (error instanceof ConfigError) return error;
  return new ConfigError(`cannot write config ${path}: ${describeFsError(error)}`, {
    hint: 'check that the directory is writable and the disk is not full, or set UGS_CONFIG_DIR',
    cause: error,
  });
}

export function describeFsError(error: unknown): string {
  const code = errorCode(error);
  const known: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    ENOSPC: 'no space left on device',
    ELOOP: 'it is a symbolic link, which ugs does not follow',
    EISDIR: 'it is a directory',
    ENOENT: 'its directory does not exist',
    ENOTDIR: 'a parent is not a directory',
    EDQUOT: 'disk quota exceeded',
  };
  if (code && known[code]) return `${known[code]} (${code})`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * `mkdir -p` with mode 0700. Not `mkdirSync(..., { recursive: true })`: on Linux that spins
 * forever where a parent exists but refuses children with ENOENT (anything under /proc).
 */
export function makeDirectories(dir: string, retry = true): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EEXIST') return; // also when another ugs made it a moment ago
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir || !retry) throw error;
    makeDirectories(parent);
    makeDirectories(dir, false); // a second ENOENT is final
  }
}
