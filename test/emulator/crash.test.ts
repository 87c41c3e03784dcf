import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getUser, type Reply, rotate, userGroup } from './client.js';

// The emulator runs in a child process, so it can be killed with SIGKILL mid-write. Node 20
// cannot run TypeScript, so the test bundles the emulator with esbuild first.
const serverTs = fileURLToPath(new URL('../../src/emulator/server.ts', import.meta.url));
const API = 'crash-customer-token';

const ENTRY = `
import { startEmulator } from ${JSON.stringify(serverTs)};
const dataFile = process.argv[2];
try {
  const emu = await startEmulator({
    port: 0,
    dataFile,
    apiTokens: [{ token: ${JSON.stringify(API)}, environment: 'Customer' }],
  });
  process.stdout.write(JSON.stringify({ url: emu.url }) + '\\n');
} catch (err) {
  process.stderr.write(String(err && err.message) + '\\n');
  process.exit(1);
}
`;

let dir: string;
let bundle: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ugs-emu-crash-'));
  bundle = path.join(dir, 'emulator-child.mjs');
  await build({
    stdin: { contents: ENTRY, loader: 'ts', resolveDir: dir, sourcefile: 'entry.ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: bundle,
    logLevel: 'silent',
  });
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

function spawnEmulator(dataFile: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bundle, dataFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`child did not start: ${err}`)), 5000);
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        clearTimeout(timer);
        resolve({ child, url: (JSON.parse(line) as { url: string }).url });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited with ${code}: ${err}`));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('crash safety', () => {
  it('keeps every acknowledged group and token after kill -9', async () => {
    const dataFile = path.join(dir, 'state.json');
    const first = await spawnEmulator(dataFile);

    // Settled groups: created, and half of them rotated, all acknowledged before the burst.
    const expected = new Map<string, { team_id: number; token: string }>();
    const retired: string[] = [];
    for (let i = 0; i < 20; i++) {
      const g = userGroup(await getUser(first.url, API, { user_group_id: `s${i}`, name: 'S' }));
      expected.set(`s${i}`, g);
    }
    for (let i = 0; i < 10; i++) {
      const before = expected.get(`s${i}`);
      if (!before) throw new Error('missing group');
      const after = userGroup(await rotate(first.url, API, before.token));
      retired.push(before.token);
      expected.set(`s${i}`, after);
    }

    // A steady stream of requests, 8 at a time, that is still running when the process dies.
    const work: { id: string; send: () => Promise<Reply>; onAck: (r: Reply) => void }[] = [];
    for (let i = 10; i < 20; i++) {
      const id = `s${i}`;
      const old = expected.get(id);
      if (!old) throw new Error('missing group');
      work.push({
        id,
        send: () => rotate(first.url, API, old.token),
        onAck: (reply) => {
          retired.push(old.token);
          expected.set(id, userGroup(reply));
        },
      });
    }
    for (let i = 0; i < 300; i++) {
      const id = `b${i}`;
      work.push({
        id,
        send: () => getUser(first.url, API, { user_group_id: id, name: 'B' }),
        onAck: (reply) => expected.set(id, userGroup(reply)),
      });
    }
    const unsure = new Set<string>();
    let acked = 0;
    const killAt = 80;
    const worker = async () => {
      for (let item = work.shift(); item; item = work.shift()) {
        let reply: Reply;
        try {
          reply = await item.send();
        } catch {
          // Sent, maybe applied, never acknowledged: the connection died with the process.
          unsure.add(item.id);
          return;
        }
        item.onAck(reply);
        acked += 1;
        if (acked === killAt) first.child.kill('SIGKILL');
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    await exited(first.child);
    expect(first.child.signalCode).toBe('SIGKILL');
    // The kill must have cut the burst short, or this test proves nothing about a crash.
    expect(unsure.size).toBeGreaterThan(0);
    expect(acked).toBeGreaterThanOrEqual(killAt);

    // The dead child's lock is still there, naming its pid.
    const lock = await readFile(`${dataFile}.lock`, 'utf8');
    expect(lock.split('\n')[0]).toBe(String(first.child.pid));

    // A save cut short leaves a temporary file; the next emulator cleans it up.
    const orphan = path.join(dir, '.state.json.999999.abcdefabcdef.tmp');
    await writeFile(orphan, '{"half": ');
    const second = await spawnEmulator(dataFile);
    await expect(stat(orphan)).rejects.toThrow(/ENOENT/);
    expect(JSON.parse(await readFile(dataFile, 'utf8')).version).toBe(1);
    for (const [id, group] of expected) {
      const reply = await getUser(second.url, API, { user_group_id: id, name: 'again' });
      expect(reply.json?.new_user_group, id).toBe(false);
      const found = userGroup(reply);
      expect(found.team_id, id).toBe(group.team_id);
      // A rotation that was sent but not acknowledged may or may not have happened.
      if (!unsure.has(id)) expect(found.token, id).toBe(group.token);
    }
    for (const old of retired) {
      expect((await rotate(second.url, API, old)).status).toBe(404);
    }
    const maxTeamId = Math.max(...[...expected.values()].map((g) => g.team_id));
    const next = userGroup(await getUser(second.url, API, { user_group_id: 'after', name: 'A' }));
    expect(next.team_id).toBeGreaterThan(maxTeamId);
    second.child.kill('SIGTERM');
    await exited(second.child);
  }, 20_000);
});
