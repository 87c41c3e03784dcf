/**
 * The writer of the token history: one event per request that reached the service, appended to
 * `history.ndjson` in the config directory (or a shared file: `--history-file`,
 * `UGS_HISTORY_FILE`). What a single `get` pays is one append: no reading code is loaded (that is
 * read.ts), and node:crypto only when the first event is written.
 *
 * - One writer at a time: the project's file lock (`<file>.lock`), so appends of two processes
 *   never interleave within a line, and a rotation never loses another's events.
 * - Never through a symlink (O_NOFOLLOW), never into a FIFO (O_NONBLOCK, then refused).
 * - The file in the config directory is 0600 (tightened like the config); a shared file keeps
 *   the mode it was created with, but one writable by everyone is refused.
 * - Past MAX_BYTES the file becomes `<name>.1.ndjson` (replacing an older one): at most two.
 * - Tokens become fingerprints here: the last 4 characters and the first 12 hex digits of
 *   HMAC-SHA-256 keyed by a random key kept beside the file it serves (`<name>.key`), so everyone
 *   who shares a history file shares its fingerprints. The first write loads (or makes) the key,
 *   under the lock; a bulk batch then fingerprints each event as it comes.
 * - No fsync: the history is a record for people, not a journal anything is recovered from; the
 *   lock and one write(2) per batch are what keep its lines whole.
 * - A failure is one warning per run, never a failed command. A lock held past a second is one
 *   note, and the rest of the run writes no history rather than stall on it again.
 */
import { constants, promises as fsp, type Stats } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { describeFsError, inheritedPermissionsWarning, makeDirectories } from '../config/config.js';
import { HistoryFileError } from '../errors.js';
import { NO_FOLLOW, READ_NO_FOLLOW, renameRetrying, writeFully } from '../fs/durable-file.js';
import { FileLock, LockBusyError } from '../fs/file-lock.js';
import { errorCode } from '../platform/guards.js';
import {
  hasModeBits,
  insideUserProfile,
  type Platform,
  runningPlatform,
} from '../platform/host.js';
import type { Env } from '../platform/io.js';
import { message } from '../text/message.js';
import { type HistoryEntry, lastFour } from './event.js';

/** Past this size the file is rotated (once: `history.1.ndjson`). */
export const HISTORY_MAX_BYTES = 10 * 1024 * 1024;
/**
 * A bulk run writes its events when this many are waiting (more gather while a write is under
 * way), or after BATCH_MS. Each write takes the file lock (a dozen file operations), which at 256
 * events a batch was a tenth of the history's cost; a batch's text is about 0.8 MB.
 */
const BATCH_EVENTS = 2048;
const BATCH_MS = 1000;
/**
 * Bytes first set aside for a batch's lines (about 330 bytes an event); a batch that needs more
 * grows its buffer.
 */
const BATCH_BYTES = 1024 * 1024;
/**
 * Another ugs appending holds the lock for a few milliseconds. A lock held longer is a stuck
 * writer or one planted beside a shared file: the history is a record, never worth stalling the
 * command for, so after this wait the run goes on without it (and says so once).
 */
export const HISTORY_LOCK_WAIT_MS = 1_000;

export const HISTORY_FILE_NAME = 'history.ndjson';

/** Where the history is, or undefined when it is turned off. */
export interface HistoryLocation {
  path: string;
  /** Given by `--history-file`/`UGS_HISTORY_FILE`: its mode is the sharers' business. */
  shared: boolean;
}

export interface HistorySettings {
  noHistory?: boolean;
  historyFile?: string | undefined;
}

/** `--no-history`/`UGS_NO_HISTORY` win; then `--history-file` over `UGS_HISTORY_FILE`. */
export function historyLocation(
  settings: HistorySettings,
  configDirectory: string,
): HistoryLocation | undefined {
  if (settings.noHistory === true) return undefined;
  if (settings.historyFile !== undefined) return { path: settings.historyFile, shared: true };
  return { path: join(configDirectory, HISTORY_FILE_NAME), shared: false };
}

/** `history.ndjson` -> `history.1.ndjson`; a name without .ndjson gets `.1` at the end. */
export function rotatedPath(path: string): string {
  return /\.ndjson$/i.test(path) ? path.replace(/\.ndjson$/i, '.1.ndjson') : `${path}.1`;
}

/** `history.ndjson` -> `history.key`, beside it. */
export function keyPath(path: string): string {
  return `${path.replace(/\.ndjson$/i, '')}.key`;
}

export interface HistoryBatch {
  add(entry: HistoryEntry): void;
  /** Writes what is waiting; resolves when every event added is written (or warned about). */
  close(): Promise<void>;
}

export interface HistoryLog {
  /** The history file, or undefined when the history is off. */
  readonly location: HistoryLocation | undefined;
  /** Appends events now (a single get or rotate): one locked write. Never rejects. */
  append(entries: readonly HistoryEntry[]): Promise<void>;
  /** Events of a bulk run, written in batches. */
  batch(): HistoryBatch;
}

/** The history when it is off (`--no-history`), and in tests that do not look at it. */
export const noHistory: HistoryLog = {
  location: undefined,
  append: async () => {},
  batch: () => ({ add: () => {}, close: async () => {} }),
};

export interface HistoryLogOptions {
  env: Env;
  /** Where the one warning of a run goes (stderr, unless --quiet). */
  warn(message: string): void;
  /** The platform (modes and renames differ on Windows) and the user's home. */
  platform?: Platform;
  homedir?: string;
}

export function createHistoryLog(
  location: HistoryLocation | undefined,
  options: HistoryLogOptions,
): HistoryLog {
  return location === undefined ? noHistory : new FileHistoryLog(location, options);
}

class FileHistoryLog implements HistoryLog {
  private warned = false;
  /**
   * Set when the lock stayed held past HISTORY_LOCK_WAIT_MS: later writes of this run (a bulk
   * run's next batches) are dropped at once rather than each waiting for the same lock again.
   */
  private gaveUp = false;
  private key: Buffer | undefined;
  private who: { user: string; host: string } | undefined;
  /** Set by the first write, which loads the key: then a batch encodes events as they come. */
  private lines: EventLines | undefined;

  private readonly platform: Platform;
  /** Whether the note on a file outside the user's profile (Windows) was given. */
  private profileNoted = false;

  constructor(
    readonly location: HistoryLocation,
    private readonly options: HistoryLogOptions,
  ) {
    this.platform = options.platform ?? runningPlatform();
  }

  /** `encoded`: lines of later events, already encoded (a batch's). */
  async append(entries: readonly HistoryEntry[], encoded?: Buffer): Promise<void> {
    if (entries.length === 0 && (encoded === undefined || encoded.length === 0)) return;
    if (this.gaveUp) return;
    try {
      await this.write(entries, encoded);
    } catch (error) {
      if (error instanceof LockBusyError) this.gaveUp = true;
      if (this.warned) return;
      this.warned = true;
      if (error instanceof LockBusyError) {
        const holder =
          error.owner.pid === process.pid
            ? 'this process'
            : `another process (pid ${error.owner.pid})`;
        this.options.warn(
          message`note: history not written: ${error.lockPath} is held by ${holder}; this run's events are left out (if no ugs is running, delete the lock; --no-history turns the history off)`,
        );
        return;
      }
      // The file at fault: the key's problem names the key, not the history beside it.
      const [path, reason] =
        error instanceof HistoryFileError
          ? [error.path, error.reason]
          : [this.location.path, describeFsError(error)];
      this.options.warn(
        message`warning: the token history was not written (${path}: ${reason}); the command itself is not affected (--no-history turns the history off)`,
      );
    }
  }

  /**
   * Until the first write has loaded the key, events wait as they are (`pending`). From then on
   * each is encoded into a batch's bytes as it comes: 2048 events kept as objects lived long
   * enough to reach V8's old generation, and raised a 200,000-row run's peak memory by about
   * 20 MiB (129 MiB against 106 MiB with 128-event batches; the bench's limit is 150 MiB).
   */
  batch(): HistoryBatch {
    let pending: HistoryEntry[] = [];
    let filling = new LineBuffer();
    let spare: LineBuffer | undefined;
    let timer: NodeJS.Timeout | undefined;
    let writing: Promise<void> | undefined;
    const waiting = (): number => pending.length + filling.events;
    const flush = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      // One write at a time: events added meanwhile wait and go out together in the next one.
      if (writing !== undefined || waiting() === 0) return;
      const entries = pending;
      pending = [];
      const written = filling;
      filling = spare ?? new LineBuffer();
      spare = undefined;
      writing = this.append(entries, written.bytes()).then(() => {
        written.clear();
        spare = written;
        writing = undefined;
        // Events that waited for the key (the first write loads it) go first, in order.
        const lines = this.lines;
        if (lines !== undefined && pending.length > 0) {
          for (const entry of pending) filling.add(lines.line(entry));
          pending = [];
        }
        if (waiting() >= BATCH_EVENTS) flush();
        else if (waiting() > 0) schedule();
      });
    };
    const schedule = (): void => {
      if (timer !== undefined) return;
      timer = setTimeout(flush, BATCH_MS);
      timer.unref();
    };
    return {
      add: (entry) => {
        // Encoded now only when nothing older waits unencoded: the file keeps the events' order.
        const lines = this.lines;
        if (lines !== undefined && pending.length === 0) filling.add(lines.line(entry));
        else pending.push(entry);
        if (waiting() >= BATCH_EVENTS) flush();
        else schedule();
      },
      close: async () => {
        for (;;) {
          flush();
          if (writing === undefined) return;
          await writing;
        }
      },
    };
  }

  private async write(entries: readonly HistoryEntry[], encoded?: Buffer): Promise<void> {
    const { path, shared } = this.location;
    // The config directory is ugs's own (0700, as config.ts makes it); a shared file's directory
    // is the sharers' and must exist.
    if (!shared) makeDirectories(dirname(path));
    if (!this.profileNoted && !insideUserProfile(path, this.platform, this.options.homedir ?? '')) {
      this.profileNoted = true;
      this.options.warn(inheritedPermissionsWarning('token history', path, this.platform));
    }
    const lock = await FileLock.acquire(path, { waitMs: HISTORY_LOCK_WAIT_MS });
    try {
      let { fd, size, mode } = await openForAppend(path, shared, this.platform);
      try {
        if (size >= HISTORY_MAX_BYTES) {
          await fd.close();
          await renameRetrying(fsp, path, rotatedPath(path), { platform: this.platform });
          // The new file has the mode the old one had (a shared file keeps its sharers' mode).
          ({ fd, size } = await openForAppend(path, shared, this.platform, mode));
        }
        const lines = await this.eventLines(mode);
        let text = '';
        for (const entry of entries) text += lines.line(entry);
        // A line left unfinished (a writer killed mid-write, before this lock existed) is ended
        // first, so this batch starts on a line of its own.
        if (size > 0) {
          const last = Buffer.alloc(1);
          await fd.read(last, 0, 1, size - 1);
          if (last[0] !== 0x0a) text = `\n${text}`;
        }
        const data =
          encoded === undefined || encoded.length === 0
            ? Buffer.from(text, 'utf8')
            : text === ''
              ? encoded
              : Buffer.concat([Buffer.from(text, 'utf8'), encoded]);
        await writeFully(data, async (offset, length) => {
          const { bytesWritten } = await fd.write(data, offset, length, null);
          return bytesWritten;
        });
      } finally {
        await fd.close().catch(() => undefined);
      }
    } finally {
      await lock.release();
    }
  }

  /** Lines under the key beside the file (loaded, or made, by the first write). */
  private async eventLines(historyMode: number): Promise<EventLines> {
    if (this.lines !== undefined) return this.lines;
    const print = await fingerprinter(await this.loadKey(historyMode));
    this.lines = new EventLines(print, this.whoAmI());
    return this.lines;
  }

  /** The key beside the file, made (32 random bytes) by the first writer. */
  private async loadKey(historyMode: number): Promise<Buffer> {
    if (this.key !== undefined) return this.key;
    const path = keyPath(this.location.path);
    let text = await readKeyFile(path);
    if (text === undefined) {
      const { randomBytes } = await import('node:crypto');
      // As readable as the history it serves (a shared file's group can read its fingerprints),
      // never writable by anyone but its owner.
      const mode = this.location.shared ? (historyMode & 0o640) | 0o600 : 0o600;
      try {
        const handle = await fsp.open(
          path,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW,
          mode,
        );
        try {
          await handle.writeFile(`${randomBytes(32).toString('hex')}\n`);
        } finally {
          await handle.close();
        }
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw historyFileError(path, 'key', error);
      }
      text = await readKeyFile(path);
    }
    const key = parseKey(text, path);
    this.key = key;
    return key;
  }

  private whoAmI(): { user: string; host: string } {
    if (this.who !== undefined) return this.who;
    let user: string | undefined;
    try {
      user = userInfo().username;
    } catch {
      // No passwd entry (a container run as an arbitrary uid): the environment may still say.
    }
    const env = this.options.env;
    this.who = {
      user: user || env.USER || env.USERNAME || env.LOGNAME || 'unknown',
      host: hostname() || 'unknown',
    };
    return this.who;
  }
}

/** Which file of a history a problem is about: the error names it as a person knows it. */
export type HistoryFileKind = 'history' | 'key';

const KIND_LABEL: Record<HistoryFileKind, string> = {
  history: 'the token history',
  key: "the token history's key",
};

const KIND_HINT: Record<HistoryFileKind, string> = {
  history:
    'ugs uses the history only as a regular file of its own: move that one away, or choose another with --history-file (--no-history turns the history off)',
  key: 'ugs uses the key only as a regular file of its own, beside the history: move that one away (a new key is made; fingerprints noted before no longer match), or choose another history with --history-file',
};

/**
 * A history file or key that ugs cannot use, as a typed error naming it (exit 2): a symlink
 * (ELOOP, from O_NOFOLLOW), a FIFO or directory, a permission problem. Without this these
 * reached main as "unexpected failure ... report the output", though the user must act.
 */
export function historyFileError(
  path: string,
  kind: HistoryFileKind,
  reasonOrError: unknown,
): HistoryFileError {
  if (reasonOrError instanceof HistoryFileError) return reasonOrError;
  const reason = typeof reasonOrError === 'string' ? reasonOrError : describeFsError(reasonOrError);
  return new HistoryFileError(
    message`cannot use ${KIND_LABEL[kind]} ${path}: ${reason}`,
    path,
    reason,
    { hint: KIND_HINT[kind], ...(reasonOrError instanceof Error && { cause: reasonOrError }) },
  );
}

/** Why a file that opened is not one ugs reads or writes (a FIFO planted under the name). */
function notRegular(stats: Stats): string {
  if (stats.isFIFO()) return 'it is a FIFO (named pipe), not a regular file';
  if (stats.isDirectory()) return 'it is a directory, not a regular file';
  return 'it is not a regular file';
}

/**
 * A regular file's text, never through a symlink (O_NOFOLLOW); undefined when there is none.
 * The history and its key are read this way (the key file and `read.ts`'s history files).
 */
export async function readIfExists(
  path: string,
  kind: HistoryFileKind = 'history',
): Promise<string | undefined> {
  const handle = await openIfExists(path, kind);
  if (handle === undefined) return undefined;
  try {
    return await handle.readFile('utf8');
  } catch (error) {
    throw historyFileError(path, kind, error);
  } finally {
    await handle.close();
  }
}

/**
 * A history file (or its key) opened for reading if it is a regular file itself; undefined when
 * there is none. A symlink, a FIFO (opened with O_NONBLOCK, so it cannot block, then refused) or
 * any other failure is a HistoryFileError naming the file. The caller closes it.
 */
export async function openIfExists(
  path: string,
  kind: HistoryFileKind = 'history',
): Promise<fsp.FileHandle | undefined> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(path, READ_NO_FOLLOW);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw historyFileError(path, kind, error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw historyFileError(path, kind, notRegular(stats));
  } catch (error) {
    await handle.close();
    throw historyFileError(path, kind, error);
  }
  return handle;
}

/** The key's hex text as stored, or undefined when there is none yet. */
export async function readKeyFile(path: string): Promise<string | undefined> {
  return (await readIfExists(path, 'key'))?.slice(0, 4096);
}

export function parseKey(text: string | undefined, path: string): Buffer {
  const hex = (text ?? '').trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw historyFileError(path, 'key', 'it is not a history key (64 hex digits)');
  }
  return Buffer.from(hex, 'hex');
}

/**
 * Fingerprints under a history's key: the first 12 hex digits of HMAC-SHA-256 of the token.
 * node:crypto is loaded here, when the first one is needed.
 */
async function fingerprinter(key: Buffer): Promise<(token: string) => string> {
  const { createHmac } = await import('node:crypto');
  return (token) => createHmac('sha256', key).update(token, 'utf8').digest('hex').slice(0, 12);
}

/** The 12-hex-digit fingerprint of a token under a history's key. */
export async function fingerprintWith(key: Buffer, token: string): Promise<string> {
  return (await fingerprinter(key))(token);
}

/**
 * Opens the history for appending (creating it 0600, or with `createMode`), checks that it is a
 * regular file nobody else can write to, and tightens ugs's own file to 0600.
 */
async function openForAppend(
  path: string,
  shared: boolean,
  on: Platform,
  createMode?: number,
): Promise<{ fd: fsp.FileHandle; size: number; mode: number }> {
  let fd: fsp.FileHandle;
  try {
    fd = await fsp.open(
      path,
      constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | NO_FOLLOW,
      createMode === undefined ? 0o600 : createMode & 0o775,
    );
  } catch (error) {
    throw historyFileError(path, 'history', error);
  }
  try {
    const stats = await fd.stat();
    if (!stats.isFile()) throw historyFileError(path, 'history', notRegular(stats));
    if (createMode !== undefined && stats.size === 0) await fd.chmod(createMode & 0o775);
    const mode = createMode !== undefined && stats.size === 0 ? createMode & 0o775 : stats.mode;
    if (hasModeBits(on)) {
      // Anyone could then forge or erase what it says about whose token was whose.
      if ((mode & 0o002) !== 0) {
        throw historyFileError(
          path,
          'history',
          'it is writable by everyone; ugs does not write to it (chmod o-w)',
        );
      }
      if (!shared && (mode & 0o077) !== 0) await fd.chmod(0o600);
    }
    return { fd, size: stats.size, mode: shared ? mode & 0o777 : 0o600 };
  } catch (error) {
    await fd.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Events as lines of JSON, written out by hand: a bulk run writes one per row, and building an
 * event object to stringify cost several times this. The keys and their order are HistoryEvent's
 * (the reader, read.ts, parses them as JSON); the fields a run's events share (who, where, which
 * profile) are encoded once.
 */
class EventLines {
  private sharedFor: HistoryEntry | undefined;
  private shared = '';
  /** The last event time's text: a bulk run writes a dozen events within each millisecond. */
  private timeMs = Number.NaN;
  private timeText = '';

  constructor(
    private readonly fingerprint: (token: string) => string,
    private readonly who: { user: string; host: string },
  ) {}

  line(entry: HistoryEntry): string {
    const shared =
      this.sharedFor !== undefined &&
      this.sharedFor.profile === entry.profile &&
      this.sharedFor.baseUrl === entry.baseUrl &&
      this.sharedFor.dialect === entry.dialect
        ? this.shared
        : this.share(entry);
    const tag =
      entry.environmentTag === undefined
        ? ''
        : `,"environment_tag":${JSON.stringify(entry.environmentTag)}`;
    const ms = entry.time.getTime();
    if (ms !== this.timeMs) {
      this.timeMs = ms;
      this.timeText = entry.time.toISOString();
    }
    return `{"time":"${this.timeText}",${shared},"user_group_id":${json(entry.userGroupId)},"name":${json(entry.name)},"outcome":"${entry.outcome}"${tag},"sent_last4":${json(lastFour(entry.sentToken))},"sent_fingerprint":${json(this.print(entry.sentToken))},"token_last4":${json(lastFour(entry.token))},"token_fingerprint":${json(this.print(entry.token))}}\n`;
  }

  private share(entry: HistoryEntry): string {
    this.sharedFor = entry;
    const fields = {
      user: this.who.user,
      host: this.who.host,
      profile: entry.profile,
      base_url: entry.baseUrl,
      dialect: entry.dialect,
    };
    // The object's text without its braces.
    this.shared = JSON.stringify(fields).slice(1, -1);
    return this.shared;
  }

  private print(token: string | null | undefined): string | null {
    return token === null || token === undefined || token === '' ? null : this.fingerprint(token);
  }
}

/** A batch's lines, encoded as they come into one reusable buffer (outside V8's heap). */
class LineBuffer {
  private data: Buffer | undefined;
  private used = 0;
  events = 0;

  add(line: string): void {
    // At most 3 bytes of UTF-8 for each UTF-16 code unit.
    const room = line.length * 3;
    let data = this.data;
    if (data === undefined || this.used + room > data.length) {
      const bigger = Buffer.allocUnsafe(Math.max(BATCH_BYTES, (this.used + room) * 2));
      data?.copy(bigger, 0, 0, this.used);
      this.data = bigger;
      data = bigger;
    }
    this.used += data.write(line, this.used, 'utf8');
    this.events++;
  }

  bytes(): Buffer | undefined {
    return this.data?.subarray(0, this.used);
  }

  clear(): void {
    this.used = 0;
    this.events = 0;
  }
}

function json(value: string | null): string {
  return value === null ? 'null' : JSON.stringify(value);
}
