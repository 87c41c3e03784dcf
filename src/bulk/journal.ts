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
 * The file is opened for appending, created with mode 0600 (it holds tokens), never truncated.
 */
import { close, constants, fchmod, fstat, fsync, open, read, type Stats, write } from 'node:fs';
import { promisify } from 'node:util';
import { writeFully } from '../durable-file.js';
import { UsageError } from '../errors.js';
import { errorCode } from '../guards.js';
import { escapeControls } from '../io.js';
import { quote } from '../parse.js';
import {
  type BulkRecord,
  csvCells,
  loadCsvStringify,
  ndjsonLine,
  type OutputFormat,
  recordColumns,
  type Stringify,
} from './records.js';
import type { BulkKind } from './validate.js';

/** The file-system calls the writer makes, so tests can count fsyncs and fail writes. */
export interface AppendFs {
  open(path: string, flags: number, mode: number): Promise<number>;
  fstat(fd: number): Promise<Pick<Stats, 'isFile' | 'size' | 'mode'>>;
  /** Reads at `position`, like pread(2). */
  read(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ): Promise<number>;
  /** Writes at the end of the file (O_APPEND); may write fewer bytes than asked. */
  write(fd: number, buffer: Uint8Array, offset: number, length: number): Promise<number>;
  fsync(fd: number): Promise<void>;
  fchmod(fd: number, mode: number): Promise<void>;
  close(fd: number): Promise<void>;
}

const writeAsync = promisify(write);
const readAsync = promisify(read);

export const nodeAppendFs: AppendFs = {
  open: promisify(open) as AppendFs['open'],
  fstat: (fd) => promisify(fstat)(fd),
  read: async (fd, buffer, offset, length, position) =>
    (await readAsync(fd, buffer, offset, length, position)).bytesRead,
  write: async (fd, buffer, offset, length) =>
    (await writeAsync(fd, buffer, offset, length, null)).bytesWritten,
  fsync: promisify(fsync),
  fchmod: promisify(fchmod),
  close: promisify(close),
};

export interface ResultFileOptions {
  path: string;
  format: OutputFormat;
  kind: BulkKind;
  fs?: AppendFs;
}

export class ResultFile {
  private pending: string[] = [];
  private pendingChars = 0;
  private appended = 0;
  private written = 0;
  private synced = 0;
  private drainQueued = false;
  private writing: Promise<void> = Promise.resolve();
  private syncing: Promise<void> | undefined;
  private closed = false;

  private constructor(
    private readonly fs: AppendFs,
    private readonly fd: number,
    private readonly kind: BulkKind,
    private readonly stringify: Stringify | undefined,
  ) {}

  /**
   * Opens (or creates, 0600) the file for appending. A last line left incomplete by a kill is
   * ended first, so the next record starts on a line of its own; a new CSV file gets the header.
   * An existing CSV file must have this kind's header.
   */
  static async open(options: ResultFileOptions): Promise<ResultFile> {
    const fs = options.fs ?? nodeAppendFs;
    const shown = escapeControls(options.path);
    let fd: number;
    try {
      fd = await fs.open(
        options.path,
        constants.O_RDWR | constants.O_APPEND | constants.O_CREAT,
        0o600,
      );
    } catch (error) {
      throw new UsageError(`--output ${shown}: cannot open the file (${describe(error)})`);
    }
    try {
      const stats = await fs.fstat(fd);
      if (!stats.isFile()) {
        throw new UsageError(`--output ${shown} is not a regular file`, {
          hint: 'results are appended and synced to disk; without --output they go to stdout',
        });
      }
      // Tokens are secrets: a file another user can read is tightened, as the config is.
      if ((stats.mode & 0o077) !== 0) await fs.fchmod(fd, 0o600);
      const stringify = options.format === 'csv' ? await loadCsvStringify() : undefined;
      const file = new ResultFile(fs, fd, options.kind, stringify);
      if (stats.size > 0) {
        const last = new Uint8Array(1);
        await fs.read(fd, last, 0, 1, stats.size - 1);
        if (last[0] !== 0x0a) file.queue('\n');
        if (stringify) await checkCsvHeader(fs, fd, options, stringify);
      } else if (stringify) {
        file.queue(stringify([[...recordColumns(options.kind)]]));
      }
      return file;
    } catch (error) {
      await fs.close(fd).catch(() => undefined);
      if (error instanceof UsageError) throw error;
      throw new UsageError(`--output ${shown}: ${describe(error)}`);
    }
  }

  /** Queues records to be written soon, in this order; `flush` or `sync` waits for them. */
  append(records: readonly BulkRecord[]): void {
    if (records.length === 0) return;
    if (this.stringify) {
      this.queue(this.stringify(records.map((record) => csvCells(record, this.kind))));
    } else {
      let text = '';
      for (const record of records) text += ndjsonLine(record, this.kind);
      this.queue(text);
    }
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

  /** Resolves when everything appended so far is written (not necessarily synced). */
  async flush(): Promise<void> {
    await this.writing;
  }

  /** Resolves when everything appended so far is written and fsynced. */
  async sync(): Promise<void> {
    const target = this.appended;
    while (this.synced < target) {
      if (this.syncing === undefined) {
        this.syncing = (async () => {
          await this.writing;
          const upTo = this.written;
          await this.fs.fsync(this.fd);
          this.synced = upTo;
        })().finally(() => {
          this.syncing = undefined;
        });
      }
      await this.syncing;
    }
  }

  /** Writes, syncs and closes; safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.sync();
    } finally {
      this.closed = true;
      await this.fs.close(this.fd);
    }
  }

  private queue(text: string): void {
    if (this.closed) throw new Error('results file already closed');
    this.pending.push(text);
    this.pendingChars += text.length;
    this.appended++;
    if (this.drainQueued) return;
    this.drainQueued = true;
    this.writing = this.writing.then(() => this.drain());
    // A failed write is reported by the next flush/sync/close; never as an unhandled rejection.
    this.writing.catch(() => undefined);
  }

  private async drain(): Promise<void> {
    this.drainQueued = false;
    while (this.pending.length > 0) {
      const text = this.pending.length === 1 ? (this.pending[0] ?? '') : this.pending.join('');
      const upTo = this.appended;
      this.pending = [];
      this.pendingChars -= text.length;
      const data = Buffer.from(text);
      await writeFully(data, (offset, length) => this.fs.write(this.fd, data, offset, length));
      this.written = upTo;
    }
  }
}

/** Rows journaled per fsync by `journalAhead`. */
const JOURNAL_BATCH = 256;

/**
 * Rows for rotation (in batches, as read), yielded in batches once their `sending` records are
 * on disk. Rows are journaled a batch ahead of need, one fsync per batch: with one fsync per
 * wave of requests in flight a run
 * would go no faster than the disk syncs (measured: 50,000 rows, waves of 8, 8 s of fsync alone).
 * The price is that an interrupted run leaves up to a batch of rows marked `sending` that were
 * never sent; `--resume` settles them like any other (their old token still works).
 */
export async function* journalAhead<R>(
  rows: AsyncIterable<readonly R[]>,
  file: ResultFile,
  sendingRecord: (row: R) => BulkRecord,
  batchSize = JOURNAL_BATCH,
): AsyncGenerator<R[]> {
  let batch: R[] = [];
  const release = async () => {
    await file.markSending(batch.map(sendingRecord));
    const ready = batch;
    batch = [];
    return ready;
  };
  for await (const some of rows) {
    for (const row of some) {
      batch.push(row);
      if (batch.length >= batchSize) yield await release();
    }
  }
  if (batch.length > 0) yield await release();
}

async function checkCsvHeader(
  fs: AppendFs,
  fd: number,
  options: ResultFileOptions,
  stringify: Stringify,
): Promise<void> {
  const expected = stringify([[...recordColumns(options.kind)]]);
  const head = new Uint8Array(expected.length);
  const got = await fs.read(fd, head, 0, head.length, 0);
  if (Buffer.from(head.subarray(0, got)).toString('utf8') !== expected) {
    throw new UsageError(
      `--output ${escapeControls(options.path)} is a CSV file without the header of ugs ${options.kind} results`,
      { hint: 'append to a results file of the same command, or name a new file' },
    );
  }
}

function describe(error: unknown): string {
  const code = errorCode(error);
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'ENOENT') return 'no such directory';
  if (code === 'ENOSPC') return 'no space left on the device';
  return escapeControls(error instanceof Error ? error.message : quote(String(error)));
}
