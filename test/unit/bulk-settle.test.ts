/**
 * The settle loop of a bulk rotation, in-process: a rotation whose answer was lost is checked by
 * reading the group back, and rotated once more only when its token is unchanged. Two safety
 * properties that a whole-suite run did not notice when broken: the results file says `sending`
 * before every re-rotation (a crash then is settled, never rotated blind), and rows that no read
 * could settle never end as `rotated`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BulkOptions, runBulk } from '../../src/bulk/run.js';
import { OutcomeUnknownError } from '../../src/errors.js';
import type { ServiceResult } from '../../src/service.js';
import { bulkSpecs } from '../kit/bulk.js';
import { FakeService, groupResult, makeDeps, rejection } from '../kit/fakes.js';
import { tempDir } from '../kit/index.js';

interface Rec {
  row: number;
  status: string;
  token: string | null;
}

const noTimer = { every: () => () => undefined };

function rotateRun(rows: readonly Record<string, unknown>[]): BulkOptions {
  const dir = tempDir('bulk-settle');
  const from = join(dir, 'rows.ndjson');
  writeFileSync(from, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
  return {
    spec: bulkSpecs.rotate,
    from,
    format: 'ndjson',
    concurrency: 1,
    output: join(dir, 'out.ndjson'),
    resume: false,
    yes: true,
  };
}

function records(path: string): Rec[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Rec);
}

const unchanged = (id: string, token: string): ServiceResult =>
  groupResult({ provided_id: id, name: id, token }, { new_user_group: false });

describe('settling a rotation whose answer was lost', () => {
  it('writes `sending` to the results file before each rotation it sends again', async () => {
    const opts = rotateRun([{ current_token: 't-acme', user_group_id: 'acme', name: 'acme' }]);
    // What the results file said at the moment of each rotation request.
    const seenAtRotation: string[][] = [];
    const service = new FakeService({
      rotate: () => {
        seenAtRotation.push(records(opts.output ?? '').map((rec) => rec.status));
        if (seenAtRotation.length === 1) {
          throw new OutcomeUnknownError('the rotation request was sent but no answer came back');
        }
        return groupResult({ provided_id: 'acme', name: 'acme', token: 'new-acme' });
      },
      // The first rotation did not happen: the group still has the row's token.
      get: () => unchanged('acme', 't-acme'),
    });
    await runBulk(opts, makeDeps({ service }), noTimer);
    expect(service.rotations).toEqual(['t-acme', 't-acme']);
    expect(seenAtRotation).toEqual([['sending'], ['sending', 'sending']]);
    expect(records(opts.output ?? '').at(-1)).toMatchObject({
      status: 'rotated',
      token: 'new-acme',
    });
  });

  it('never records `rotated` for a row whose every read-back saw the token unchanged', async () => {
    const opts = rotateRun([{ current_token: 't-acme', user_group_id: 'acme', name: 'acme' }]);
    const service = new FakeService({
      rotate: () => {
        throw new OutcomeUnknownError('the rotation request was sent but no answer came back');
      },
      get: () => unchanged('acme', 't-acme'),
    });
    const error = await rejection(runBulk(opts, makeDeps({ service }), noTimer));
    expect((error as { exitCode?: number }).exitCode).not.toBe(0);
    const last = records(opts.output ?? '').at(-1);
    expect(last?.status).not.toBe('rotated');
    expect(last?.status).not.toBe('sending');
    expect(last?.token).toBeNull();
  });
});

describe('the journal of a bulk rotation', () => {
  it('has at most --concurrency rows `sending` without an answer at any time', async () => {
    const rows = Array.from({ length: 40 }, (_, i) => ({
      current_token: `t-g${i + 1}`,
      user_group_id: `g${i + 1}`,
      name: `g${i + 1}`,
    }));
    const opts = { ...rotateRun(rows), concurrency: 3 };
    // Rows whose last record was `sending` at the moment of each rotation request.
    let most = 0;
    const service = new FakeService({
      rotate: async (token) => {
        const last = new Map<number, string>();
        for (const rec of records(opts.output ?? '')) last.set(rec.row, rec.status);
        most = Math.max(most, [...last.values()].filter((s) => s === 'sending').length);
        await new Promise((resolve) => setImmediate(resolve));
        const id = token.replace(/^t-/, '');
        return groupResult({ provided_id: id, name: id, token: `new-${id}` });
      },
    });
    await runBulk(opts, makeDeps({ service }), noTimer);
    expect(service.rotations).toHaveLength(40);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(3);
  });
});
