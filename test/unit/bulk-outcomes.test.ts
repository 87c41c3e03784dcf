/**
 * `runBulk` in-process: outcomes a row's answer can come to beyond "done" and "failed" — an
 * answer for another group (`mismatch`), a rotation that hands back the token sent, a row settled
 * by reading its group back — and how they count in the exit and the summary.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BulkOptions, runBulk } from '../../src/bulk/run.js';
import { ApiError, NetworkError, OutcomeUnknownError } from '../../src/errors.js';
import type { ServiceResult } from '../../src/service.js';
import { FakeService, groupResult, makeDeps, rejection } from '../kit/fakes.js';
import { tempDir } from '../kit/index.js';

interface Rec {
  row: number;
  user_group_id: string | null;
  status: string;
  token: string | null;
  error: string | null;
  settled_by?: string;
}

function ndjsonFile(rows: readonly Record<string, unknown>[]): string {
  const path = join(tempDir('bulk-outcomes'), 'rows.ndjson');
  writeFileSync(path, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
  return path;
}

function options(kind: 'get' | 'rotate', from: string, output?: string): BulkOptions {
  return {
    kind,
    from,
    format: 'ndjson',
    concurrency: 2,
    output:
      output ?? (kind === 'rotate' ? join(tempDir('bulk-outcomes'), 'out.ndjson') : undefined),
    resume: false,
    yes: true,
  };
}

function recordsIn(text: string): Rec[] {
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Rec)
    .filter((rec) => rec.status !== 'sending');
}

const noTimer = { every: () => () => undefined };

/** Rotation answers by current token: `t-<id>` rotates to `new-<id>` for group `<id>`. */
function rotation(token: string, fields: Record<string, unknown> = {}): ServiceResult {
  const id = token.replace(/^t-/, '');
  return groupResult({ provided_id: id, name: id, token: `new-${id}`, ...fields });
}

describe('answers that name another group (provided_id)', () => {
  it('rotate: the row is `mismatch` with the new token recorded, and the run exits 1', async () => {
    const from = ndjsonFile([
      { current_token: 't-acme', user_group_id: 'acme', name: 'acme' },
      { current_token: 't-globex', user_group_id: 'globex', name: 'globex' },
      // No user_group_id: nothing to compare the answer with.
      { current_token: 't-initech' },
    ]);
    const service = new FakeService({
      rotate: (token) =>
        token === 't-globex' ? rotation(token, { provided_id: 'umbrella' }) : rotation(token),
    });
    const deps = makeDeps({ service });
    const opts = options('rotate', from);
    const error = await rejection(runBulk(opts, deps, noTimer));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).exitCode).toBe(1);
    expect((error as Error).message).toMatch(/^1 of 3 rows failed \(1 was a mismatch/);
    const recs = recordsIn(readFileSync(opts.output ?? '', 'utf8')).sort((a, b) => a.row - b.row);
    expect(recs.map((rec) => [rec.row, rec.status, rec.user_group_id, rec.token])).toEqual([
      [1, 'rotated', 'acme', 'new-acme'],
      [2, 'mismatch', 'globex', 'new-globex'],
      [3, 'rotated', 'initech', 'new-initech'],
    ]);
    expect(recs[1]?.error).toContain('"umbrella"');
    expect(deps.io.stderr.text).toMatch(/3 rows in .*: 2 rotated, 1 mismatch\n/);
  });

  it("get: the row is `failed` without the other group's token, and the run exits 1", async () => {
    const from = ndjsonFile([
      { user_group_id: 'acme', name: 'Acme' },
      { user_group_id: 'globex', name: 'Globex' },
    ]);
    const service = new FakeService({
      get: (request) =>
        groupResult(
          request.user_group_id === 'globex'
            ? { provided_id: 'umbrella', token: 'ug-token-UMBRELLA' }
            : { provided_id: request.user_group_id },
          { new_user_group: false },
        ),
    });
    const deps = makeDeps({ service });
    const error = await rejection(runBulk(options('get', from), deps, noTimer));
    expect((error as ApiError).exitCode).toBe(1);
    expect(deps.io.stdout.text).not.toContain('UMBRELLA');
    const recs = recordsIn(deps.io.stdout.text).sort((a, b) => a.row - b.row);
    expect(recs.map((rec) => [rec.row, rec.status, rec.token])).toEqual([
      [1, 'found', 'ug-token-aaaaaaaaaaaa'],
      [2, 'failed', null],
    ]);
    expect(recs[1]?.error).toContain('"umbrella", not "globex"');
  });
});

describe('a rotation answer carrying the token that was sent', () => {
  it('is `failed`, "not rotated", and the run exits 1', async () => {
    const from = ndjsonFile([{ current_token: 't-acme' }, { current_token: 't-globex' }]);
    const service = new FakeService({
      rotate: (token) => (token === 't-globex' ? rotation(token, { token }) : rotation(token)),
    });
    const deps = makeDeps({ service });
    const opts = options('rotate', from);
    const error = await rejection(runBulk(opts, deps, noTimer));
    expect((error as ApiError).exitCode).toBe(1);
    const recs = recordsIn(readFileSync(opts.output ?? '', 'utf8')).sort((a, b) => a.row - b.row);
    expect(recs.map((rec) => [rec.row, rec.status])).toEqual([
      [1, 'rotated'],
      [2, 'failed'],
    ]);
    expect(recs[1]?.error).toMatch(/^not rotated/);
  });
});

describe('rows settled by reading their group back', () => {
  it('say `settled_by: "get"`, and the summary counts them', async () => {
    const from = ndjsonFile([
      { current_token: 't-acme', user_group_id: 'acme', name: 'acme' },
      { current_token: 't-globex', user_group_id: 'globex', name: 'globex' },
      { current_token: 't-initech', user_group_id: 'initech', name: 'initech' },
    ]);
    const service = new FakeService({
      rotate: (token) => {
        if (token === 't-acme') return rotation(token);
        throw new OutcomeUnknownError('the rotation request was sent but no answer came back');
      },
      // globex rotated unseen; the read-back for initech answers for another group.
      get: (request) =>
        request.user_group_id === 'globex'
          ? groupResult({ provided_id: 'globex', token: 'new-globex' }, { new_user_group: false })
          : groupResult({ provided_id: 'umbrella', token: 'x' }, { new_user_group: false }),
    });
    const deps = makeDeps({ service });
    const opts = options('rotate', from);
    const error = await rejection(runBulk(opts, deps, noTimer));
    // initech cannot be settled: its outcome stays unknown (exit 5).
    expect((error as OutcomeUnknownError).exitCode).toBe(5);
    const recs = recordsIn(readFileSync(opts.output ?? '', 'utf8')).sort((a, b) => a.row - b.row);
    expect(recs.map((rec) => [rec.row, rec.status, rec.settled_by ?? null])).toEqual([
      [1, 'rotated', null],
      [2, 'rotated', 'get'],
      [3, 'unknown', null],
    ]);
    expect(recs[2]?.error).toContain('answered for user group "umbrella"');
    expect(deps.io.stderr.text).toMatch(
      /3 rows in .*: 2 rotated, 1 unknown; 1 settled by reading the group back\n/,
    );
  });
});

describe('--resume after a mismatch', () => {
  it('does not send a `mismatch` row again: its rotation happened', async () => {
    const from = ndjsonFile([
      { current_token: 't-acme', user_group_id: 'acme', name: 'acme' },
      { current_token: 't-globex', user_group_id: 'globex', name: 'globex' },
    ]);
    const output = join(tempDir('bulk-outcomes'), 'resume.ndjson');
    writeFileSync(
      output,
      `${JSON.stringify({ row: 1, user_group_id: 'acme', name: 'acme', status: 'mismatch', token: 'new-x', team_id: 1, error: 'e', http_status: 200 })}\n`,
    );
    const service = new FakeService({ rotate: (token) => rotation(token) });
    const deps = makeDeps({ service });
    await runBulk({ ...options('rotate', from, output), resume: true }, deps, noTimer);
    expect(service.rotations).toEqual(['t-globex']);
  });
});

/** A clock whose sleeps pass at once and move its time on: hours of waits in milliseconds. */
function fakeClock() {
  const clock = {
    t: 0,
    now: () => clock.t,
    sleep: async (ms: number) => {
      clock.t += ms;
    },
  };
  return clock;
}

function throttled(): ApiError {
  return new ApiError('the service answered HTTP 429 (rate limited): slow down', {
    status: 429,
    retryAfter: '30',
  });
}

describe('--give-up-after: a run always ends', () => {
  const rows = (count: number, kind: 'get' | 'rotate') =>
    ndjsonFile(
      Array.from({ length: count }, (_, i) =>
        kind === 'get'
          ? { user_group_id: `g-${i + 1}`, name: `G ${i + 1}` }
          : { current_token: `t-g-${i + 1}` },
      ),
    );

  it.each(['get', 'rotate'] as const)(
    '%s: a service answering 429 with Retry-After: 30 to everything ends the run after 10 minutes (exit 4, --resume hint)',
    async (kind) => {
      const service = new FakeService({
        get: () => {
          throw throttled();
        },
        rotate: () => {
          throw throttled();
        },
      });
      const deps = makeDeps({ service });
      const clock = fakeClock();
      const output = join(tempDir('bulk-outcomes'), `give-up-${kind}.ndjson`);
      const opts = { ...options(kind, rows(1000, kind), output), concurrency: 8 };
      const error = await rejection(runBulk(opts, deps, { ...noTimer, clock }));
      expect(error).toBeInstanceOf(NetworkError);
      expect((error as NetworkError).exitCode).toBe(4);
      expect((error as Error).message).toMatch(/^gave up: no request has succeeded for 10m00s/);
      expect((error as NetworkError).hint).toMatch(/--resume/);
      // Ten minutes of (fake) time, not days: a few dozen tries, not 20 per row.
      expect(clock.t).toBeLessThanOrEqual(10 * 60_000 + 30_000);
      const sent = kind === 'get' ? service.gets.length : service.rotations.length;
      expect(sent).toBeLessThan(300);
      const recs = recordsIn(readFileSync(output, 'utf8'));
      const last = new Map(recs.map((rec) => [rec.row, rec.status]));
      expect(last.size).toBe(1000);
      expect([...last.values()].filter((status) => status === 'skipped').length).toBeGreaterThan(
        900,
      );
    },
  );

  it('counts from the last success: a slow but working service is never given up on', async () => {
    let calls = 0;
    const service = new FakeService({
      get: (request) => {
        // Every row is throttled once (30 s) before it is answered: 25 minutes for 50 rows.
        calls++;
        if (calls % 2 === 1) throw throttled();
        return groupResult({ provided_id: request.user_group_id });
      },
    });
    const deps = makeDeps({ service });
    const clock = fakeClock();
    await runBulk({ ...options('get', rows(50, 'get')), concurrency: 1 }, deps, {
      ...noTimer,
      clock,
    });
    expect(clock.t).toBeGreaterThan(20 * 60_000);
    expect(recordsIn(deps.io.stdout.text).every((rec) => rec.status === 'found')).toBe(true);
  });

  it('--give-up-after sets the limit', async () => {
    const service = new FakeService({
      get: () => {
        throw throttled();
      },
    });
    const deps = makeDeps({ service });
    const clock = fakeClock();
    const opts = { ...options('get', rows(100, 'get')), giveUpAfterMs: 90_000 };
    const error = await rejection(runBulk(opts, deps, { ...noTimer, clock }));
    expect((error as NetworkError).exitCode).toBe(4);
    expect((error as Error).message).toMatch(/for 1m30s/);
    expect(clock.t).toBeLessThanOrEqual(90_000 + 30_000);
  });
});
