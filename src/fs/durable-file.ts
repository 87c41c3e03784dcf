/**
 * Replacing a file that holds secrets (the config, the emulator's data file) so that, whatever
 * goes wrong, it holds either its old bytes or all of its new ones, and nothing else is left.
 *
 * Written by hand rather than with `atomically` (what Conf uses): that library ignores a short
 * write (`write` returning fewer bytes than asked, which is how a nearly full disk answers first)
 * and renames the truncated temp file over the real one. Here every byte is accounted for, the
 * temp file is fsynced, renamed, then the directory is fsynced, and any failure removes the temp
 * file and leaves the target alone. The target and the temp file are never followed as symlinks.
 */
import {
  close,
  constants,
  fchmod,
  fsync,
  lstat,
  open,
  readdir,
  rename,
  type Stats,
  unlink,
  write,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { errorCode } from '../platform/guards.js';
import { type Platform, runningPlatform } from '../platform/host.js';

/** The few file-system calls the writer makes, so tests can answer with short writes and errors. */
export interface DurableFs {
  open(path: string, flags: number, mode: number): Promise<number>;
  /** Writes at `position`; may write fewer bytes than asked, like write(2). */
  write(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ): Promise<number>;
  fchmod(fd: number, mode: number): Promise<void>;
  fsync(fd: number): Promise<void>;
  close(fd: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  lstat(path: string): Promise<Pick<Stats, 'isFile' | 'isSymbolicLink' | 'mtimeMs'>>;
  readdir(dir: string): Promise<string[]>;
}

const writeAsync = promisify(write);

export const nodeFs: DurableFs = {
  open: promisify(open) as DurableFs['open'],
  write: async (fd, buffer, offset, length, position) =>
    (await writeAsync(fd, buffer, offset, length, position)).bytesWritten,
  fchmod: promisify(fchmod),
  fsync: promisify(fsync),
  close: promisify(close),
  rename: promisify(rename),
  unlink: promisify(unlink),
  lstat: (path) => promisify(lstat)(path),
  readdir: (dir) => promisify(readdir)(dir),
};

/** Set on the error when a write made no progress at all: the disk took nothing more. */
export const SHORT_WRITE = 'ESHORTWRITE';

/** A path that must be a regular file (or absent) but is a symlink or something else. */
export class UnsafeFileError extends Error {
  constructor(
    readonly path: string,
    readonly kind: 'symlink' | 'not-regular',
  ) {
    super(
      kind === 'symlink'
        ? `${path} is a symbolic link, which ugs does not follow`
        : `${path} is not a regular file`,
    );
    this.name = 'UnsafeFileError';
  }
}

/**
 * Open flags for a file that must be a regular file itself: a symlink fails with ELOOP
 * (O_NOFOLLOW), and a FIFO planted under the name cannot block the open (O_NONBLOCK; it is then
 * refused after a stat). On a regular file O_NONBLOCK changes nothing.
 */
export const NO_FOLLOW = (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** NO_FOLLOW, for reading. */
export const READ_NO_FOLLOW = constants.O_RDONLY | NO_FOLLOW;

/**
 * Writes all of `data` at offset 0, looping over short writes. A write that makes no progress
 * ends the loop with an error rather than spinning.
 */
export async function writeAll(fs: DurableFs, fd: number, data: Uint8Array): Promise<void> {
  await writeFully(data, (offset, length) => fs.write(fd, data, offset, length, offset));
}

/**
 * Writes all of `data` through `writeSome(offset, length)`, which may write fewer bytes than asked
 * (as write(2) does); a write that makes no progress is an error (SHORT_WRITE), never a loop.
 * Shared by writes at an offset (`writeAll`) and appends (the bulk results file).
 */
export async function writeFully(
  data: Uint8Array,
  writeSome: (offset: number, length: number) => Promise<number>,
): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const written = await writeSome(done, data.length - done);
    if (!Number.isInteger(written) || written <= 0 || written > data.length - done) {
      throw Object.assign(
        new Error(`short write: the disk accepted ${done} of ${data.length} bytes`),
        { code: SHORT_WRITE },
      );
    }
    done += written;
  }
}

/** Throws UnsafeFileError unless `path` is missing or a regular file (a symlink is refused). */
export async function refuseUnsafe(path: string, fs: DurableFs = nodeFs): Promise<void> {
  let stats: Awaited<ReturnType<DurableFs['lstat']>>;
  try {
    stats = await fs.lstat(path);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (stats.isSymbolicLink()) throw new UnsafeFileError(path, 'symlink');
  if (!stats.isFile()) throw new UnsafeFileError(path, 'not-regular');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The temp name this module uses for `file`: `<name>.tmp-<pid>-<12 hex digits>`. */
export function tempPathFor(file: string): string {
  return join(dirname(file), `${basename(file)}.tmp-${process.pid}-${randomHex(6)}`);
}

/**
 * Whether `name` (in the directory of `file`) is a temp file of a write to `file`: ours, the one
 * `atomically` (Conf) used before, or the emulator's earlier `.<name>.<pid>.<hex>.tmp`. Nothing else.
 */
function isTempNameOf(file: string, name: string): boolean {
  const base = escapeRegExp(basename(file));
  return (
    new RegExp(`^${base}\\.tmp-\\d+-[0-9a-f]{12}$`).test(name) ||
    new RegExp(`^${base}\\.tmp-\\d{10}[a-f0-9]{6}$`).test(name) ||
    new RegExp(`^\\.${base}\\.\\d+\\.[0-9a-f]{12}\\.tmp$`).test(name)
  );
}

/**
 * Deletes temp files that an interrupted write of `file` left behind (they can hold tokens).
 * Only names of our own patterns, only in that directory, only regular files, and only those
 * older than `minAgeMs` (0 when the caller holds the file's lock, so no writer can be mid-way).
 * Best effort: a leftover that cannot be removed is no reason to refuse the write.
 */
export async function removeOrphanTempFiles(
  file: string,
  options: { fs?: DurableFs; minAgeMs?: number } = {},
): Promise<void> {
  const fs = options.fs ?? nodeFs;
  const dir = dirname(file);
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return;
  }
  for (const name of names.filter((n) => isTempNameOf(file, n))) {
    const path = join(dir, name);
    try {
      const stats = await fs.lstat(path);
      if (!stats.isFile() || stats.isSymbolicLink()) continue;
      if (Date.now() - stats.mtimeMs < (options.minAgeMs ?? 0)) continue;
      await fs.unlink(path);
    } catch {
      // Gone already, or not ours to remove: leave it.
    }
  }
}

async function removeQuietly(fs: DurableFs, path: string): Promise<void> {
  try {
    await fs.unlink(path);
  } catch {
    // Already gone.
  }
}

async function fsyncDirectory(fs: DurableFs, dir: string): Promise<void> {
  let fd: number;
  try {
    fd = await fs.open(dir, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0), 0);
  } catch (error) {
    // Some platforms (Windows) cannot open a directory; the rename is all they offer.
    if (['EISDIR', 'EPERM', 'EACCES'].includes(errorCode(error) ?? '')) return;
    throw error;
  }
  try {
    await fs.fsync(fd);
  } catch (error) {
    if (!['EINVAL', 'EPERM', 'EBADF', 'ENOTSUP'].includes(errorCode(error) ?? '')) throw error;
  } finally {
    await fs.close(fd).catch(() => undefined);
  }
}

/**
 * The waits between tries of a rename that Windows refused because another program has the file
 * open: an antivirus scanning the new file, the search indexer, OneDrive syncing the old one.
 * They let go within moments; about a second in all, then the error stands as before.
 */
export const RENAME_RETRY_DELAYS_MS: readonly number[] = [25, 50, 100, 175, 250, 400];

/** What Windows answers a rename over a file another program holds open. */
const BUSY_RENAME_CODES: ReadonlySet<string> = new Set(['EPERM', 'EBUSY', 'EACCES']);

export interface RenameRetryOptions {
  /** Only Windows refuses a rename for an open file; elsewhere these codes are final at once. */
  platform?: Platform;
  /** The wait between tries (tests pass a fake clock's). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * `fs.rename(from, to)`, tried again on Windows after a short wait when the answer is EPERM,
 * EBUSY or EACCES. Any other error, or the last try's, is thrown as it came.
 */
export async function renameRetrying(
  fs: Pick<DurableFs, 'rename'>,
  from: string,
  to: string,
  options: RenameRetryOptions = {},
): Promise<void> {
  const delays = (options.platform ?? runningPlatform()) === 'win32' ? RENAME_RETRY_DELAYS_MS : [];
  const sleep = options.sleep ?? ((ms: number) => delay(ms));
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.rename(from, to);
      return;
    } catch (error) {
      const wait = delays[attempt];
      if (wait === undefined || !BUSY_RENAME_CODES.has(errorCode(error) ?? '')) throw error;
      await sleep(wait);
    }
  }
}

export interface DurableWriteOptions extends RenameRetryOptions {
  /** Mode of the new file, set explicitly so the umask cannot widen or narrow it. */
  mode?: number;
  fs?: DurableFs;
  /**
   * Remove temp files that interrupted writes left (default). A caller that writes often and
   * cleans once when it takes the lock (the emulator) skips the directory scan on every write.
   */
  removeOrphans?: boolean;
}

/**
 * Replaces `file` with `data`. Call it while holding the file's lock: it also removes temp files
 * that earlier, interrupted writes left. On any error the file is untouched and no temp file is
 * left; a symlink or non-regular `file` is refused with UnsafeFileError before anything is written.
 */
export async function writeFileDurably(
  file: string,
  data: string | Uint8Array,
  options: DurableWriteOptions = {},
): Promise<void> {
  const fs = options.fs ?? nodeFs;
  const mode = options.mode ?? 0o600;
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  await refuseUnsafe(file, fs);
  if (options.removeOrphans ?? true) await removeOrphanTempFiles(file, { fs });
  const tmp = tempPathFor(file);
  const fd = await fs.open(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
    mode,
  );
  let open = true;
  try {
    await fs.fchmod(fd, mode);
    await writeAll(fs, fd, bytes);
    await fs.fsync(fd);
    open = false;
    await fs.close(fd);
    await renameRetrying(fs, tmp, file, options);
  } catch (error) {
    if (open) await fs.close(fd).catch(() => undefined);
    await removeQuietly(fs, tmp);
    throw error;
  }
  await fsyncDirectory(fs, dirname(file));
}

/**
 * Random hex for temp names and lock nonces. Web Crypto's global, not `node:crypto`: importing
 * that module costs every start of ugs a few milliseconds, and only a write needs randomness.
 */
export function randomHex(bytes: number): string {
  const buffer = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(buffer);
  return Buffer.from(buffer).toString('hex');
}
