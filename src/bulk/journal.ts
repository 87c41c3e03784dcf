/**
 * The `--output` file of a bulk run: results appended as rows finish, and for rotate the journal
 * that makes a rotation happen at most once across runs. Before a rotation request is sent, a
 * `sending` record for its row must be on disk (fsynced); `--resume` then knows which rows may
 * have rotated without an answer.
 *
 * One fsync per row would cap a run at the disk's fsync rate, so syncs are group commits: every
 * `markSending` that arrives while an fsync is running waits for the next one, which covers
 * them all.
 *
 * The file is opened for appending, created with mode 0600 (it holds tokens), never truncated,
 * never through a symlink, and only when it is the user's own regular file; while a run writes
 * it, the run holds its lock (`lockResultsFile`, journal-checks.ts, with the checks on the file).
 */
import { constants } from 'node:fs';
import { UsageError } from '../errors.js';
import { NO_FOLLOW } from '../fs/durable-file.js';
import { errorCode } from '../platform/guards.js';
import { message } from '../text/message.js';
import { type AppendFs, nodeAppendFs } from './append-fs.js';
import {
  anotherJob,
  checkCsvHeader,
  checkNdjsonWriter,
  checkOpened,
  describeError,
  holdsRecords,
  openError,
  type ResultFileOptions,
  refuseSameFile,
} from './journal-checks.js';
import {
  type BulkRecord,
  csvCells,
  loadCsvStringify,
  ndjsonLine,
  type RecordColumn,
  type RecordSchema,
  type Stringify,
  tokenTail,
} from './records.js';

/**
 * What a results file could not take: the first error (a full disk, EIO), the rows whose records
 * with a token never reached it, and how many records in all were lost.
 */
export interface ResultFileFailure {
  error: unknown;
  /** Lost records that carry a token (rotated, mismatch, created, found), in the order appended. */
  lostWithToken: BulkRecord[];
  lostRecords: number;
}

/** Text to append and the records it holds, one line each (none for a header or a line end). */
interface Chunk {
  text: string;
  records: readonly BulkRecord[];
}

export class ResultFile {
  private pending: Chunk[] = [];
  private pendingChars = 0;
  private failure: ResultFileFailure | undefined;
  private readonly failureListeners: ((failure: ResultFileFailure) => void)[] = [];
  private appended = 0;
  private written = 0;
  private synced = 0;
  private drainQueued = false;
  private writing: Promise<void> = Promise.resolve();
  /** The newest fsync under way, and how many appended records it covers. */
  private syncing: { upTo: number; done: Promise<void> } | undefined;
  private closed = false;
  /**
   * The CSV columns of this file: today's, or those of the header an earlier version of ugs
   * wrote (a record then has no `at` cell), so every line of one file has the same width.
   */
  private columns: readonly RecordColumn[];

  private readonly records: RecordSchema;
  /** CSV files only: how a record's cells become a line. */
  private readonly stringify: Stringify | undefined;

  private constructor(
    private readonly fs: AppendFs,
    private readonly fd: number,
    format: { records: RecordSchema; stringify: Stringify | undefined },
  ) {
    this.records = format.records;
    this.stringify = format.stringify;
    this.columns = format.records.columns;
  }

  /**
   * Opens (or creates, 0600) the file for appending. A last line left incomplete by a kill is
   * ended first, so the next record starts on a line of its own; a new CSV file gets the header.
   * An existing CSV file must have this kind's header.
   */
  static async open(options: ResultFileOptions): Promise<ResultFile> {
    const fs = options.fs ?? nodeAppendFs;
    let fd: number;
    try {
      fd = await fs.open(
        options.path,
        constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | NO_FOLLOW,
        0o600,
      );
    } catch (error) {
      throw openError(options.path, error);
    }
    try {
      // Checked again on this very file: it may have been planted since `preflight`.
      const stats = await checkOpened(fs, fd, options);
      // Tokens are secrets: a file of ours that others can read is tightened, as the config is.
      if ((stats.mode & 0o077) !== 0) await fs.fchmod(fd, 0o600);
      const stringify = options.format === 'csv' ? await loadCsvStringify() : undefined;
      const file = new ResultFile(fs, fd, { records: options.records, stringify });
      if (stats.size > 0) {
        const last = new Uint8Array(1);
        await fs.read(fd, last, 0, 1, stats.size - 1);
        if (last[0] !== 0x0a) file.queue('\n', []);
        if (stringify) file.columns = await checkCsvHeader(fs, fd, options, stringify);
        else await checkNdjsonWriter(fs, fd, stats.size, options);
      } else if (stringify) {
        file.queue(stringify([[...options.records.columns]]), []);
      }
      return file;
    } catch (error) {
      await fs.close(fd).catch(() => undefined);
      if (error instanceof UsageError) throw error;
      throw new UsageError(message`--output ${options.path}: ${describeError(error)}`);
    }
  }

  /**
   * Checks an existing `--output` before the input is read or anything is sent, without creating
   * it: a regular file (not a symlink, FIFO or device) owned by the user running ugs, holding
   * results of this command, and not the `--from` file itself (by another name, a hard link or a
   * symlink). `open` checks its own descriptor again.
   */
  static async preflight(
    options: ResultFileOptions & { from: string; resume: boolean },
  ): Promise<void> {
    const fs = options.fs ?? nodeAppendFs;
    let fd: number;
    try {
      fd = await fs.open(options.path, constants.O_RDONLY | NO_FOLLOW, 0);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return; // created later, by open
      throw openError(options.path, error);
    }
    try {
      const stats = await checkOpened(fs, fd, options);
      if (options.from !== '-') await refuseSameFile(options.from, stats, options.path);
      if (stats.size > 0) {
        const stringify = options.format === 'csv' ? await loadCsvStringify() : undefined;
        let columns: Awaited<ReturnType<typeof checkCsvHeader>> | undefined;
        if (stringify) columns = await checkCsvHeader(fs, fd, options, stringify);
        else await checkNdjsonWriter(fs, fd, stats.size, options);
        if (!options.resume && (await holdsRecords(fs, fd, stats.size, columns, stringify))) {
          throw anotherJob(options);
        }
      }
    } finally {
      await fs.close(fd).catch(() => undefined);
    }
  }

  /**
   * Queues records to be written soon, in this order; `flush` or `sync` waits for them. Once a
   * write has failed nothing more is written (a record after a torn one would read as whole
   * while an earlier one is missing): records are only counted as lost.
   */
  append(given: readonly BulkRecord[]): void {
    if (given.length === 0) return;
    // A file started with --output-tokens last4 never takes a whole token, whoever appends
    // (its `sending` records too carry the fields, so --resume knows the file by any record).
    const records = this.records.tokens === 'last4' ? given.map(tokenTail) : given;
    if (this.failure !== undefined) {
      this.lose(records);
      return;
    }
    if (this.stringify) {
      this.queue(
        this.stringify(records.map((record) => csvCells(record, this.records, this.columns))),
        records,
      );
    } else {
      let text = '';
      for (const record of records) text += ndjsonLine(record, this.records);
      this.queue(text, records);
    }
  }

  /**
   * Records that must not reach the file after all: a `--output-tokens last4` run's records
   * whose whole tokens stdout did not take (record-writer.ts). The file fails as for a full
   * disk: no row starts, and each such row's last record on disk stays `sending`, for
   * `--resume` to read its token back.
   */
  abandon(error: unknown, records: readonly BulkRecord[]): void {
    if (this.failure === undefined) this.fail(error, records);
    else this.lose(records);
  }

  /** The first write or sync that failed, and what it lost; undefined while all is well. */
  get failed(): ResultFileFailure | undefined {
    return this.failure;
  }

  /** Calls `listener` once, at the first failure (at once if the file has failed already). */
  onFailure(listener: (failure: ResultFileFailure) => void): void {
    if (this.failure !== undefined) listener(this.failure);
    else this.failureListeners.push(listener);
  }

  /**
   * Appends `sending` records and resolves once they are on disk. Rows whose calls overlap
   * share one fsync.
   */
  async markSending(records: readonly BulkRecord[]): Promise<void> {
    this.append(records);
    await this.sync();
  }

  /** Characters appended and not yet written. */
  get backlog(): number {
    return this.pendingChars;
  }

  /**
   * Resolves when everything appended so far is written (not necessarily synced), or could not
   * be: a failure is in `failed`, never a rejection here.
   */
  async flush(): Promise<void> {
    await this.writing;
  }

  /**
   * Resolves when everything appended so far is written and fsynced; rejects when the file has
   * failed, since then it is not (`markSending` relies on this: no request without its record).
   */
  async sync(): Promise<void> {
    const target = this.appended;
    // Also when nothing is pending: records appended after a failure were never queued.
    this.throwIfFailed();
    if (this.synced >= target) return;
    await this.writing;
    this.throwIfFailed();
    if (this.synced >= target) return;
    // An fsync that began once these records were written covers them. Otherwise a new one
    // starts now, beside any still under way: rows whose `sending` records were written while
    // an fsync ran do not wait for it to end before theirs begins (each wait is a trip through
    // the thread pool, and a rotation is sent only after its record's fsync).
    let syncing = this.syncing;
    if (syncing === undefined || syncing.upTo < target) {
      const upTo = this.written;
      const started: { upTo: number; done: Promise<void> } = {
        upTo,
        done: this.fs.fsync(this.fd).then(
          () => {
            if (this.synced < upTo) this.synced = upTo;
          },
          (error: unknown) => {
            // What the failed fsync covered may or may not be on disk; what comes after is
            // not written at all, so the file stays a prefix of the run's records.
            this.fail(error, []);
          },
        ),
      };
      started.done.finally(() => {
        if (this.syncing === started) this.syncing = undefined;
      });
      this.syncing = started;
      syncing = started;
    }
    await syncing.done;
    this.throwIfFailed();
  }

  /**
   * Writes, syncs and closes; safe to call twice. A write or sync that fails is reported in
   * `failed`, not thrown: the run says what it means for its rows.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.sync().catch(() => undefined);
    } finally {
      this.closed = true;
      await this.fs.close(this.fd).catch((error: unknown) => {
        // close(2) can report a delayed write error (NFS): the records may not be on disk.
        if (this.failure === undefined) this.fail(error, []);
      });
    }
  }

  private queue(text: string, records: readonly BulkRecord[]): void {
    if (this.closed) throw new Error('results file already closed');
    this.pending.push({ text, records });
    this.pendingChars += text.length;
    this.appended++;
    if (this.drainQueued) return;
    this.drainQueued = true;
    // drain records its own failures; anything else it throws is one too, never unhandled.
    this.writing = this.writing
      .then(() => this.drain())
      .catch((error: unknown) => this.fail(error, []));
  }

  private async drain(): Promise<void> {
    this.drainQueued = false;
    while (this.pending.length > 0 && this.failure === undefined) {
      const chunks = this.pending;
      const upTo = this.appended;
      this.pending = [];
      const text =
        chunks.length === 1 ? (chunks[0]?.text ?? '') : chunks.map((c) => c.text).join('');
      this.pendingChars -= text.length;
      const data = Buffer.from(text);
      let done = 0;
      try {
        while (done < data.length) {
          const written = await this.fs.write(this.fd, data, done, data.length - done);
          if (!Number.isInteger(written) || written <= 0 || written > data.length - done) {
            throw Object.assign(
              new Error(`short write: the disk accepted ${done} of ${data.length} bytes`),
              { code: 'ENOSPC' },
            );
          }
          done += written;
        }
      } catch (error) {
        this.fail(error, lostFrom(chunks, data, done));
        return;
      }
      this.written = upTo;
    }
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure.error;
  }

  /** The file failed: nothing more is written, and every record not written is counted lost. */
  private fail(error: unknown, lost: readonly BulkRecord[]): void {
    if (this.failure !== undefined) return;
    this.failure = { error, lostWithToken: [], lostRecords: 0 };
    this.lose(lost);
    for (const chunk of this.pending) this.lose(chunk.records);
    this.pending = [];
    this.pendingChars = 0;
    for (const listener of this.failureListeners.splice(0)) listener(this.failure);
  }

  private lose(records: readonly BulkRecord[]): void {
    const failure = this.failure;
    if (failure === undefined) return;
    for (const record of records) {
      if (record.status === 'sending') continue;
      failure.lostRecords++;
      if (record.token !== null || typeof record.token_sha256 === 'string') {
        failure.lostWithToken.push(record);
      }
    }
  }
}

/**
 * The records of `chunks` not wholly in the first `done` bytes of `data` (their joined text):
 * each record is one line, so a chunk's records before its k-th line end are on disk.
 */
function lostFrom(chunks: readonly Chunk[], data: Buffer, done: number): BulkRecord[] {
  const lost: BulkRecord[] = [];
  let start = 0;
  for (const chunk of chunks) {
    const end = start + Buffer.byteLength(chunk.text);
    if (end <= done) {
      start = end;
      continue;
    }
    let whole = 0;
    if (start < done) {
      for (
        let at = data.indexOf(0x0a, start);
        at !== -1 && at < done;
        at = data.indexOf(0x0a, at + 1)
      ) {
        whole++;
      }
    }
    lost.push(...chunk.records.slice(whole));
    start = end;
  }
  return lost;
}

/**
 * Stdout did not take the whole tokens of a `--output-tokens last4` run (its reader closed it):
 * their records are kept out of the results file, which fails as for a full disk.
 */
export class StdoutLostError extends Error {
  constructor(cause: Error) {
    const code = errorCode(cause);
    super(
      `stdout, where --output-tokens last4 sends the whole tokens, failed (${code ?? cause.message})`,
      { cause },
    );
  }
}
