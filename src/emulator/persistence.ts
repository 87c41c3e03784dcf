import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { EmulatorStartError } from './errors.js';
import { CorruptStateError, Store } from './store.js';

function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') {
    return err.code;
  }
  return undefined;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function uniqueSuffix(): string {
  return `${process.pid}.${randomBytes(6).toString('hex')}`;
}

/** Loads the store; a missing file is an empty store, an unreadable or invalid one is fatal. */
export async function loadStore(file: string): Promise<Store> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return new Store();
    throw new EmulatorStartError(`cannot read data file ${file}: ${errorMessage(err)}`);
  }
  // The file is never rewritten on these paths: it may hold the only copy of someone's tokens.
  const corrupt = (why: string) =>
    new EmulatorStartError(
      `data file ${file} is corrupt (${why}); it was left untouched: repair it, move it away, or use another data file`,
    );
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw corrupt(`not valid JSON: ${errorMessage(err)}`);
  }
  try {
    return Store.fromJSON(data);
  } catch (err) {
    if (err instanceof CorruptStateError) throw corrupt(err.message);
    throw err;
  }
}

async function fsyncDirectory(dir: string): Promise<void> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(dir, 'r');
  } catch (err) {
    // Some platforms (Windows) cannot open a directory; the rename is all they offer.
    if (['EISDIR', 'EPERM', 'EACCES'].includes(errorCode(err) ?? '')) return;
    throw err;
  }
  try {
    await handle.sync();
  } catch (err) {
    if (!['EINVAL', 'EPERM', 'EBADF'].includes(errorCode(err) ?? '')) throw err;
  } finally {
    await handle.close();
  }
}

/** Whether `name` is a temporary file of writeFileAtomic for `file`. */
function isTempFileOf(file: string, name: string): boolean {
  const prefix = `.${path.basename(file)}.`;
  if (!name.startsWith(prefix) || !name.endsWith('.tmp')) return false;
  return /^\d+\.[0-9a-f]{12}$/.test(name.slice(prefix.length, -'.tmp'.length));
}

/**
 * Deletes temporary files that a crashed emulator left behind mid-save. Only call this while
 * holding the data file's lock: then no other emulator can be writing one of them.
 */
export async function removeOrphanTempFiles(file: string): Promise<void> {
  const dir = path.dirname(file);
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return;
  }
  await Promise.all(
    names
      .filter((n) => isTempFileOf(file, n))
      // Best effort: a leftover temp file is untidy, not a reason to refuse to start.
      .map((n) => fsp.rm(path.join(dir, n), { force: true }).catch(() => undefined)),
  );
}

/**
 * Replaces `file` so that after a crash it holds either the old or the new content, never a
 * mix: the data reaches the disk in a temporary file first, a rename swaps it in, and syncing
 * the directory makes the rename itself survive a power loss.
 */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${uniqueSuffix()}.tmp`);
  // 0600 from the first byte: the file holds tokens.
  const handle = await fsp.open(tmp, 'wx', 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(data, 'utf8');
    await handle.sync();
    await handle.close();
    await fsp.rename(tmp, file);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  await fsyncDirectory(dir);
}

/**
 * Orders saves and lets each caller wait until its own change is on disk. Changes are made in
 * memory synchronously; `save` must take its snapshot synchronously when called, so a save
 * that starts after a change always contains it. Callers that arrive while a save is running
 * share the next one, which keeps the number of saves small under a burst of requests.
 */
export class DurableWriter {
  private changed = 0;
  private durable = 0;
  private inFlight: { upTo: number; done: Promise<void> } | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly save: () => Promise<void>) {}

  markChanged(): void {
    this.changed += 1;
  }

  /** Resolves once every change marked so far is on disk; rejects if the save covering it fails. */
  sync(): Promise<void> {
    const target = this.changed;
    if (this.durable >= target) return Promise.resolve();
    if (this.inFlight && this.inFlight.upTo >= target) return this.inFlight.done;
    if (!this.queued) {
      const previous = this.inFlight?.done.catch(() => undefined) ?? Promise.resolve();
      this.queued = previous.then(() => this.startSave());
    }
    return this.queued;
  }

  /** Waits for any save in progress, without failing: used on shutdown. */
  async drain(): Promise<void> {
    while (this.inFlight || this.queued) {
      await (this.queued ?? this.inFlight?.done)?.catch(() => undefined);
    }
  }

  private startSave(): Promise<void> {
    this.queued = undefined;
    const upTo = this.changed;
    const done = (async () => {
      try {
        await this.save();
        this.durable = Math.max(this.durable, upTo);
      } finally {
        this.inFlight = undefined;
      }
    })();
    this.inFlight = { upTo, done };
    return done;
  }
}

/**
 * An exclusive lock on a data file, so two emulators never overwrite each other's state. The
 * lock file holds the owner's pid (first line) and a random nonce that tells two locks of the
 * same pid apart.
 */
export class DataFileLock {
  private constructor(
    readonly lockPath: string,
    private readonly content: string,
  ) {}

  static async acquire(dataFile: string): Promise<DataFileLock> {
    const lockPath = `${dataFile}.lock`;
    const content = `${process.pid}\n${randomBytes(8).toString('hex')}\n`;
    // The lock is written under a temporary name and then hard-linked into place, which fails
    // if the lock exists (like O_EXCL) but also means nobody can ever see a lock without its pid.
    const tmp = `${lockPath}.${uniqueSuffix()}.tmp`;
    try {
      await fsp.writeFile(tmp, content, { flag: 'wx', mode: 0o600 });
    } catch (err) {
      throw new EmulatorStartError(
        `cannot create lock file for data file ${dataFile}: ${errorMessage(err)}`,
      );
    }
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        if (await createExclusive(tmp, lockPath, content)) {
          return new DataFileLock(lockPath, content);
        }
        const held = await readIfExists(lockPath);
        if (held === undefined) continue;
        const pid = parsePid(held);
        if (pid !== undefined && isAlive(pid)) {
          throw new EmulatorStartError(
            `data file ${dataFile} is in use by another emulator (pid ${pid}); stop that emulator or use another data file (lock file: ${lockPath})`,
          );
        }
        // The owner died without releasing (kill -9, power loss): the lock is stale.
        await removeStaleLock(lockPath, held);
      }
      throw new EmulatorStartError(
        `cannot lock data file ${dataFile}: the lock file ${lockPath} keeps changing; is another emulator starting on it?`,
      );
    } catch (err) {
      if (err instanceof EmulatorStartError) throw err;
      throw new EmulatorStartError(`cannot lock data file ${dataFile}: ${errorMessage(err)}`);
    } finally {
      await fsp.rm(tmp, { force: true });
    }
  }

  /** Removes the lock if it is still ours; someone may have taken it over as stale. */
  async release(): Promise<void> {
    if ((await readIfExists(this.lockPath)) === this.content) {
      await fsp.rm(this.lockPath, { force: true });
    }
  }
}

async function createExclusive(tmp: string, lockPath: string, content: string): Promise<boolean> {
  try {
    await fsp.link(tmp, lockPath);
    return true;
  } catch (err) {
    const code = errorCode(err);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
  }
  // File systems without hard links: fall back to O_EXCL and write the pid straight after.
  try {
    await fsp.writeFile(lockPath, content, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if (errorCode(err) === 'EEXIST') return false;
    throw err;
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fsp.readFile(file, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

function parsePid(content: string): number | undefined {
  const first = content.split('\n', 1)[0]?.trim() ?? '';
  if (!/^\d+$/.test(first)) return undefined;
  const pid = Number(first);
  // 0 and negative pids mean process groups to kill(); never probe those.
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return errorCode(err) === 'EPERM';
  }
}

/**
 * Moves the stale lock aside before deleting it, then checks that what was moved is the lock
 * that was judged stale. If another emulator replaced it in between, that live lock is put
 * back instead of being deleted.
 */
async function removeStaleLock(lockPath: string, observed: string): Promise<void> {
  const aside = `${lockPath}.${uniqueSuffix()}.stale`;
  try {
    await fsp.rename(lockPath, aside);
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return;
    throw err;
  }
  try {
    if ((await readIfExists(aside)) !== observed) {
      await fsp.link(aside, lockPath).catch(() => undefined);
    }
  } finally {
    await fsp.rm(aside, { force: true });
  }
}
