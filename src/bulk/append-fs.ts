/** The file-system calls a results file makes (`nodeAppendFs`), so tests can count fsyncs and fail writes. */
import { close, fchmod, fstat, fsync, open, read, type Stats, write } from 'node:fs';
import { promisify } from 'node:util';

/** The file-system calls the writer makes, so tests can count fsyncs and fail writes. */
export interface AppendFs {
  open(path: string, flags: number, mode: number): Promise<number>;
  fstat(fd: number): Promise<Pick<Stats, 'isFile' | 'size' | 'mode' | 'uid' | 'dev' | 'ino'>>;
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
