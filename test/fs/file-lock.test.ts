/**
 * The one lock for the config and the emulator's data file: who counts as its holder (a dead
 * pid, a reused pid, this very process), and that taking over a stale lock has one winner.
 */
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  breakStaleLock,
  FileLock,
  HEARTBEAT_MS,
  isHeld,
  LockBusyError,
  type LockHost,
  OTHER_HOST_STALE_AFTER_MS,
  parseLock,
  processStartTime,
  STALE_AFTER_MS,
} from '../../src/fs/file-lock.js';
import { liveProcess, tempDir } from '../kit/binary.js';
import { rejection } from '../kit/fakes.js';

const linux = process.platform === 'linux';
let dir: string;
let file: string;

beforeEach(() => {
  dir = tempDir('lock');
  file = join(dir, 'data.json');
});

/** A process's argv and state as /proc has them, for a failure message. */
function procOf(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    const state = /^State:.*$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[0];
    return `pid ${pid} argv [${argv}] ${state ?? ''}`;
  } catch (error) {
    return `pid ${pid}: ${(error as Error).message}`;
  }
}

describe('FileLock', () => {
  it('writes pid, nonce and start time, and leaves nothing after release', async () => {
    const lock = await FileLock.acquire(file);
    const owner = parseLock(readFileSync(`${file}.lock`, 'utf8'));
    expect(owner?.pid).toBe(process.pid);
    expect(owner?.nonce).toMatch(/^[0-9a-f]{16}$/);
    if (linux) expect(owner?.startTime).toBe(processStartTime(process.pid));
    expect(isHeld(owner ?? { pid: 0 })).toBe(true);
    await lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a second lock in this process is busy (named as this process) until the first is released', async () => {
    const first = await FileLock.acquire(file);
    const error = await rejection(FileLock.acquire(file));
    expect(error).toBeInstanceOf(LockBusyError);
    expect((error as LockBusyError).owner.pid).toBe(process.pid);
    expect((error as Error).message).toMatch(/this process/);
    await first.release();
    const second = await FileLock.acquire(file);
    await second.release();
  });

  it('a lock with this pid but a nonce this process does not hold is a previous incarnation: stale', () => {
    expect(isHeld({ pid: process.pid, nonce: 'ffffffffffffffff' })).toBe(false);
    expect(isHeld({ pid: process.pid })).toBe(false);
  });

  it.skipIf(!linux)('a live pid with another start time is a reused pid: stale', async () => {
    const pid = await liveProcess([]);
    const start = processStartTime(pid);
    expect(start).toMatch(/^\d+$/);
    expect(isHeld({ pid, startTime: start ?? '' })).toBe(true);
    expect(isHeld({ pid, startTime: String(Number(start) + 1) })).toBe(false);
  });

  it.skipIf(!linux)(
    'an old pid-only lock is held only while its pid runs something called ugs',
    async () => {
      // Failed once in a full run (the third case said false) and never alone, also on a loaded
      // machine: the message says what /proc showed, for the next time.
      const held = async (args: string[]) => {
        const pid = await liveProcess(args);
        return { held: isHeld({ pid }), seen: procOf(pid) };
      };
      const cases: [string[], boolean][] = [
        [['ugs', 'login'], true],
        [['something-else'], false],
        [['/usr/lib/node_modules/ugs/bin/ugs.js'], true],
        // The letters in a folder name are not ugs (a Node unpacked under /tmp/ugs-node-versions).
        [['/home/bugs/ugs-tools/other.js'], false],
      ];
      for (const [args, expected] of cases) {
        const { held: result, seen } = await held(args);
        expect(result, `${args.join(' ')}: ${seen}`).toBe(expected);
      }
    },
  );

  it('two takers that judged the same lock stale: the second does not remove the winner’s lock', async () => {
    const stale = '2147483646\n0123456789abcdef\n1\n';
    writeFileSync(`${file}.lock`, stale);
    // Taker A breaks the stale lock and takes the lock.
    await breakStaleLock(`${file}.lock`, stale);
    const winner = await FileLock.acquire(file);
    const held = readFileSync(`${file}.lock`, 'utf8');
    // Taker B acts on what it saw before A won.
    await breakStaleLock(`${file}.lock`, stale);
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(held);
    await winner.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('many acquirers racing over a stale lock: never two holders at once', async () => {
    // Several rounds: the window (a lock linked by one acquirer, read by another in this process
    // before the first one's continuation runs) is narrow.
    for (let round = 0; round < 8; round++) {
      writeFileSync(`${file}.lock`, '2147483646\n');
      let holders = 0;
      let most = 0;
      let done = 0;
      await Promise.all(
        Array.from({ length: 12 }, async () => {
          const lock = await FileLock.acquire(file, { waitMs: 15_000 });
          holders++;
          most = Math.max(most, holders);
          await new Promise((r) => setTimeout(r, 2));
          holders--;
          done++;
          await lock.release();
        }),
      );
      expect(done).toBe(12);
      expect(most).toBe(1);
      expect(readdirSync(dir)).toEqual([]);
    }
  }, 60_000);

  it('release leaves a lock that is no longer ours', async () => {
    const lock = await FileLock.acquire(file);
    writeFileSync(`${file}.lock`, 'someone else\n');
    await lock.release();
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe('someone else\n');
  });

  it('removes lock temp files a killed process left (older than a minute), not fresh ones', async () => {
    const old = ['data.json.lock.tmp-1-abcdefabcdef', 'data.json.lock.break.tmp-1-abcdefabcdef'];
    const past = new Date(Date.now() - 120_000);
    for (const name of old) {
      writeFileSync(join(dir, name), '1\n');
      utimesSync(join(dir, name), past, past);
    }
    writeFileSync(join(dir, 'data.json.lock.tmp-2-abcdefabcdef'), '2\n');
    const lock = await FileLock.acquire(file);
    await lock.release();
    expect(readdirSync(dir)).toEqual(['data.json.lock.tmp-2-abcdefabcdef']);
  });
});

describe('stale locks told by host, pid and heartbeat', () => {
  /** A fixed point for the lock's mtime; the fake clock counts from it. */
  const T0 = 1_700_000_000_000;
  const lockPath = () => `${file}.lock`;

  /** A lock file as another run wrote it, its heartbeat last refreshed at T0. */
  function writeLock(lines: string[]): string {
    const content = `${lines.join('\n')}\n`;
    writeFileSync(lockPath(), content);
    utimesSync(lockPath(), new Date(T0), new Date(T0));
    return content;
  }

  /** A host whose clock reads T0 + `afterMs`, with heartbeats only when the test beats them. */
  function fakeHost(
    platform: NodeJS.Platform,
    afterMs: number,
  ): Partial<LockHost> & { beats: (() => Promise<void>)[]; stopped: number } {
    const host = {
      platform,
      hostname: 'this-host',
      now: () => T0 + afterMs,
      beats: [] as (() => Promise<void>)[],
      stopped: 0,
      every: (_ms: number, beat: () => Promise<void>) => {
        host.beats.push(beat);
        return () => void host.stopped++;
      },
    };
    return host;
  }

  it.each(['darwin', 'win32'] as const)(
    '%s: a crashed run whose pid another program now has: taken over once its heartbeat is old, not before',
    async (platform) => {
      // The pid runs (its name even looks like ugs), and nothing on this platform can tell
      // whether it is the process that wrote the lock.
      const pid = await liveProcess(['ugs', 'get']);
      const lines = [String(pid), '0123456789abcdef', '', 'this-host'];
      writeLock(lines);
      const fresh = await rejection(
        FileLock.acquire(file, { host: fakeHost(platform, STALE_AFTER_MS - 1_000) }),
      );
      expect(fresh).toBeInstanceOf(LockBusyError);

      const lock = await FileLock.acquire(file, {
        host: fakeHost(platform, STALE_AFTER_MS + 1_000),
      });
      expect(parseLock(readFileSync(lockPath(), 'utf8'))?.pid).toBe(process.pid);
      await lock.release();
      expect(readdirSync(dir)).toEqual([]);
    },
  );

  it.each(['darwin', 'win32', 'linux'] as const)(
    '%s: a lock of another host (a shared folder) is never taken over while its heartbeat is fresh',
    async (platform) => {
      // That pid runs nothing here: it means nothing for a process on another machine.
      writeLock(['2147483646', '0123456789abcdef', '', 'other-host']);
      const fresh = await rejection(
        FileLock.acquire(file, { host: fakeHost(platform, OTHER_HOST_STALE_AFTER_MS - 1_000) }),
      );
      expect(fresh).toBeInstanceOf(LockBusyError);
      expect((fresh as Error).message).toMatch(/held by process 2147483646 on other-host$/);

      const host = fakeHost(platform, OTHER_HOST_STALE_AFTER_MS + 1_000);
      const lock = await FileLock.acquire(file, { host });
      await lock.release();
    },
  );

  it.each(['darwin', 'win32', 'linux'] as const)(
    '%s: a lock of this host whose pid is gone is taken over at once, heartbeat fresh or not',
    async (platform) => {
      writeLock(['2147483646', '0123456789abcdef', '', 'this-host']);
      const lock = await FileLock.acquire(file, { host: fakeHost(platform, 0) });
      await lock.release();
    },
  );

  it('the holder refreshes the mtime while it holds the lock, and stops when it lets go', async () => {
    let after = 0;
    const host = fakeHost('darwin', 0);
    host.now = () => T0 + after;
    const lock = await FileLock.acquire(file, { host });
    expect(host.beats).toHaveLength(1);
    const beat = host.beats[0] ?? (async () => {});
    utimesSync(lockPath(), new Date(T0), new Date(T0));
    after = 4 * HEARTBEAT_MS;
    await beat();
    expect(statSync(lockPath()).mtimeMs).toBeCloseTo(T0 + 4 * HEARTBEAT_MS, -3);
    // So another run's judge, on the same clock, finds it alive.
    const other = await rejection(
      FileLock.acquire(file, { host: fakeHost('darwin', after + 1_000) }),
    );
    expect(other).toBeInstanceOf(LockBusyError);
    await lock.release();
    expect(host.stopped).toBe(1);
  });

  it('a heartbeat never touches a lock that is no longer its own', async () => {
    const host = fakeHost('win32', 10 * HEARTBEAT_MS);
    const lock = await FileLock.acquire(file, { host });
    const theirs = writeLock(['2147483645', 'fedcba9876543210', '', 'this-host']);
    await host.beats[0]?.();
    expect(statSync(lockPath()).mtimeMs).toBe(T0);
    expect(readFileSync(lockPath(), 'utf8')).toBe(theirs);
    await lock.release();
  });

  it('writes its host name as the fourth line; earlier locks without one count as this host', async () => {
    const lock = await FileLock.acquire(file, { host: fakeHost('win32', 0) });
    expect(parseLock(readFileSync(lockPath(), 'utf8'))?.host).toBe('this-host');
    await lock.release();
    expect(parseLock('123\nabc\n\n')?.host).toBeUndefined();
  });
});
