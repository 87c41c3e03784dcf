import { constants, promises as fsp } from 'node:fs';
import {
  READ_NO_FOLLOW,
  removeOrphanTempFiles as removeOrphans,
  UnsafeFileError,
  writeFileDurably,
  writeFully,
} from '../fs/durable-file.js';
import { FileLock, LockBusyError } from '../fs/file-lock.js';
import { errorCode } from '../platform/guards.js';
import { EmulatorStartError } from './errors.js';
import { CorruptStateError, Store, type StoreChange } from './store.js';

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The data file: a JSON snapshot of the store, followed by one JSON line per change made since
 * it was written. A change is appended and fsynced, so a write costs the size of the change, not
 * of the store (rewriting the whole file on every write made 10,000 creates into a store of
 * 30,000 groups take minutes). The file is rewritten as a bare snapshot (compacted) at start and
 * on a clean stop when changes follow the snapshot, and while running once the changes outgrow
 * the snapshot, which keeps the cost per write constant on average.
 */
export interface LoadedDataFile {
  store: Store;
  /** Whether the file exists at all: if not, the first save writes a snapshot. */
  exists: boolean;
  /** Bytes of the snapshot, of the complete change lines after it, and of the whole file. */
  snapshotBytes: number;
  changeBytes: number;
  /** The file should be rewritten before anything is appended (changes or a torn last line). */
  needsCompaction: boolean;
}

/** Loads the store; a missing file is an empty store, an unreadable or invalid one is fatal. */
export async function loadStore(file: string): Promise<Store> {
  return (await loadDataFile(file)).store;
}

export async function loadDataFile(file: string): Promise<LoadedDataFile> {
  let text: string;
  try {
    text = await readRegularFile(file);
  } catch (err) {
    if (errorCode(err) === 'ENOENT') {
      return {
        store: new Store(),
        exists: false,
        snapshotBytes: 0,
        changeBytes: 0,
        needsCompaction: true,
      };
    }
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
  const split = splitDataFile(text);
  let snapshot: unknown;
  try {
    snapshot = JSON.parse(split.snapshot);
  } catch (err) {
    throw corrupt(`not valid JSON: ${errorMessage(err)}`);
  }
  const changes: unknown[] = [];
  for (const [index, line] of split.changes.entries()) {
    if (line.trim() === '') continue;
    try {
      changes.push(JSON.parse(line));
    } catch (err) {
      throw corrupt(
        `change ${index + 1} after the snapshot is not valid JSON: ${errorMessage(err)}`,
      );
    }
  }
  try {
    const store = Store.fromJSON(snapshot, changes);
    const changeBytes = split.changes.reduce((n, line) => n + Buffer.byteLength(line) + 1, 0);
    return {
      store,
      exists: true,
      snapshotBytes: Buffer.byteLength(split.snapshot),
      changeBytes,
      needsCompaction: changeBytes > 0 || split.torn,
    };
  } catch (err) {
    if (err instanceof CorruptStateError) throw corrupt(err.message);
    throw err;
  }
}

/**
 * Cuts the file's text after the snapshot (its first JSON value) into change lines. A last line
 * without its newline is a change whose append was cut short by a crash: it was never
 * acknowledged (a change is answered only after its whole line is fsynced), so it is dropped.
 */
export function splitDataFile(text: string): {
  snapshot: string;
  changes: string[];
  torn: boolean;
} {
  const end = endOfFirstObject(text);
  if (end < 0 || text.slice(end).trim() === '') return { snapshot: text, changes: [], torn: false };
  const snapshotEnd = text.indexOf('\n', end);
  if (snapshotEnd < 0 || text.slice(end, snapshotEnd).trim() !== '') {
    // Something on the snapshot's own last line: not a file this module wrote.
    return { snapshot: text, changes: [], torn: false };
  }
  const lines = text.slice(snapshotEnd + 1).split('\n');
  const last = lines.pop() ?? '';
  return { snapshot: text.slice(0, snapshotEnd + 1), changes: lines, torn: last !== '' };
}

/**
 * Index just after the top-level JSON object that starts the text, or -1. Only brackets outside
 * strings count; whether the object is valid JSON is JSON.parse's to say afterwards.
 */
function endOfFirstObject(text: string): number {
  let i = 0;
  while (i < text.length && /\s/.test(text.charAt(i))) i += 1;
  if (text.charAt(i) !== '{') return -1;
  let depth = 0;
  let inString = false;
  for (; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth += 1;
    else if (c === 0x7d || c === 0x5d) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Changes after the snapshot may grow to this before a rewrite, however small the snapshot. */
const MIN_CHANGE_BYTES = 1024 * 1024;

/**
 * Writes the store's changes to its data file: appends each change, or rewrites the file as a
 * snapshot when that is due. `save` is the DurableWriter's: one at a time, and it takes what it
 * writes synchronously, so a save that starts after a change always contains it.
 */
export class DataFile {
  private pending: StoreChange[] = [];
  private handle: fsp.FileHandle | undefined;
  private fileBytes: number;
  private snapshotBytes: number;
  private changeBytes: number;
  private compactNext: boolean;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly store: Store,
    loaded: Omit<LoadedDataFile, 'store'>,
    private readonly minChangeBytes = MIN_CHANGE_BYTES,
  ) {
    this.snapshotBytes = loaded.snapshotBytes;
    this.changeBytes = loaded.changeBytes;
    this.fileBytes = loaded.snapshotBytes + loaded.changeBytes;
    this.compactNext = loaded.needsCompaction;
    store.onChange = (change) => this.pending.push(change);
  }

  /** Whether the file has changes after its snapshot, or changes are not yet in the file. */
  get hasChanges(): boolean {
    return this.changeBytes > 0 || this.pending.length > 0;
  }

  /** The next save rewrites the file as a snapshot. */
  requestCompaction(): void {
    this.compactNext = true;
  }

  save(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the data file is closed'));
    if (this.compactNext || this.changeBytes > Math.max(this.snapshotBytes, this.minChangeBytes)) {
      return this.compact();
    }
    const changes = this.pending;
    if (changes.length === 0) return Promise.resolve();
    this.pending = [];
    let bytes: Buffer;
    try {
      bytes = Buffer.from(changes.map((c) => `${this.store.changeLine(c)}\n`).join(''), 'utf8');
    } catch (err) {
      this.pending = changes.concat(this.pending);
      throw err;
    }
    return this.append(bytes, changes);
  }

  async close(): Promise<void> {
    this.closed = true;
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => undefined);
  }

  private compact(): Promise<void> {
    this.compactNext = true;
    // Taken now: the snapshot holds every change made so far, the pending ones included, which
    // are dropped once it is written. If this throws or the write fails, compactNext stays set
    // and the next save tries again.
    const text = `${JSON.stringify(this.store.toJSON(), null, 2)}\n`;
    return this.replace(text, this.pending.length);
  }

  private async replace(text: string, covered: number): Promise<void> {
    // The append handle would point at the file the rename replaces.
    const old = this.handle;
    this.handle = undefined;
    await old?.close().catch(() => undefined);
    await writeFileAtomic(this.path, text);
    // Changes made while the snapshot was written come after the ones it covers.
    this.pending.splice(0, covered);
    const bytes = Buffer.byteLength(text);
    this.snapshotBytes = bytes;
    this.fileBytes = bytes;
    this.changeBytes = 0;
    this.compactNext = false;
  }

  private async append(bytes: Buffer, changes: StoreChange[]): Promise<void> {
    let handle: fsp.FileHandle | undefined;
    try {
      handle = await this.appendHandle();
    } catch (err) {
      this.pending = changes.concat(this.pending);
      this.compactNext = true;
      throw err;
    }
    // Not the file as last written (its bytes were not what was read, or it was changed behind
    // the lock's back): appending could mix two states, a snapshot of memory cannot.
    if (handle === undefined) return this.compact();
    const before = this.fileBytes;
    try {
      await writeFully(bytes, async (offset, length) => {
        return (await handle.write(bytes, offset, length, null)).bytesWritten;
      });
      await handle.datasync();
    } catch (err) {
      // The next save rewrites the whole file (from memory, which has every change), the only
      // safe step after a failed write or fsync. Until then the file goes back to what it was,
      // so it never holds part of a line.
      this.compactNext = true;
      this.pending = changes.concat(this.pending);
      await handle.truncate(before).catch(() => undefined);
      throw err;
    }
    this.fileBytes += bytes.length;
    this.changeBytes += bytes.length;
  }

  /** The handle appends go through, or undefined when the file is not as last written. */
  private async appendHandle(): Promise<fsp.FileHandle | undefined> {
    if (this.handle) return this.handle;
    const handle = await fsp.open(
      this.path,
      constants.O_WRONLY | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0),
    );
    let size: number;
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new UnsafeFileError(this.path, 'not-regular');
      size = stats.size;
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
    if (size !== this.fileBytes) {
      await handle.close().catch(() => undefined);
      return undefined;
    }
    this.handle = handle;
    return handle;
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
 * content, never a mix, and no temp file is left (see src/fs/durable-file.ts, shared with the
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
 * the lock the config file uses too (src/fs/file-lock.ts): it tells a dead owner, a reused pid and
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
