/**
 * The checks on a `--output` file before a run appends to it (a regular file of the user running
 * ugs, holding this command's results, not the `--from` file, not an earlier job's without
 * `--resume`), its lock, and the messages of what fails.
 */
import { type Stats, stat } from 'node:fs';
import { promisify } from 'node:util';
import { UsageError } from '../errors.js';
import { UnsafeFileError } from '../fs/durable-file.js';
import { FileLock, LockBusyError } from '../fs/file-lock.js';
import { errorCode } from '../platform/guards.js';
import { escapeControls } from '../platform/io.js';
import { message, quote } from '../text/message.js';
import type { AppendFs } from './append-fs.js';
import {
  csvHeaders,
  type OutputFormat,
  type RecordColumn,
  type RecordSchema,
  type Stringify,
  tokenTailColumns,
} from './records.js';
import { foreignWriter, otherTokens, writtenByOther } from './resume.js';

export interface ResultFileOptions {
  path: string;
  format: OutputFormat;
  /** The records of the command that writes the file. */
  records: RecordSchema;
  /** The user running ugs (`SystemInfo.uid`), who must own the file; undefined: no uids here. */
  uid: number | undefined;
  fs?: AppendFs;
}

/**
 * One run per results file: two runs appending to one file would interleave their `sending`
 * records and settle each other's rows. The lock is `<file>.lock` (file-lock.ts), released at the
 * end of the run; one left by a killed run names a dead process and is taken over.
 */
export async function lockResultsFile(path: string): Promise<FileLock> {
  try {
    return await FileLock.acquire(path);
  } catch (error) {
    if (error instanceof LockBusyError) {
      const who = error.owner.pid > 0 ? `ugs run (process ${error.owner.pid})` : 'ugs run';
      throw new UsageError(
        message`--output ${path} is in use by another ${who}; nothing was sent`,
        {
          hint: 'wait for that run to end (then --resume if needed), or name another --output file',
        },
      );
    }
    if (error instanceof UnsafeFileError) {
      throw new UsageError(
        message`--output ${path}: its lock ${error.path} is ${error.kind === 'symlink' ? 'a symbolic link' : 'not a regular file'}`,
        { hint: 'remove it if no ugs run is using the results file' },
      );
    }
    throw new UsageError(
      message`--output ${path}: cannot lock the file (${describeError(error)})`,
      {
        hint: message`ugs creates ${path}.lock next to it while a run writes the file`,
      },
    );
  }
}

export function openError(path: string, error: unknown): UsageError {
  if (errorCode(error) === 'ELOOP') {
    return new UsageError(message`--output ${path} is a symbolic link, which ugs does not follow`, {
      hint: 'results hold tokens: name the file itself, in a directory others cannot write to',
    });
  }
  return new UsageError(message`--output ${path}: cannot open the file (${describeError(error)})`);
}

/** The checks on an opened `--output`: a regular file of the user running ugs. */
export async function checkOpened(
  fs: AppendFs,
  fd: number,
  options: ResultFileOptions,
): Promise<Awaited<ReturnType<AppendFs['fstat']>>> {
  const stats = await fs.fstat(fd);
  if (!stats.isFile()) {
    throw new UsageError(message`--output ${options.path} is not a regular file`, {
      hint: 'results are appended and synced to disk; without --output they go to stdout',
    });
  }
  // A file planted by someone else (in /tmp, a shared directory) would hand them the tokens:
  // they own it, so they can read it whatever its mode. Where there are no uids, nothing to check.
  if (options.uid !== undefined && stats.uid !== options.uid) {
    throw new UsageError(
      message`--output ${options.path} belongs to another user (uid ${stats.uid}); nothing was sent`,
      {
        hint: 'results hold tokens: name a file of your own, in a directory others cannot write to',
      },
    );
  }
  return stats;
}

/** The first whole record of an existing NDJSON results file must be this command's. */
export async function checkNdjsonWriter(
  fs: AppendFs,
  fd: number,
  size: number,
  options: ResultFileOptions,
): Promise<void> {
  const head = new Uint8Array(Math.min(size, 64 * 1024));
  const got = await fs.read(fd, head, 0, head.length, 0);
  const lines = Buffer.from(head.subarray(0, got)).toString('utf8').split('\n');
  lines.pop(); // unfinished (or cut off by the 64 KiB read): not judged
  for (const line of lines) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue; // a line torn by a kill
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
    // A line that is no result record is not judged here (appending to it is the user's call).
    const writer = foreignWriter(value as Record<string, unknown>, options.records);
    if (writer !== undefined) throw writtenByOther(options.path, options.records.command, writer);
    return;
  }
}

/** `--from` and `--output` must not be one file, whatever names lead to it. */
export async function refuseSameFile(
  from: string,
  output: { dev: number; ino: number },
  path: string,
): Promise<void> {
  let input: Stats;
  try {
    input = await promisify(stat)(from);
  } catch {
    return; // reading the input reports it
  }
  if (input.dev === output.dev && input.ino === output.ino) {
    throw new UsageError(
      message`--from "${from}" and --output ${path} are the same file; nothing was sent`,
      { hint: 'write the results to a file of their own, e.g. --output results.ndjson' },
    );
  }
}

/** The columns of the file's header: this command's, today's or an earlier version's. */
export async function checkCsvHeader(
  fs: AppendFs,
  fd: number,
  options: ResultFileOptions,
  stringify: Stringify,
): Promise<readonly RecordColumn[]> {
  for (const columns of csvHeaders(options.records)) {
    const expected = stringify([[...columns]]);
    if ((await readHead(fs, fd, expected.length)) === expected) return columns;
  }
  // This command's file, written with the other --output-tokens: named as such.
  const last4 = options.records.tokens === 'last4';
  const otherWay = last4
    ? csvHeaders(options.records).map((columns) => wholeTokenColumns(columns))
    : csvHeaders(options.records).map((columns) => tokenTailColumns(columns));
  for (const columns of otherWay) {
    const header = stringify([[...columns]]);
    if ((await readHead(fs, fd, header.length)) === header) {
      throw otherTokens(options.path, last4 ? 'full' : 'last4');
    }
  }
  for (const other of options.records.others) {
    const header = stringify([[...other.columns]]);
    if ((await readHead(fs, fd, header.length)) === header) {
      throw writtenByOther(options.path, options.records.command, other.command);
    }
  }
  throw new UsageError(
    message`--output ${options.path} is a CSV file without the header of ugs ${options.records.command} results`,
    { hint: 'append to a results file of the same command, or name a new file' },
  );
}

/**
 * Anything past a CSV file's header, or any line in an NDJSON file that is not blank: the results
 * of an earlier run (a torn line of a killed one too).
 */
export async function holdsRecords(
  fs: AppendFs,
  fd: number,
  size: number,
  columns: readonly RecordColumn[] | undefined,
  stringify: Stringify | undefined,
): Promise<boolean> {
  const skip =
    stringify === undefined || columns === undefined ? 0 : stringify([[...columns]]).length;
  if (size <= skip) return false;
  const head = new Uint8Array(Math.min(size - skip, 64 * 1024));
  const got = await fs.read(fd, head, 0, head.length, skip);
  // Past 64 KiB it holds something, blank or not: not a file to append a new job to.
  return Buffer.from(head.subarray(0, got)).toString('utf8').trim() !== '' || size - skip > got;
}

/**
 * A results file belongs to one job: a second run appended to it (a retried CI job without
 * --resume) would send every row again, and rotate each token twice.
 */
export function anotherJob(options: ResultFileOptions): UsageError {
  return new UsageError(
    message`--output ${options.path} already holds the results of an earlier run; nothing was sent`,
    {
      hint: `pass --resume to continue that job (rows done are not sent again), or name a new --output file to start another`,
    },
  );
}

/** The columns of a whole-token file for those of a last4 one (tokenTailColumns undone). */
function wholeTokenColumns(columns: readonly RecordColumn[]): readonly RecordColumn[] {
  return columns.flatMap((column): RecordColumn[] =>
    column === 'token_sha256' ? [] : column === 'token_last4' ? ['token'] : [column],
  );
}

async function readHead(fs: AppendFs, fd: number, length: number): Promise<string> {
  const head = new Uint8Array(length);
  const got = await fs.read(fd, head, 0, length, 0);
  return Buffer.from(head.subarray(0, got)).toString('utf8');
}

export function describeError(error: unknown): string {
  const code = errorCode(error);
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'ENOENT') return 'no such directory';
  if (code === 'ENOSPC') return 'no space left on the device';
  return escapeControls(error instanceof Error ? error.message : quote(String(error)));
}
