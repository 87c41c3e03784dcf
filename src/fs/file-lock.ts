/**
 * An exclusive lock next to a file (`<file>.lock`), shared by the config file and the emulator's
 * data file.
 *
 * The lock file holds three lines: the owner's pid, a random nonce the owner keeps in memory, and
 * the owner's start time (field 22 of /proc/<pid>/stat, where there is a /proc). A pid alone is
 * not enough: after a container restart `ugs` is pid 1 again, and a lock left by the previous
 * pid 1 would name a live process forever. So a lock is held only while a process with that pid
 * AND that start time runs; a lock naming this very process is held only if this process still
 * has its nonce. Locks written without a start time (older versions, other tools) count as held
 * only while their pid runs a `ugs` process, where /proc can tell.
 *
 * The lock is created complete under a temp name and hard-linked into place (fails if it exists,
 * like O_EXCL, but nobody ever sees a half-written lock). Taking over a stale lock is serialised
 * by a second lock, `<file>.lock.break`: only its holder may delete the stale lock, and only after
 * re-reading it and finding exactly the content it judged stale; so of two processes that both
 * judge the same lock stale, only one removes it and the other then sees the new live lock.
 */
import { constants, promises as fsp, readFileSync } from 'node:fs';
import { platform } from 'node:os';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorCode } from '../platform/guards.js';
import {
  nodeFs,
  READ_NO_FOLLOW,
  randomHex,
  refuseUnsafe,
  removeOrphanTempFiles,
  tempPathFor,
  writeAll,
} from './durable-file.js';

export interface LockOwner {
  pid: number;
  nonce?: string;
  startTime?: string;
}

/** The lock is held by a live process (maybe this one, through another FileLock). */
export class LockBusyError extends Error {
  constructor(
    readonly lockPath: string,
    readonly owner: LockOwner,
  ) {
    super(
      owner.pid === process.pid
        ? `${lockPath} is held by this process`
        : `${lockPath} is held by process ${owner.pid}`,
    );
    this.name = 'LockBusyError';
  }
}

/** Nonces of the locks this process holds now. */
const heldNonces = new Set<string>();

/** A lock whose content does not parse is given this long to be completed before it counts as stale. */
const UNREADABLE_GRACE_MS = 2_000;
/** A takeover holds the break lock for a few file operations; one older than this was abandoned. */
const BREAK_GRACE_MS = 5_000;

export interface AcquireOptions {
  /** How long to wait for a live owner to let go; 0 fails at once with LockBusyError. */
  waitMs?: number;
}

export class FileLock {
  private released = false;

  private constructor(
    readonly lockPath: string,
    private readonly content: string,
    private readonly nonce: string,
  ) {}

  /** Locks `file` (the lock is `<file>.lock`). Errors: LockBusyError, UnsafeFileError, fs errors. */
  static async acquire(file: string, options: AcquireOptions = {}): Promise<FileLock> {
    const lockPath = `${file}.lock`;
    const nonce = randomHex(8);
    const content = `${process.pid}\n${nonce}\n${processStartTime(process.pid) ?? ''}\n`;
    const deadline = Date.now() + (options.waitMs ?? 0);
    // Temp files of a lock (or of a takeover) whose writer was killed before linking them; the
    // age guard keeps us off one that another process is about to link.
    await removeOrphanTempFiles(lockPath, { minAgeMs: 60_000 });
    await removeOrphanTempFiles(`${lockPath}.break`, { minAgeMs: 60_000 });
    const tmp = await writeTemp(lockPath, content);
    // Known as ours before the link: another acquirer in this process may read the new lock
    // before our link's continuation runs, and must not judge it a dead predecessor's.
    heldNonces.add(nonce);
    let acquired = false;
    try {
      for (;;) {
        await refuseUnsafe(lockPath);
        if (await linkExclusive(tmp, lockPath)) {
          acquired = true;
          return new FileLock(lockPath, content, nonce);
        }
        const held = await readLock(lockPath);
        if (held === undefined) continue; // released between our link and our read
        const owner = parseLock(held.content);
        const stale =
          owner === undefined ? Date.now() - held.mtimeMs > UNREADABLE_GRACE_MS : !isHeld(owner);
        if (stale) {
          await breakStaleLock(lockPath, held.content);
          continue;
        }
        if (Date.now() >= deadline) {
          throw new LockBusyError(lockPath, owner ?? { pid: 0 });
        }
        await sleep(10 + Math.random() * 20);
      }
    } finally {
      if (!acquired) heldNonces.delete(nonce);
      await fsp.rm(tmp, { force: true }).catch(() => undefined);
    }
  }

  /** Removes the lock if it is still ours (it is, unless someone wrongly judged it stale). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    try {
      const held = await readLock(this.lockPath).catch(() => undefined);
      if (held?.content === this.content) await fsp.rm(this.lockPath, { force: true });
    } finally {
      // Only now: until the file is gone, it must still read as held by this process.
      heldNonces.delete(this.nonce);
    }
  }
}

/** Whether the process named in a lock is the one that wrote it and still runs. */
export function isHeld(owner: LockOwner): boolean {
  if (owner.pid === process.pid) {
    // Our pid: either one of our own live locks, or a previous process that had our pid.
    return owner.nonce !== undefined && heldNonces.has(owner.nonce);
  }
  if (!pidExists(owner.pid)) return false;
  if (owner.startTime !== undefined) {
    const now = processStartTime(owner.pid);
    // No /proc to ask: the pid is all there is to go on.
    return now === undefined || now === owner.startTime;
  }
  const args = processArguments(owner.pid);
  // A word of argv that is ugs itself (`ugs`, `.../bin/ugs.js`), not any path that happens to
  // contain the letters (`/home/bugs/...`, a Node installed under a folder named after ugs).
  return args === undefined || args.some((arg) => /^ugs(\.c?js|\.exe)?$/i.test(basename(arg)));
}

/** Parses `pid\nnonce\nstart\n`; older locks have only the pid, or pid and nonce. */
export function parseLock(content: string): LockOwner | undefined {
  const [pidLine = '', nonce = '', startTime = ''] = content.split('\n').map((l) => l.trim());
  if (!/^\d+$/.test(pidLine)) return undefined;
  const pid = Number(pidLine);
  // 0 and negative pids mean process groups to kill(); never probe those.
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return {
    pid,
    ...(nonce !== '' && { nonce }),
    ...(/^\d+$/.test(startTime) && { startTime }),
  };
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return errorCode(error) === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or undefined. */
export function processStartTime(pid: number): string | undefined {
  if (platform() !== 'linux') return undefined;
  try {
    const stat = readSmallFileSync(`/proc/${pid}/stat`);
    // The command name (field 2) is in parentheses and may itself contain spaces or ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = fields[19];
    return start !== undefined && /^\d+$/.test(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

function processArguments(pid: number): string[] | undefined {
  if (platform() !== 'linux') return undefined;
  try {
    return readSmallFileSync(`/proc/${pid}/cmdline`)
      .split('\0')
      .filter((arg) => arg !== '');
  } catch {
    return undefined;
  }
}

function readSmallFileSync(path: string): string {
  // Synchronous on purpose: /proc files are generated in memory, and this keeps isHeld simple.
  return readFileSync(path, 'utf8');
}

async function writeTemp(lockPath: string, content: string): Promise<string> {
  const tmp = tempPathFor(lockPath);
  const handle = await fsp.open(tmp, 'wx', 0o600);
  try {
    await writeAll(nodeFs, handle.fd, Buffer.from(content, 'utf8'));
    await handle.close();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true });
    throw error;
  }
  return tmp;
}

async function linkExclusive(tmp: string, lockPath: string): Promise<boolean> {
  try {
    await fsp.link(tmp, lockPath);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error;
  }
  // File systems without hard links: O_EXCL, then the content straight after.
  try {
    await fsp.copyFile(tmp, lockPath, constants.COPYFILE_EXCL);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
}

async function readLock(
  lockPath: string,
): Promise<{ content: string; mtimeMs: number } | undefined> {
  await refuseUnsafe(lockPath);
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(lockPath, READ_NO_FOLLOW);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stats = await handle.stat();
    const content = (await handle.readFile('utf8')).slice(0, 4096);
    return { content, mtimeMs: stats.mtimeMs };
  } finally {
    await handle.close();
  }
}

/**
 * Deletes the lock at `lockPath` if it still holds exactly `observed`, under the break lock so
 * that no two processes do this at once (see the module comment).
 */
export async function breakStaleLock(lockPath: string, observed: string): Promise<void> {
  const breakPath = `${lockPath}.break`;
  const content = `${process.pid}\n${randomHex(8)}\n${processStartTime(process.pid) ?? ''}\n`;
  const tmp = await writeTemp(breakPath, content);
  try {
    if (!(await linkExclusive(tmp, breakPath))) {
      // Someone else is taking over; if they died doing it, clear their break lock.
      const other = await readLock(breakPath);
      if (other !== undefined) {
        const owner = parseLock(other.content);
        const abandoned =
          Date.now() - other.mtimeMs > BREAK_GRACE_MS || owner === undefined || !isHeldBreak(owner);
        if (abandoned) await removeIfUnchanged(breakPath, other.content);
      }
      await sleep(5 + Math.random() * 10);
      return;
    }
    try {
      const now = await readLock(lockPath);
      if (now?.content === observed) await fsp.rm(lockPath, { force: true });
    } finally {
      await removeIfUnchanged(breakPath, content);
    }
  } finally {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
  }
}

/** A break lock is never held across an await by a living owner for long; only its pid matters. */
function isHeldBreak(owner: LockOwner): boolean {
  if (owner.pid === process.pid) return true;
  return isHeld({
    pid: owner.pid,
    ...(owner.startTime !== undefined && { startTime: owner.startTime }),
  });
}

async function removeIfUnchanged(path: string, content: string): Promise<void> {
  const now = await readLock(path).catch(() => undefined);
  if (now?.content === content) await fsp.rm(path, { force: true });
}
