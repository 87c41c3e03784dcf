/**
 * A bulk run's history batch (history/log.ts): events before the key is loaded wait as objects,
 * later ones are encoded as they come; the file must hold every event once, in the order added,
 * and each line must be the same JSON either way.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/fs/file-lock.js';
import type { HistoryEntry } from '../../src/history/event.js';
import { createHistoryLog } from '../../src/history/log.js';
import { liveProcess, tempDir } from '../kit/index.js';

function entry(i: number): HistoryEntry {
  return {
    time: new Date(Date.UTC(2026, 10, 26, 12, 0, 0, i)),
    profile: 'default',
    baseUrl: 'http://127.0.0.1:1',
    dialect: 'interface',
    userGroupId: `group-${i}`,
    // Multi-byte names: the encoded batch must size its buffer by bytes, not characters.
    name: i % 3 === 0 ? `Müller ${'é'.repeat(i % 50)} ${i}` : `Name ${i}`,
    outcome: 'created',
    token: `token-${i}-${'x'.repeat(40)}`,
  };
}

describe('history batches', () => {
  it('write every event once, in the order added, across the first write (which loads the key) and later encoded batches', async () => {
    const path = join(tempDir('history-batch'), 'history.ndjson');
    const warnings: string[] = [];
    const log = createHistoryLog(
      { path, shared: false },
      { env: {}, warn: (m) => warnings.push(m) },
    );
    const batch = log.batch();
    const count = 6_000;
    for (let i = 0; i < count; i++) {
      batch.add(entry(i));
      // The 2048th event starts the first write; the next ones arrive one at a time while it
      // runs, before and after it has loaded the key (then they must still wait their turn
      // behind the unencoded ones); later batches are encoded as they come.
      if (i >= 2047 && i < 3500) await new Promise((resolve) => setImmediate(resolve));
    }
    await batch.close();
    expect(warnings).toEqual([]);
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    const events = lines.map((line) => JSON.parse(line));
    expect(events.map((e) => e.user_group_id)).toEqual(
      Array.from({ length: count }, (_, i) => `group-${i}`),
    );
    expect(events[0]?.name).toBe(entry(0).name);
    expect(events[5_997]?.name).toBe(entry(5_997).name);
    // One shape for every line, whichever way it was written.
    const keys = Object.keys(events[0] ?? {});
    for (const event of events) expect(Object.keys(event)).toEqual(keys);
    expect(events[count - 1]?.token_last4).toBe('xxxx');
    expect(events[count - 1]?.token_fingerprint).toMatch(/^[0-9a-f]{12}$/);
  });

  it.skipIf(process.platform !== 'linux')(
    'a held lock stalls a run once, not once per batch, and is noted once',
    async () => {
      const dir = tempDir('history-lock');
      const path = join(dir, 'team.ndjson');
      const pid = await liveProcess();
      writeFileSync(`${path}.lock`, `${pid}\n0123456789abcdef\n${processStartTime(pid) ?? ''}\n`);
      const open = () => {
        const warnings: string[] = [];
        const log = createHistoryLog(
          { path, shared: true },
          { env: {}, warn: (m) => warnings.push(m) },
        );
        return { log, warnings };
      };

      // The baseline: one write that waits for the lock and gives up.
      const one = open();
      let started = performance.now();
      await one.log.append([entry(0)]);
      const single = performance.now() - started;
      expect(one.warnings).toHaveLength(1);

      // A run that writes four times (three batches and a single append) waits no longer.
      const run = open();
      started = performance.now();
      for (let b = 0; b < 3; b++) {
        const batch = run.log.batch();
        for (let i = 0; i < 3000; i++) batch.add(entry(b * 3000 + i));
        await batch.close();
      }
      await run.log.append([entry(9_999)]);
      const several = performance.now() - started;
      expect(run.warnings).toHaveLength(1);
      expect(run.warnings[0]).toMatch(
        /^note: history not written: .*\.lock is held by another process/,
      );
      expect(several / single).toBeLessThan(2);
      expect(existsSync(path)).toBe(false);
    },
  );
});
