/**
 * `runBulk` in-process: a bulk run as one job of a pipeline. A results file belongs to one job
 * (appending a second run without --resume is refused), a service that is down stops the run
 * early, and `rotate --from` reads ugs's own results files.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBulk } from '../../src/bulk/run.js';
import { UsageError } from '../../src/errors.js';
import type { GetUserRequest } from '../../src/operations/get-user/operation.js';
import type { ServiceResult } from '../../src/service/service.js';
import { bulkOptions, bulkSpecs } from '../kit/bulk.js';
import { FakeService, groupResult, makeDeps, rejection } from '../kit/fakes.js';
import { tempDir } from '../kit/index.js';

const noTimer = { every: () => () => undefined };

function file(name: string, text: string): string {
  const path = join(tempDir('bulk-jobs'), name);
  writeFileSync(path, text);
  return path;
}

function ndjson(rows: readonly Record<string, unknown>[]): string {
  return rows.map((row) => `${JSON.stringify(row)}\n`).join('');
}

const options = bulkOptions;

function found(request: GetUserRequest): ServiceResult {
  return groupResult(
    {
      provided_id: request.user_group_id,
      name: request.name,
      token: `tok-${request.user_group_id}`,
    },
    { new_user_group: false },
  );
}

const getRows = ndjson([
  { user_group_id: 'acme', name: 'Acme' },
  { user_group_id: 'globex', name: 'Globex' },
]);

describe('a results file belongs to one job (--output without --resume)', () => {
  it.each([
    ['get', 'out.ndjson'],
    ['get', 'out.csv'],
    ['rotate', 'out.ndjson'],
    ['rotate', 'out.csv'],
  ] as const)(
    '%s: an --output %s that holds records is exit 2, nothing sent, file untouched',
    async (kind, name) => {
      const from =
        kind === 'get'
          ? file('rows.ndjson', getRows)
          : file('tokens.ndjson', ndjson([{ current_token: 't-acme-0123456789' }]));
      const service = new FakeService({
        get: found,
        rotate: () => groupResult({ token: 'new-acme-0123456789' }),
      });
      const deps = makeDeps({ service });
      const out = join(tempDir('bulk-jobs'), name);
      // A first run writes the file (the first job).
      await runBulk(options(kind, from, out), deps, noTimer);
      const sent = service.gets.length + service.rotations.length;
      const before = readFileSync(out, 'utf8');
      // The same command again (a retried CI job) without --resume.
      const error = await rejection(runBulk(options(kind, from, out), deps, noTimer));
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).exitCode).toBe(2);
      expect((error as Error).message).toContain(out);
      expect((error as Error).message).toMatch(/already holds the results of an earlier run/);
      expect((error as UsageError).hint).toMatch(/--resume/);
      expect((error as UsageError).hint).toMatch(/new --output file/);
      expect(service.gets.length + service.rotations.length).toBe(sent);
      expect(readFileSync(out, 'utf8')).toBe(before);
      // --resume continues that job: nothing done is sent again.
      await runBulk(options(kind, from, out, { resume: true }), deps, noTimer);
      expect(service.gets.length + service.rotations.length).toBe(sent);
    },
  );

  it('an empty file, or a CSV file with only the header, holds no records: the run writes to it', async () => {
    const from = file('rows.ndjson', getRows);
    const service = new FakeService({ get: found });
    const empty = file('empty.ndjson', '');
    await runBulk(options('get', from, empty), makeDeps({ service }), noTimer);
    const header = file('header.csv', `${bulkSpecs.get.records.columns.join(',')}\n`);
    await runBulk(options('get', from, header), makeDeps({ service }), noTimer);
    expect(service.gets).toHaveLength(4);
    expect(readFileSync(header, 'utf8').trim().split('\n')).toHaveLength(3);
  });

  it('a torn line left by a killed run counts as records', async () => {
    const from = file('rows.ndjson', getRows);
    const service = new FakeService({ get: found });
    const out = file('torn.ndjson', '{"row":1,"user_group_id":"ac');
    const error = await rejection(
      runBulk(options('get', from, out), makeDeps({ service }), noTimer),
    );
    expect((error as UsageError).exitCode).toBe(2);
    expect(service.gets).toHaveLength(0);
  });
});

describe("rotate --from reads ugs's own results files", () => {
  /** Rotates `tok-X` (or `tok-X-rN`) to the next `-rN+1` of group X. */
  function rotatingService() {
    return new FakeService({
      get: found,
      rotate: (token) => {
        const [id, round] = token.replace(/^tok-/, '').split('-r');
        return groupResult({
          provided_id: id,
          name: id,
          token: `tok-${id}-r${Number(round ?? 0) + 1}`,
        });
      },
    });
  }

  it('get results (NDJSON), then rotate results (CSV): each row rotated from its last token', async () => {
    const service = rotatingService();
    const deps = makeDeps({ service });
    const got = join(tempDir('bulk-jobs'), 'provisioned.ndjson');
    await runBulk(options('get', file('rows.ndjson', getRows), got), deps, noTimer);

    const rotated = join(tempDir('bulk-jobs'), 'rotated.csv');
    await runBulk(options('rotate', got, rotated), deps, noTimer);
    expect(service.rotations.sort()).toEqual(['tok-acme', 'tok-globex']);

    // The rotate results (CSV, `sending` records before each outcome) as the next input.
    const again = join(tempDir('bulk-jobs'), 'again.ndjson');
    await runBulk(options('rotate', rotated, again, { format: 'csv' }), deps, noTimer);
    expect(service.rotations.slice(2).sort()).toEqual(['tok-acme-r1', 'tok-globex-r1']);
    const recs = readFileSync(again, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((rec) => rec.status !== 'sending')
      .sort((a, b) => Number(a.row) - Number(b.row));
    expect(
      recs.map((rec) => [rec.row, rec.user_group_id, rec.name, rec.status, rec.token]),
    ).toEqual([
      [1, 'acme', 'Acme', 'rotated', 'tok-acme-r2'],
      [2, 'globex', 'Globex', 'rotated', 'tok-globex-r2'],
    ]);
  });

  it('rows whose last status is not created, found or rotated are refused with their row numbers, nothing sent', async () => {
    const results = file(
      'mixed.ndjson',
      ndjson([
        { row: 1, user_group_id: 'acme', name: 'Acme', status: 'created', token: 'tok-acme' },
        { row: 2, user_group_id: 'globex', name: 'Globex', status: 'failed', token: null },
        { row: 3, user_group_id: 'initech', name: 'Initech', status: 'sending', token: null },
        { row: 4, user_group_id: 'umbrella', name: 'U', status: 'found', token: 'tok-umbrella' },
        { row: 2, user_group_id: 'globex', name: 'Globex', status: 'skipped', token: null },
      ]),
    );
    const service = rotatingService();
    const error = await rejection(
      runBulk(
        options('rotate', results, join(tempDir('bulk-jobs'), 'out.ndjson')),
        makeDeps({ service }),
        noTimer,
      ),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    const message = (error as Error).message;
    expect(message).toMatch(/row 2 \(line 5\): its last status in the results is "skipped"/);
    expect(message).toMatch(/row 3 \(line 3\): its last status in the results is "sending"/);
    expect(message).not.toMatch(/row [14] /);
    expect(message).not.toMatch(/unknown field/);
    expect(service.rotations).toEqual([]);
  });
});
