import { promises as fsp } from 'node:fs';
import {
  READ_NO_FOLLOW,
  removeOrphanTempFiles as removeOrphans,
  UnsafeFileError,
  writeFileDurably,
} from '../durable-file.js';
import { FileLock, LockBusyError } from '../file-lock.js';
import { errorCode } from '../guards.js';
import { EmulatorStartError } from './errors.js';
import { CorruptStateError, Store } from './store.js';

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Loads the store; a missing file is an empty store, an unreadable or invalid one is fatal. */
export async function loadStore(file: string): Promise<Store> {
  let text: string;
  try {
    text = await readRegularFile(file);
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return new Store();
    if (err instanceof UnsafeFileError) {
      throw new EmulatorStartError(`cannot read data file: ${err.message}`);
    }
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

/**
 * Deletes temporary files that a crashed emulator left behind mid-save. Only call this while
 * holding the data file's lock: then no other emulator can be writing one of them.
 */
export async function removeOrphanTempFiles(file: string): Promise<void> {
  await removeOrphans(file);
}

/**
 * Replaces `file` so that after a crash or a full disk it holds either the old or the new
 * content, never a mix, and no temp file is left (see src/durable-file.ts, shared with the
 * config). The file is 0600 from the first byte: it holds tokens.
 */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  // Leftovers were removed once at start, under the lock (removeOrphanTempFiles).
  await writeFileDurably(file, data, { mode: 0o600, removeOrphans: false });
}

/** Shutdown waits this long at most for a save in progress. */
const DRAIN_TIMEOUT_MS = 3_000;

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

  /**
   * Waits for any save in progress, without failing: used on shutdown. Gives up after
   * `timeoutMs` so that a disk that never answers cannot keep the emulator from stopping; the
   * write is atomic, so the file then holds the state of the last save that completed.
   */
  async drain(timeoutMs = DRAIN_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pending = this.queued ?? this.inFlight?.done;
      const left = deadline - Date.now();
      if (pending === undefined || left <= 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        pending.catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, left);
        }),
      ]);
      clearTimeout(timer);
    }
  }

  private startSave(): Promise<void> {
    this.queued = undefined;
    const upTo = this.changed;
    // A save may throw before it returns a promise (JSON.stringify of a state it cannot
    // serialise): that must fail this save only, like a rejection, and never leave `inFlight` set.
    let saving: Promise<void>;
    try {
      saving = Promise.resolve(this.save());
    } catch (err) {
      saving = Promise.reject(err);
    }
    const done: Promise<void> = saving
      .then(() => {
        this.durable = Math.max(this.durable, upTo);
      })
      .finally(() => {
        if (this.inFlight?.done === done) this.inFlight = undefined;
      });
    this.inFlight = { upTo, done };
    return done;
  }
}

/**
 * An exclusive lock on a data file, so two emulators never overwrite each other's state. It is
 * the lock the config file uses too (src/file-lock.ts): it tells a dead owner, a reused pid and
 * this very process apart, and takes over a stale lock atomically.
 */
export class DataFileLock {
  private constructor(private readonly lock: FileLock) {}

  get lockPath(): string {
    return this.lock.lockPath;
  }

  static async acquire(dataFile: string): Promise<DataFileLock> {
    try {
      return new DataFileLock(await FileLock.acquire(dataFile));
    } catch (err) {
      if (err instanceof LockBusyError) {
        // The same words for a second emulator in this process: it is just as much another one.
        const same = err.owner.pid === process.pid ? ' in this process' : '';
        throw new EmulatorStartError(
          `data file ${dataFile} is in use by another emulator (pid ${err.owner.pid})${same}; stop that emulator or use another data file (lock file: ${err.lockPath})`,
        );
      }
      throw new EmulatorStartError(`cannot lock data file ${dataFile}: ${errorMessage(err)}`);
    }
  }

  /** Removes the lock if it is still ours; someone may have taken it over as stale. */
  async release(): Promise<void> {
    await this.lock.release();
  }
}

/** Reads a regular file, refusing a symlink or anything else (a FIFO would block the read). */
async function readRegularFile(file: string): Promise<string> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, READ_NO_FOLLOW);
  } catch (err) {
    if (errorCode(err) === 'ELOOP') throw new UnsafeFileError(file, 'symlink');
    throw err;
  }
  try {
    if (!(await handle.stat()).isFile()) throw new UnsafeFileError(file, 'not-regular');
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
