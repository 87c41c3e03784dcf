/**
 * An exclusive lock next to a file (`<file>.lock`), shared by the config file, the history, a bulk
 * run's `--output` and the emulator's data file.
 *
 * The lock file holds four lines: the owner's pid, a random nonce the owner keeps in memory, the
 * owner's start time (field 22 of /proc/<pid>/stat, where there is a /proc) and the owner's host
 * name. While held, the owner refreshes the file's mtime every few seconds (its heartbeat). A
 * lock is stale, and taken over, when:
 * - it names another host (a shared folder): only once its heartbeat is old, since that host's
 *   processes cannot be asked about;
 * - it names this host: when its pid is not running; where /proc tells a pid's start time
 *   (Linux), when that pid now belongs to another process (after a container restart `ugs` is
 *   pid 1 again); where nothing tells (macOS, Windows, or a lock without a start time), once its
 *   heartbeat is old, as a crashed run's pid may by then be another program's;
 * - it names this very process: unless this process still has its nonce.
 * Locks of earlier versions (no host line) count as this host's.
 *
 * The lock is created complete under a temp name and hard-linked into place (fails if it exists,
 * like O_EXCL, but nobody ever sees a half-written lock). Taking over a stale lock is serialised
 * by a second lock, `<file>.lock.break`: only its holder may delete the stale lock, and only after
 * re-reading it and finding exactly the content it judged stale; so of two processes that both
 * judge the same lock stale, only one removes it and the other then sees the new live lock.
 */
import { constants, promises as fsp, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorCode } from '../platform/guards.js';
import { type Platform, runningHostname, runningPlatform } from '../platform/host.js';
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
  /** The host the owner runs on; absent in locks of earlier versions (this host's). */
  host?: string;
}

/** How often a holder refreshes its lock's mtime. */
export const HEARTBEAT_MS = 5_000;
/** A lock of this host that nothing else proves alive is stale once its heartbeat is this old. */
export const STALE_AFTER_MS = 30_000;
/**
 * The same for another host's lock: longer, as hosts' clocks differ and a network file system
 * may show a file's mtime a minute late.
 */
export const OTHER_HOST_STALE_AFTER_MS = 120_000;

/** The machine, clock and processes as a lock sees them; tests give fakes. */
export interface LockHost {
  hostname: string;
  /** Only Linux has the /proc that tells a pid's start time. */
  platform: Platform;
  now(): number;
  /** Runs `beat` every `ms` until the returned function is called; never keeps the process alive. */
  every(ms: number, beat: () => Promise<void>): () => void;
  pidExists(pid: number): boolean;
}

function lockHost(given: Partial<LockHost> = {}): LockHost {
  return {
    hostname: runningHostname(),
    platform: runningPlatform(),
    now: () => Date.now(),
    every: (ms, beat) => {
      const timer = setInterval(() => void beat(), ms);
      timer.unref();
      return () => clearInterval(timer);
    },
    pidExists,
    ...given,
  };
}

/** The lock is held by a live process (maybe this one, through another FileLock). */
export class LockBusyError extends Error {
  constructor(
    readonly lockPath: string,
    readonly owner: LockOwner,
  ) {
    const elsewhere = owner.host !== undefined && owner.host !== runningHostname();
    super(
      owner.pid === process.pid && !elsewhere
        ? `${lockPath} is held by this process`
        : `${lockPath} is held by process ${owner.pid}${elsewhere ? ` on ${owner.host}` : ''}`,
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
  /** The host, clock and processes (tests give fakes); the real ones otherwise. */
  host?: Partial<LockHost>;
}

export class FileLock {
  private released = false;
  private readonly stopHeartbeat: () => void;

  private constructor(
    readonly lockPath: string,
    private readonly content: string,
    private readonly nonce: string,
    private readonly host: LockHost,
  ) {
    this.stopHeartbeat = host.every(HEARTBEAT_MS, () => this.beat());
  }

  /**
   * Refreshes the lock's mtime, if the lock is still this one: a crashed holder's lock then
   * ages, and the next run takes it over where the pid alone cannot tell (see the module comment).
   */
  private async beat(): Promise<void> {
    if (this.released) return;
    try {
      const held = await readLock(this.lockPath);
      if (held?.content !== this.content) return;
      const seconds = this.host.now() / 1000;
      await fsp.utimes(this.lockPath, seconds, seconds);
    } catch {
      // The next beat tries again; a lock that ages meanwhile has a generous margin.
    }
  }

  /** Locks `file` (the lock is `<file>.lock`). Errors: LockBusyError, UnsafeFileError, fs errors. */
  static async acquire(file: string, options: AcquireOptions = {}): Promise<FileLock> {
    const host = lockHost(options.host);
    const lockPath = `${file}.lock`;
    const nonce = randomHex(8);
    const content = ownerLines(nonce, host);
    const deadline = host.now() + (options.waitMs ?? 0);
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
          return new FileLock(lockPath, content, nonce, host);
        }
        const held = await readLock(lockPath);
        if (held === undefined) continue; // released between our link and our read
        const owner = parseLock(held.content);
        const age = host.now() - held.mtimeMs;
        const stale =
          owner === undefined
            ? age > UNREADABLE_GRACE_MS
            : !isHeld(owner, { heartbeatAgeMs: age, host });
        if (stale) {
          await breakStaleLock(lockPath, held.content, host);
          continue;
        }
        if (host.now() >= deadline) {
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
    this.stopHeartbeat();
    try {
      const held = await readLock(this.lockPath).catch(() => undefined);
      if (held?.content === this.content) await fsp.rm(this.lockPath, { force: true });
    } finally {
      // Only now: until the file is gone, it must still read as held by this process.
      heldNonces.delete(this.nonce);
    }
  }
}

/** The lines of a lock owned by this process: pid, nonce, start time, host. */
function ownerLines(nonce: string, host: LockHost): string {
  const start = processStartTime(process.pid, host.platform) ?? '';
  return `${process.pid}\n${nonce}\n${start}\n${host.hostname}\n`;
}

export interface HeldOptions {
  /** How long ago the lock's mtime was refreshed; unknown counts as just now. */
  heartbeatAgeMs?: number;
  host?: Partial<LockHost>;
}

/** Whether the owner named in a lock still holds it (see the module comment). */
export function isHeld(owner: LockOwner, options: HeldOptions = {}): boolean {
  const host = lockHost(options.host);
  const age = options.heartbeatAgeMs;
  const beating = (limit: number) => age === undefined || age <= limit;
  if (owner.host !== undefined && owner.host !== host.hostname) {
    // A pid of another machine means nothing here: only its heartbeat says it lives.
    return beating(OTHER_HOST_STALE_AFTER_MS);
  }
  if (owner.pid === process.pid) {
    // Our pid: either one of our own live locks, or a previous process that had our pid.
    return owner.nonce !== undefined && heldNonces.has(owner.nonce);
  }
  if (!host.pidExists(owner.pid)) return false;
  if (owner.startTime !== undefined) {
    const now = processStartTime(owner.pid, host.platform);
    if (now !== undefined) return now === owner.startTime;
  } else {
    const args = processArguments(owner.pid, host.platform);
    // A word of argv that is ugs itself (`ugs`, `.../bin/ugs.js`), not any path that happens to
    // contain the letters (`/home/bugs/...`, a Node installed under a folder named after ugs).
    if (args !== undefined) return args.some((arg) => /^ugs(\.c?js|\.exe)?$/i.test(basename(arg)));
  }
  // Nothing tells whether the pid is still the owner's (macOS, Windows): a crashed run's pid may
  // be another program's by now, so the heartbeat decides.
  return beating(STALE_AFTER_MS);
}

/** Parses `pid\nnonce\nstart\nhost\n`; older locks have only the first one to three lines. */
export function parseLock(content: string): LockOwner | undefined {
  const [pidLine = '', nonce = '', startTime = '', host = ''] = content
    .split('\n')
    .map((l) => l.trim());
  if (!/^\d+$/.test(pidLine)) return undefined;
  const pid = Number(pidLine);
  // 0 and negative pids mean process groups to kill(); never probe those.
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return {
    pid,
    ...(nonce !== '' && { nonce }),
    ...(/^\d+$/.test(startTime) && { startTime }),
    ...(host !== '' && { host }),
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
export function processStartTime(
  pid: number,
  on: Platform = runningPlatform(),
): string | undefined {
  if (on !== 'linux') return undefined;
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

function processArguments(pid: number, on: Platform): string[] | undefined {
  if (on !== 'linux') return undefined;
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
export async function breakStaleLock(
  lockPath: string,
  observed: string,
  host: LockHost = lockHost(),
): Promise<void> {
  const breakPath = `${lockPath}.break`;
  const content = ownerLines(randomHex(8), host);
  const tmp = await writeTemp(breakPath, content);
  try {
    if (!(await linkExclusive(tmp, breakPath))) {
      // Someone else is taking over; if they died doing it, clear their break lock.
      const other = await readLock(breakPath);
      if (other !== undefined) {
        const owner = parseLock(other.content);
        const abandoned =
          host.now() - other.mtimeMs > BREAK_GRACE_MS ||
          owner === undefined ||
          !isHeldBreak(owner, host);
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

/**
 * A break lock is never held across an await by a living owner for long (BREAK_GRACE_MS ends
 * any); here only its pid, start time and host matter.
 */
function isHeldBreak(owner: LockOwner, host: LockHost): boolean {
  if (owner.pid === process.pid && (owner.host ?? host.hostname) === host.hostname) return true;
  return isHeld(
    {
      pid: owner.pid,
      ...(owner.startTime !== undefined && { startTime: owner.startTime }),
      ...(owner.host !== undefined && { host: owner.host }),
    },
    { host },
  );
}

async function removeIfUnchanged(path: string, content: string): Promise<void> {
  const now = await readLock(path).catch(() => undefined);
  if (now?.content === content) await fsp.rm(path, { force: true });
}
