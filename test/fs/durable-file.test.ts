/**
 * The durable writer shared by the config and the emulator's data file, driven through an fs
 * double that answers like a nearly full or failing disk: short writes, writes that take nothing,
 * ENOSPC, EDQUOT, EIO, and failures of fsync and rename. Whatever happens, the file keeps its old
 * bytes and no temp file is left.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type DurableFs,
  nodeFs,
  RENAME_RETRY_DELAYS_MS,
  renameRetrying,
  SHORT_WRITE,
  writeAll,
  writeFileDurably,
} from '../../src/fs/durable-file.js';
import { tempDir } from '../kit/binary.js';
import { rejection } from '../kit/fakes.js';

let dir: string;
let file: string;
const OLD = `${JSON.stringify({ profiles: { keep: { apiToken: 'old-token-1234' } } }, null, 2)}\n`;
// Bigger than one page, as the config of someone with several profiles is.
const NEW = JSON.stringify({ pad: 'n'.repeat(6000), token: 'new-token-5678' });

beforeEach(() => {
  dir = tempDir('durable');
  file = join(dir, 'config.json');
  writeFileSync(file, OLD, { mode: 0o600 });
});

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated`), { code });
}

/** The real file system, with `write` answered by `answer(call, asked)`. */
function diskThat(answer: (call: number, asked: number) => number | Error): DurableFs & {
  writes: number[];
} {
  const writes: number[] = [];
  return {
    ...nodeFs,
    writes,
    async write(fd, buffer, offset, length, position) {
      const result = answer(writes.length, length);
      if (result instanceof Error) {
        writes.push(-1);
        throw result;
      }
      const n = Math.min(result, length);
      const written = await nodeFs.write(fd, buffer, offset, n, position);
      writes.push(written);
      return written;
    },
  };
}

function expectUntouched(): void {
  expect(readFileSync(file, 'utf8')).toBe(OLD);
  expect(readdirSync(dir)).toEqual(['config.json']);
}

describe('writeAll', () => {
  it('loops over short writes until every byte is written, at the right offsets', async () => {
    const disk = diskThat(() => 1000);
    await writeFileDurably(file, NEW, { fs: disk });
    expect(readFileSync(file, 'utf8')).toBe(NEW);
    expect(disk.writes.length).toBe(Math.ceil(Buffer.byteLength(NEW) / 1000));
    expect(readdirSync(dir)).toEqual(['config.json']);
  });

  it('a write that takes nothing is an error, not an endless loop', async () => {
    const fake: DurableFs = { ...nodeFs, write: async () => 0 };
    const error = await rejection(writeAll(fake, 99, Buffer.from('abc')));
    expect((error as NodeJS.ErrnoException).code).toBe(SHORT_WRITE);
  });
});

describe('writeFileDurably on a disk that gives out', () => {
  it.each(['ENOSPC', 'EDQUOT', 'EIO'])(
    'a short write, then %s: the error surfaces, the file keeps its old bytes, no temp file',
    async (code) => {
      // How a nearly full disk answers: part of the data first, then the error.
      const disk = diskThat((call) => (call === 0 ? 4096 : errno(code)));
      const error = await rejection(writeFileDurably(file, NEW, { fs: disk }));
      expect((error as NodeJS.ErrnoException).code).toBe(code);
      expect(disk.writes[0]).toBe(4096);
      expectUntouched();
    },
  );

  it.each(['ENOSPC', 'EDQUOT', 'EIO'])('%s on the first write', async (code) => {
    const error = await rejection(writeFileDurably(file, NEW, { fs: diskThat(() => errno(code)) }));
    expect((error as NodeJS.ErrnoException).code).toBe(code);
    expectUntouched();
  });

  it('a short write followed by a write of nothing', async () => {
    const disk = diskThat((call) => (call === 0 ? 4096 : 0));
    const error = await rejection(writeFileDurably(file, NEW, { fs: disk }));
    expect((error as NodeJS.ErrnoException).code).toBe(SHORT_WRITE);
    expectUntouched();
  });

  it.each<[string, Partial<DurableFs>]>([
    ['fsync fails with EIO', { fsync: async () => Promise.reject(errno('EIO')) }],
    ['close fails with EIO', { close: async () => Promise.reject(errno('EIO')) }],
    ['rename fails with EXDEV', { rename: async () => Promise.reject(errno('EXDEV')) }],
    ['fchmod fails with EPERM', { fchmod: async () => Promise.reject(errno('EPERM')) }],
  ])('%s: the file keeps its old bytes, no temp file', async (_label, broken) => {
    const fake: DurableFs = {
      ...nodeFs,
      ...broken,
      // The temp file's descriptor is closed for real even when the double's close fails.
      ...(broken.close && {
        close: async (fd: number) => {
          await nodeFs.close(fd);
          throw errno('EIO');
        },
      }),
    };
    await rejection(writeFileDurably(file, NEW, { fs: fake }));
    expectUntouched();
  });

  it('ENOSPC creating the temp file itself', async () => {
    const fake: DurableFs = { ...nodeFs, open: async () => Promise.reject(errno('ENOSPC')) };
    const error = await rejection(writeFileDurably(file, NEW, { fs: fake }));
    expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expectUntouched();
  });

  it('a write that succeeds leaves mode 0600 and no temp file', async () => {
    mkdirSync(join(dir, 'sub'));
    const target = join(dir, 'sub', 'state.json');
    await writeFileDurably(target, NEW);
    expect(readFileSync(target, 'utf8')).toBe(NEW);
    expect(readdirSync(join(dir, 'sub'))).toEqual(['state.json']);
  });
});

describe('writeFileDurably: the order of what reaches the disk', () => {
  /** The real file system, recording each call that makes data or names durable. */
  function recordingFs(): DurableFs & { calls: string[] } {
    const calls: string[] = [];
    const fds = new Map<number, string>();
    const name = (path: string) => (path === dir ? 'dir' : path === file ? 'file' : 'temp');
    return {
      ...nodeFs,
      calls,
      async open(path, flags, mode) {
        const fd = await nodeFs.open(path, flags, mode);
        fds.set(fd, name(path));
        calls.push(`open ${name(path)}`);
        return fd;
      },
      async write(fd, buffer, offset, length, position) {
        calls.push(`write ${fds.get(fd)}`);
        return nodeFs.write(fd, buffer, offset, length, position);
      },
      async fsync(fd) {
        calls.push(`fsync ${fds.get(fd)}`);
        await nodeFs.fsync(fd);
      },
      async rename(from, to) {
        calls.push(`rename ${name(from)} -> ${name(to)}`);
        await nodeFs.rename(from, to);
      },
    };
  }

  it('the data is fsynced before the rename, and the directory after it (or a crash can lose the new name)', async () => {
    const fs = recordingFs();
    await writeFileDurably(file, NEW, { fs });
    expect(readFileSync(file, 'utf8')).toBe(NEW);
    const durable = fs.calls.filter(
      (call) => !call.startsWith('open') && !call.startsWith('write'),
    );
    expect(durable).toEqual(['fsync temp', 'rename temp -> file', 'fsync dir']);
    // Every byte is written before the temp file's fsync.
    expect(fs.calls.lastIndexOf('write temp')).toBeLessThan(fs.calls.indexOf('fsync temp'));
  });
});

describe('a rename Windows refuses while another program has the file open', () => {
  /** The real file system, with the first `failures` renames answered by `code`. */
  function heldOpen(code: string, failures: number): DurableFs & { tries: number } {
    const fs = {
      ...nodeFs,
      tries: 0,
      async rename(from: string, to: string) {
        fs.tries++;
        if (fs.tries <= failures) throw errno(code);
        await nodeFs.rename(from, to);
      },
    };
    return fs;
  }

  /** A fake clock's sleep: records each wait and returns at once. */
  function fakeSleep(): { waits: number[]; sleep: (ms: number) => Promise<void> } {
    const waits: number[] = [];
    return { waits, sleep: async (ms) => void waits.push(ms) };
  }

  it.each(['EPERM', 'EBUSY', 'EACCES'])(
    'win32, %s twice (an antivirus scanning it): tried again after a short wait, then written',
    async (code) => {
      const fs = heldOpen(code, 2);
      const clock = fakeSleep();
      await writeFileDurably(file, NEW, { fs, platform: 'win32', sleep: clock.sleep });
      expect(readFileSync(file, 'utf8')).toBe(NEW);
      expect(fs.tries).toBe(3);
      expect(clock.waits).toEqual(RENAME_RETRY_DELAYS_MS.slice(0, 2));
      expect(readdirSync(dir)).toEqual(['config.json']);
    },
  );

  it('win32, held open throughout: about a second of tries in all, then the error as before', async () => {
    const fs = heldOpen('EBUSY', Number.POSITIVE_INFINITY);
    const clock = fakeSleep();
    const error = await rejection(
      writeFileDurably(file, NEW, { fs, platform: 'win32', sleep: clock.sleep }),
    );
    expect((error as NodeJS.ErrnoException).code).toBe('EBUSY');
    const waited = clock.waits.reduce((a, b) => a + b, 0);
    expect(waited).toBeGreaterThanOrEqual(800);
    expect(waited).toBeLessThanOrEqual(1200);
    expect(fs.tries).toBe(clock.waits.length + 1);
    expectUntouched();
  });

  it('win32, another error (EXDEV): not tried again', async () => {
    const fs = heldOpen('EXDEV', 1);
    const clock = fakeSleep();
    await rejection(writeFileDurably(file, NEW, { fs, platform: 'win32', sleep: clock.sleep }));
    expect(fs.tries).toBe(1);
    expect(clock.waits).toEqual([]);
    expectUntouched();
  });

  it.each(['linux', 'darwin'] as const)(
    '%s: EACCES from a rename is final at once (a directory the user may not write)',
    async (platform) => {
      const fs = heldOpen('EACCES', 1);
      const clock = fakeSleep();
      await rejection(writeFileDurably(file, NEW, { fs, platform, sleep: clock.sleep }));
      expect(fs.tries).toBe(1);
      expect(clock.waits).toEqual([]);
      expectUntouched();
    },
  );

  it('renameRetrying on its own (the history rotation uses it): win32 retries, linux does not', async () => {
    for (const [platform, tries] of [
      ['win32', 2],
      ['linux', 1],
    ] as const) {
      let calls = 0;
      const fs = {
        rename: async () => {
          calls++;
          if (calls === 1) throw errno('EPERM');
        },
      };
      const outcome = await renameRetrying(fs, 'a', 'b', { platform, sleep: async () => {} }).then(
        () => 'renamed',
        () => 'failed',
      );
      expect(calls, platform).toBe(tries);
      expect(outcome, platform).toBe(platform === 'win32' ? 'renamed' : 'failed');
    }
  });
});
