import { readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadStore } from '../../src/emulator/persistence.js';
import { EmulatorStartError } from '../../src/emulator/server.js';
import { Store } from '../../src/emulator/store.js';
import {
  getUser,
  logLines,
  type RunningEmulator,
  rotate,
  startEmulator,
  tempDir,
  userGroupOf,
  withTimersStopped,
} from '../kit/index.js';

const apiTokens = [
  { token: 'customer-api-token', environment: 'Customer' as const },
  { token: 'testing-api-token', environment: 'Testing' as const },
];

let dir: string;
let dataFile: string;
const running: RunningEmulator[] = [];

async function start(): Promise<RunningEmulator> {
  const emu = await startEmulator({ port: 0, dataFile, apiTokens });
  running.push(emu);
  return emu;
}

beforeEach(async () => {
  dir = tempDir('emulator');
  dataFile = path.join(dir, 'state.json');
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('persistence', () => {
  it('remembers replaced tokens across a restart, so the access log still says whose they were', async () => {
    const first = await start();
    const group = userGroupOf(
      await getUser(first.url, 'customer-api-token', { user_group_id: 'kept', name: 'K' }),
    );
    await rotate(first.url, 'customer-api-token', group.token);
    await first.close();

    const lines: string[] = [];
    const second = await startEmulator({
      port: 0,
      dataFile,
      apiTokens,
      log: (line) => lines.push(line),
    });
    running.push(second);
    const spent = await rotate(second.url, 'customer-api-token', group.token);
    expect(spent.status).toBe(404);
    expect(spent.json).toEqual({ success: 0, detail: 'Not found.' });
    await logLines(lines, 1);
    expect(lines[0]).toMatch(
      new RegExp(
        `refused id="kept" token=…${group.token.slice(-4)} was rotated before \\(\\d{4}-[^)]+Z\\): a previous token of this group$`,
      ),
    );
    // The data file knows it by its SHA-256, never the token itself.
    await second.close();
    const saved = (await loadStore(dataFile)).toJSON();
    expect(saved.previous_tokens?.map((p) => p.provided_id)).toEqual(['kept']);
    expect(await readFile(dataFile, 'utf8')).not.toContain(group.token);
  });

  it('keeps groups, tokens and the team_id counter across a restart', async () => {
    const first = await start();
    const a = userGroupOf(
      await getUser(first.url, 'customer-api-token', {
        user_group_id: 'a',
        name: 'A',
        mapping: { s: 'd' },
        properties: { tier: 1 },
      }),
    );
    const b = userGroupOf(
      await getUser(first.url, 'testing-api-token', { user_group_id: 'a', name: 'B' }),
    );
    const rotated = userGroupOf(await rotate(first.url, 'testing-api-token', b.token));
    await first.close();

    const second = await start();
    const a2 = await getUser(second.url, 'customer-api-token', { user_group_id: 'a', name: 'x' });
    expect(a2.json?.new_user_group).toBe(false);
    // Name and properties echo the request (Get User rules 1 and 3); token and team_id persist.
    expect(userGroupOf(a2)).toEqual({ ...a, name: 'x', properties: null });
    const b2 = userGroupOf(
      await getUser(second.url, 'testing-api-token', { user_group_id: 'a', name: 'x' }),
    );
    expect(b2).toEqual({ ...b, name: 'x', token: rotated.token });
    expect((await rotate(second.url, 'testing-api-token', b.token)).status).toBe(404);

    const c = userGroupOf(
      await getUser(second.url, 'customer-api-token', { user_group_id: 'c', name: 'C' }),
    );
    expect(c.team_id).toBe(b.team_id + 1);
  });

  it('writes the data file with mode 0600 and no leftover temp files', async () => {
    const emu = await start();
    await getUser(emu.url, 'customer-api-token', { user_group_id: 'a', name: 'A' });
    expect((await stat(dataFile)).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(await readFile(dataFile, 'utf8'));
    expect(saved.user_groups).toHaveLength(1);
    expect((await readdir(dir)).sort()).toEqual(['state.json', 'state.json.lock']);
  });

  it('answers only after the change is on disk', async () => {
    const emu = await start();
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        getUser(emu.url, 'customer-api-token', { user_group_id: `g${i}`, name: 'n' }),
      ),
    );
    // Read while the emulator still runs (snapshot and the changes after it): every
    // acknowledged group must already be there.
    const saved = (await loadStore(dataFile)).toJSON();
    const tokens = new Set(saved.user_groups.map((g) => g.token));
    for (const reply of replies) expect(tokens.has(userGroupOf(reply).token)).toBe(true);
  });

  it('refuses a second emulator on the same data file while the first runs', async () => {
    await start();
    const attempt = startEmulator({ port: 0, dataFile, apiTokens });
    await expect(attempt).rejects.toThrow(EmulatorStartError);
    await expect(attempt).rejects.toThrow(`in use by another emulator (pid ${process.pid})`);
  });

  it('releases the lock on close', async () => {
    const first = await start();
    await first.close();
    await expect(stat(`${dataFile}.lock`)).rejects.toThrow(/ENOENT/);
    const second = await start();
    expect(second.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('takes over a stale lock left by a dead process', async () => {
    await writeFile(`${dataFile}.lock`, '999999\n');
    const emu = await start();
    expect(
      (await getUser(emu.url, 'customer-api-token', { user_group_id: 'a', name: 'A' })).status,
    ).toBe(200);
    expect((await readFile(`${dataFile}.lock`, 'utf8')).split('\n')[0]).toBe(String(process.pid));
  });

  it.each([
    ['not JSON', '{"version": 1, "next_team_id": '],
    ['empty', ''],
    ['the wrong shape', '{"version": 1, "next_team_id": 1, "user_groups": {}}'],
    [
      'a duplicated token',
      JSON.stringify({
        version: 1,
        next_team_id: 3,
        user_groups: [1, 2].map((n) => ({
          team_id: n,
          token: 'same',
          name: 'n',
          provided_id: `p${n}`,
          environment: 'Customer',
          mapping: {},
          properties: null,
        })),
      }),
    ],
  ])('refuses a data file that is %s and leaves it untouched', async (_label, content) => {
    await writeFile(dataFile, content, { mode: 0o644 });
    const attempt = startEmulator({ port: 0, dataFile, apiTokens });
    await expect(attempt).rejects.toThrow(EmulatorStartError);
    await expect(attempt).rejects.toThrow(dataFile);
    expect(await readFile(dataFile, 'utf8')).toBe(content);
    // A failed start must not keep the lock.
    await expect(stat(`${dataFile}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it('reports a port in use as a start error and keeps no lock', async () => {
    const first = await startEmulator({ port: 0, apiTokens });
    running.push(first);
    const port = Number(new URL(first.url).port);
    const attempt = startEmulator({ port, dataFile, apiTokens });
    await expect(attempt).rejects.toThrow(EmulatorStartError);
    await expect(attempt).rejects.toThrow(`port ${port} is already in use`);
    await expect(stat(`${dataFile}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it('a lock naming this very process, left by a previous incarnation, is taken over', async () => {
    // After a container restart the emulator can get the pid its dead predecessor had.
    await writeFile(`${dataFile}.lock`, `${process.pid}\n0123456789abcdef\n`);
    const emu = await start();
    expect(
      (await getUser(emu.url, 'customer-api-token', { user_group_id: 'a', name: 'A' })).status,
    ).toBe(200);
  });

  it('refuses a symlinked data file and writes nothing through it', async () => {
    const target = path.join(dir, 'elsewhere.json');
    await writeFile(target, 'precious');
    await symlink(target, dataFile);
    const attempt = startEmulator({ port: 0, dataFile, apiTokens });
    await expect(attempt).rejects.toThrow(EmulatorStartError);
    await expect(attempt).rejects.toThrow(/symbolic link/);
    expect(await readFile(target, 'utf8')).toBe('precious');
    await expect(stat(`${dataFile}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it('refuses a symlinked lock file', async () => {
    const target = path.join(dir, 'lock-target');
    await writeFile(target, 'precious');
    await symlink(target, `${dataFile}.lock`);
    const attempt = startEmulator({ port: 0, dataFile, apiTokens });
    await expect(attempt).rejects.toThrow(/symbolic link/);
    expect(await readFile(target, 'utf8')).toBe('precious');
  });

  it('removes temp files of every pattern a killed save may have left, and nothing else', async () => {
    const orphans = [
      'state.json.tmp-4242-abcdefabcdef',
      'state.json.tmp-1732000000a1b2c3',
      '.state.json.4242.abcdefabcdef.tmp',
    ];
    for (const name of orphans) await writeFile(path.join(dir, name), '{"half": ');
    await writeFile(path.join(dir, 'state.json.tmp-mine'), 'x');
    const emu = await start();
    await getUser(emu.url, 'customer-api-token', { user_group_id: 'a', name: 'A' });
    expect((await readdir(dir)).sort()).toEqual([
      'state.json',
      'state.json.lock',
      'state.json.tmp-mine',
    ]);
  });

  it('a save that throws synchronously fails that request only; the next one saves; close is quick', async () => {
    const emu = await start();
    const api = 'customer-api-token';
    expect((await getUser(emu.url, api, { user_group_id: 'a', name: 'A' })).status).toBe(200);
    // A change JSON.stringify cannot serialise (what a deeply nested body once caused).
    const toJSON = vi.spyOn(Store.prototype, 'changeLine').mockImplementationOnce(() => {
      throw new RangeError('Maximum call stack size exceeded');
    });
    try {
      const failed = await getUser(emu.url, api, { user_group_id: 'b', name: 'B' });
      expect(failed.status).toBe(500);
      // Not a change of its own, so before the fix it got the stuck failure again.
      const again = await getUser(emu.url, api, { user_group_id: 'b', name: 'B' });
      expect(again.status).toBe(200);
      expect((await loadStore(dataFile)).size).toBe(2);
    } finally {
      toJSON.mockRestore();
    }
    // Quick: without waiting on a timer (drain()'s limit), which a stopped clock makes endless.
    await withTimersStopped('close() after a failed save', () => emu.close());
  });

  it('a failed save as the last thing before shutdown does not keep close from finishing', async () => {
    const emu = await start();
    const fail = () => {
      throw new TypeError('Converting circular structure to JSON');
    };
    // The change cannot be written, nor the snapshot a clean stop writes.
    const changeLine = vi.spyOn(Store.prototype, 'changeLine').mockImplementation(fail);
    const toJSON = vi.spyOn(Store.prototype, 'toJSON').mockImplementation(fail);
    try {
      const failed = await getUser(emu.url, 'customer-api-token', {
        user_group_id: 'c',
        name: 'C',
      });
      expect(failed.status).toBe(500);
      await withTimersStopped('close() after a failed last save', () => emu.close());
    } finally {
      changeLine.mockRestore();
      toJSON.mockRestore();
    }
  });
});
