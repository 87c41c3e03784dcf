/**
 * The config file: `{"profiles": {"<name>": {"baseUrl": "...", "apiToken": "..."}}}`.
 *
 * Reads parse the file directly: they are most invocations, and loading Conf (and the JSON-schema
 * validator it pulls in) costs more than the request itself. Writes go through Conf, which writes
 * atomically with mode 0600, under a lock file so that two `ugs login` runs at the same moment
 * cannot lose each other's profile (Conf's `set` alone is read-modify-write without a lock).
 * A file that cannot be parsed is reported with its path and never rewritten.
 */
import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from './errors.js';
import type { Env } from './io.js';
import { setOwn } from './parse.js';

export interface Profile {
  baseUrl?: string;
  apiToken?: string;
  /** `ugs login --api-path`: the endpoint path when it is not `/api/user`. */
  apiPath?: string;
}

export interface ConfigStore {
  /** Absolute path of the config file, for messages. */
  readonly path: string;
  readProfile(name: string): Profile | undefined;
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
  [key: string]: unknown;
}

export class FileConfigStore implements ConfigStore {
  readonly path: string;
  private readonly lockPath: string;

  constructor(
    private readonly dir: string,
    private readonly lockTimeoutMs = 10_000,
  ) {
    this.path = join(dir, CONFIG_FILE_NAME);
    this.lockPath = `${this.path}.lock`;
  }

  readProfile(name: string): Profile | undefined {
    const profiles = this.readFile().profiles;
    return profiles && Object.hasOwn(profiles, name) ? profiles[name] : undefined;
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
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return {};
      throw new ConfigError(`cannot read config file ${this.path}: ${describeFsError(error)}`, {
        hint: 'check the file and its permissions, or point UGS_CONFIG_DIR at another directory',
        cause: error,
      });
    }
    return parseConfigFile(text, this.path);
  }

  private async write(data: ConfigFile): Promise<void> {
    try {
      const { Conf } = await import('./vendor/conf.js');
      const conf = new Conf<ConfigFile>({
        projectName: 'ugs',
        projectSuffix: '',
        cwd: this.dir,
        configName: 'config',
        configFileMode: 0o600,
      });
      conf.store = data;
    } catch (error) {
      throw writeError(this.path, error);
    }
  }

  /** The file holds API tokens: the directory is ours alone (Conf never tightens it). */
  private prepareDirectory(): void {
    try {
      makeDirectories(this.dir);
      if ((statSync(this.dir).mode & 0o077) !== 0) chmodSync(this.dir, 0o700);
    } catch (error) {
      throw writeError(this.dir, error);
    }
  }

  private async withLock<T>(work: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.lockTimeoutMs;
    for (;;) {
      try {
        const fd = openSync(this.lockPath, 'wx', 0o600);
        try {
          writeSync(fd, String(process.pid));
        } catch (error) {
          // A full disk: the lock is ours, and without the pid it would block others for 2 s.
          removeQuietly(this.lockPath);
          throw error;
        } finally {
          closeSync(fd);
        }
        break;
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw writeError(this.lockPath, error);
        if (this.lockIsStale()) {
          removeQuietly(this.lockPath);
          continue;
        }
        if (Date.now() > deadline) {
          throw new ConfigError(`config file ${this.path} is locked by another ugs process`, {
            hint: `if no other ugs is running, delete ${this.lockPath}`,
          });
        }
        await sleep(10 + Math.random() * 20);
      }
    }
    try {
      return await work();
    } finally {
      removeQuietly(this.lockPath);
    }
  }

  /** A lock whose process is gone, or an empty one left by a crash between create and write. */
  private lockIsStale(): boolean {
    try {
      const text = readFileSync(this.lockPath, 'utf8').trim();
      const pid = Number(text);
      if (text === '' || !Number.isInteger(pid) || pid <= 0) {
        return Date.now() - statSync(this.lockPath).mtimeMs > 2_000;
      }
      try {
        process.kill(pid, 0);
        return false;
      } catch (error) {
        return errorCode(error) === 'ESRCH';
      }
    } catch {
      // Gone between our open and this read: try again at once.
      return false;
    }
  }
}

export function parseConfigFile(text: string, path: string): ConfigFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw corrupt(
      path,
      `is not valid JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (!isPlainObject(data)) throw corrupt(path, 'must contain a JSON object');
  const profiles = data.profiles;
  if (profiles === undefined) return data;
  if (!isPlainObject(profiles)) throw corrupt(path, '"profiles" must be an object');
  for (const [name, profile] of Object.entries(profiles)) {
    if (!isPlainObject(profile)) throw corrupt(path, `profile "${name}" must be an object`);
    for (const key of ['baseUrl', 'apiToken', 'apiPath'] as const) {
      if (profile[key] !== undefined && typeof profile[key] !== 'string') {
        throw corrupt(path, `"${key}" of profile "${name}" must be a string`);
      }
    }
  }
  return data as ConfigFile;
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

function describeFsError(error: unknown): string {
  const code = errorCode(error);
  const known: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    ENOSPC: 'no space left on device',
    EISDIR: 'it is a directory',
    ENOTDIR: 'a parent is not a directory',
    EDQUOT: 'disk quota exceeded',
  };
  if (code && known[code]) return `${known[code]} (${code})`;
  return error instanceof Error ? error.message : String(error);
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string'
    ? error.code
    : undefined;
}

/**
 * `mkdir -p` with mode 0700. Not `mkdirSync(..., { recursive: true })`: on Linux that spins
 * forever where a parent exists but refuses children with ENOENT (anything under /proc).
 */
function makeDirectories(dir: string, retry = true): void {
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

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone: nothing to release.
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
