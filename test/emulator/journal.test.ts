import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataFile, loadDataFile, loadStore } from '../../src/emulator/persistence.js';
import {
  getUser,
  type RunningEmulator,
  rotate,
  startEmulator,
  tempDir,
  userGroupOf,
} from '../kit/index.js';

const API = 'journal-api-token';
const apiTokens = [{ token: API, environment: 'Customer' as const }];
const running: RunningEmulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

/** A data file as an earlier run would have left it: `groups` groups, one snapshot. */
function snapshotOf(groups: number): string {
  const user_groups = Array.from({ length: groups }, (_, i) => ({
    team_id: i + 1,
    token: (i + 1).toString(16).padStart(64, '0'),
    name: `Group ${i}`,
    provided_id: `seed-${i}`,
    environment: 'Customer',
    mapping: { schema: 'db' },
    properties: { plan: 'pro', seats: i },
  }));
  return `${JSON.stringify({ version: 1, next_team_id: groups + 1, user_groups }, null, 2)}\n`;
}

/** Milliseconds for `count` creates, one after the other, each acknowledged before the next. */
let runs = 0;
async function timeCreates(dataFile: string, count: number): Promise<number> {
  runs += 1;
  const emu = await startEmulator({ port: 0, dataFile, apiTokens });
  running.push(emu);
  // Warm up the connection and the code paths first.
  for (let i = 0; i < 20; i++)
    await getUser(emu.url, API, { user_group_id: `warm-${runs}-${i}`, name: 'W' });
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const reply = await getUser(emu.url, API, { user_group_id: `new-${runs}-${i}`, name: 'N' });
    expect(reply.json?.new_user_group).toBe(true);
  }
  const elapsed = performance.now() - started;
  await emu.close();
  running.splice(running.indexOf(emu), 1);
  return elapsed;
}

describe('the data file grows by the change, not by the store', () => {
  it('N writes into a store of 50*N groups take about as long as into an empty store', async () => {
    const N = 100;
    // 5,000 groups: the old save rewrote all of them (about 1.2 MB) for every create, many
    // times the cost of appending one line.
    const dir = tempDir('journal-speed');
    const empty = path.join(dir, 'empty');
    const big = path.join(dir, 'big.json');
    await writeFile(big, snapshotOf(50 * N), { mode: 0o600 });
    // Best of three each way, interleaved: the machine is shared, and one noisy run proves
    // little. Each empty run starts on a file of its own.
    let emptyMs = Number.POSITIVE_INFINITY;
    let bigMs = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 3; round++) {
      emptyMs = Math.min(emptyMs, await timeCreates(`${empty}.${round}`, N));
      bigMs = Math.min(bigMs, await timeCreates(big, N));
    }
    expect(bigMs / emptyMs, `${Math.round(bigMs)} ms vs ${Math.round(emptyMs)} ms`).toBeLessThan(3);
  }, 120_000);
});

describe('the data file while the emulator runs', () => {
  it('appends one line per change to the same file, never rewriting the snapshot', async () => {
    const dir = tempDir('journal-append');
    const dataFile = path.join(dir, 'state.json');
    await writeFile(dataFile, snapshotOf(2000), { mode: 0o600 });
    const before = await stat(dataFile);
    const emu = await startEmulator({ port: 0, dataFile, apiTokens });
    running.push(emu);
    const created = userGroupOf(await getUser(emu.url, API, { user_group_id: 'x', name: 'X' }));
    const rotated = userGroupOf(await rotate(emu.url, API, created.token));
    const after = await stat(dataFile);
    // The same file, longer by two short lines: not a new copy of 2,000 groups per change.
    expect(after.ino).toBe(before.ino);
    expect(after.size - before.size).toBeGreaterThan(0);
    expect(after.size - before.size).toBeLessThan(1024);
    expect(after.mode & 0o777).toBe(0o600);
    const text = await readFile(dataFile, 'utf8');
    const lines = text
      .slice(text.length - (after.size - before.size))
      .trimEnd()
      .split('\n');
    expect(lines.map((line) => JSON.parse(line).op)).toEqual(['create', 'rotate']);
    expect(rotated.token).not.toBe(created.token);
  });

  it('a copy taken mid-run (as a crash leaves it) has every acknowledged change; a torn last line is dropped', async () => {
    const dir = tempDir('journal-crash');
    const dataFile = path.join(dir, 'state.json');
    const emu = await startEmulator({ port: 0, dataFile, apiTokens });
    running.push(emu);
    const groups = [];
    for (let i = 0; i < 5; i++) {
      groups.push(userGroupOf(await getUser(emu.url, API, { user_group_id: `c${i}`, name: 'C' })));
    }
    const rotated = userGroupOf(await rotate(emu.url, API, groups[0]?.token ?? ''));
    // What the disk holds if the process dies now, plus half a line of a change never answered.
    const copy = path.join(dir, 'copy.json');
    await writeFile(copy, `${await readFile(dataFile, 'utf8')}{"op":"create","gro`, {
      mode: 0o600,
    });
    const again = await startEmulator({ port: 0, dataFile: copy, apiTokens });
    running.push(again);
    for (const [i, group] of groups.entries()) {
      const reply = await getUser(again.url, API, { user_group_id: `c${i}`, name: 'C' });
      expect(reply.json?.new_user_group).toBe(false);
      expect(userGroupOf(reply).token).toBe(i === 0 ? rotated.token : group.token);
    }
    expect((await rotate(again.url, API, groups[0]?.token ?? '')).status).toBe(404);
    const next = userGroupOf(await getUser(again.url, API, { user_group_id: 'n', name: 'N' }));
    expect(next.team_id).toBe(6);
    // Rewritten at start as a bare snapshot: plain JSON again, the torn line gone.
    await again.close();
    running.splice(running.indexOf(again), 1);
    expect(JSON.parse(await readFile(copy, 'utf8')).user_groups).toHaveLength(6);
  });

  it('rewrites, rather than appends to, a file whose bytes are not the text read (invalid UTF-8)', async () => {
    const dir = tempDir('journal-bytes');
    const dataFile = path.join(dir, 'state.json');
    // A name with a byte that is not UTF-8: read as U+FFFD, one byte on disk, three in memory.
    const [before, after] = snapshotOf(1).split('Group 0');
    await writeFile(
      dataFile,
      Buffer.concat([
        Buffer.from(`${before}Group `),
        Buffer.from([0xff]),
        Buffer.from(after ?? ''),
      ]),
    );
    const emu = await startEmulator({ port: 0, dataFile, apiTokens });
    running.push(emu);
    const reply = await getUser(emu.url, API, { user_group_id: 'x', name: 'X' });
    expect(reply.status).toBe(200);
    const saved = (await loadStore(dataFile)).toJSON();
    expect(saved.user_groups.map((g) => g.provided_id)).toEqual(['seed-0', 'x']);
    expect(saved.user_groups[0]?.name).toBe('Group \ufffd');
  });

  it('refuses a file whose change in the middle is not JSON, and leaves it untouched', async () => {
    const dir = tempDir('journal-corrupt');
    const dataFile = path.join(dir, 'state.json');
    const content = `${snapshotOf(1)}{"op":"rotate","team_id":1,"tok\n{"op":"rotate","team_id":1,"token":"ab"}\n`;
    await writeFile(dataFile, content, { mode: 0o600 });
    const attempt = startEmulator({ port: 0, dataFile, apiTokens });
    await expect(attempt).rejects.toThrow(
      /corrupt \(change 1 after the snapshot is not valid JSON/,
    );
    expect(await readFile(dataFile, 'utf8')).toBe(content);
  });

  it.each([
    ['a rotation of a group that does not exist', '{"op":"rotate","team_id":9,"token":"ab"}'],
    [
      'a create with a taken team_id',
      `{"op":"create","group":${JSON.stringify({ team_id: 1, token: 'cd', name: 'n', provided_id: 'p', environment: 'Customer', mapping: {}, properties: null })}}`,
    ],
    [
      'a create that reuses a token',
      `{"op":"create","group":${JSON.stringify({ team_id: 2, token: '1'.padStart(64, '0'), name: 'n', provided_id: 'p', environment: 'Customer', mapping: {}, properties: null })}}`,
    ],
    ['an unknown change', '{"op":"merge","team_id":1}'],
    ['a deletion of a group that does not exist', '{"op":"delete","team_id":9}'],
  ])('refuses %s after the snapshot', async (_label, line) => {
    const dir = tempDir('journal-invalid');
    const dataFile = path.join(dir, 'state.json');
    const content = `${snapshotOf(1)}${line}\n`;
    await writeFile(dataFile, content, { mode: 0o600 });
    await expect(startEmulator({ port: 0, dataFile, apiTokens })).rejects.toThrow(/is corrupt/);
    expect(await readFile(dataFile, 'utf8')).toBe(content);
  });

  it('rewrites the file as a snapshot once the changes outgrow it, so it stays in proportion', async () => {
    const dir = tempDir('journal-compact');
    const dataFile = path.join(dir, 'state.json');
    const loaded = await loadDataFile(dataFile);
    const file = new DataFile(dataFile, loaded.store, loaded, 4096);
    const sizes: number[] = [];
    // Rewrites are counted as changes of inode from one save to the next: a freed inode number
    // can be given to a later file, so distinct numbers would undercount (the new file is made
    // while the old one still exists, so a rewrite never keeps its inode).
    let rewrites = 0;
    let inode: number | undefined;
    for (let i = 0; i < 300; i++) {
      loaded.store.getOrCreate('Customer', {
        userGroupId: `g${i}`,
        name: 'G',
        mapping: undefined,
        properties: { i },
      });
      await file.save();
      const now = await stat(dataFile);
      sizes.push(now.size);
      if (inode !== undefined && now.ino !== inode) rewrites++;
      inode = now.ino;
    }
    await file.close();
    // A rewrite is a new file renamed into place. Each waits for the changes to outgrow the
    // snapshot, so there are a few (the snapshot doubles each time), not one per change.
    expect(rewrites).toBeGreaterThan(1);
    expect(rewrites).toBeLessThan(20);
    const snapshot = (await loadStore(dataFile)).toJSON();
    expect(snapshot.user_groups).toHaveLength(300);
    const snapshotBytes = `${JSON.stringify(snapshot, null, 2)}\n`.length;
    expect(Math.max(...sizes)).toBeLessThan(2 * snapshotBytes + 4096);
  });
});
