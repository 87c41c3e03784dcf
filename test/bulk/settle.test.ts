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
import { ApiError, OutcomeUnknownError } from '../../src/errors.js';
import type { ServiceResult } from '../../src/service/service.js';
import { bulkSpecs } from '../kit/bulk.js';
import { FakeService, fakeService, groupResult, makeDeps, rejection } from '../kit/fakes.js';
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
    // Settling ends in a fact: the final read-back saw the token unchanged, so it did not rotate.
    expect((error as { exitCode?: number }).exitCode).toBe(1);
    const last = records(opts.output ?? '').at(-1) as Rec & { error: string };
    expect(last.status).toBe('failed');
    expect(last.error).toContain('not rotated (checked)');
    expect(last.token).toBeNull();
  });

  it('is `rotated` when the final read-back, after the last round, finds the token changed', async () => {
    const opts = rotateRun([{ current_token: 't-acme', user_group_id: 'acme', name: 'acme' }]);
    let reads = 0;
    const service = new FakeService({
      rotate: () => {
        throw new OutcomeUnknownError('the rotation request failed: HTTP 500');
      },
      // Every round's read sees the old token; the last rotation landed after all.
      get: (): ServiceResult => {
        reads++;
        return reads === 4 ? unchanged('acme', 'new-acme') : unchanged('acme', 't-acme');
      },
    });
    await runBulk(opts, makeDeps({ service }), noTimer);
    // The first try and three rounds' rotations; the fourth read is the final one.
    expect(service.rotations.length).toBe(4);
    expect(service.gets.length).toBe(4);
    expect(records(opts.output ?? '').at(-1)).toMatchObject({
      status: 'rotated',
      token: 'new-acme',
      settled_by: 'get',
    });
  });

  it('stays `unknown` (exit 5) only when the final read fails, and the hint names the cause', async () => {
    const opts = rotateRun([
      { current_token: 't-acme', user_group_id: 'acme', name: 'acme' },
      { current_token: 't-bare' },
    ]);
    const service = new FakeService({
      rotate: () => {
        throw new OutcomeUnknownError('the rotation request failed: HTTP 500');
      },
      get: () => {
        throw new ApiError('HTTP 500 (database is locked)', { status: 500 });
      },
    });
    const error = (await rejection(runBulk(opts, makeDeps({ service }), noTimer))) as
      | OutcomeUnknownError
      | undefined;
    expect(error?.exitCode).toBe(5);
    const byRow = new Map(records(opts.output ?? '').map((rec) => [rec.row, rec]));
    expect(byRow.get(1)?.status).toBe('unknown');
    expect(error?.hint).toContain(
      "reading the group's token failed: HTTP 500 (database is locked)",
    );
    // Only the row without them is asked for user_group_id and name.
    expect(error?.hint).toContain('give the 1 row without them user_group_id and name');
  });

  it('does not ask for user_group_id and name when every unknown row has them', async () => {
    const opts = rotateRun([{ current_token: 't-acme', user_group_id: 'acme', name: 'acme' }]);
    const service = new FakeService({
      rotate: () => {
        throw new OutcomeUnknownError('the rotation request failed: HTTP 500');
      },
      get: () => {
        throw new ApiError('HTTP 502 (bad gateway)', { status: 502 });
      },
    });
    const error = (await rejection(runBulk(opts, makeDeps({ service }), noTimer))) as
      | OutcomeUnknownError
      | undefined;
    expect(error?.exitCode).toBe(5);
    expect(error?.hint).toMatch(/^row 1: .*reading the group's token failed: HTTP 502/);
    expect(error?.hint).not.toContain('give');
    // The read-back it offers fails on a mistyped id instead of printing a new group's token.
    expect(error?.hint).toContain(
      'ugs get --id <user_group_id> --name <name> --must-exist --field token',
    );
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

describe('a rotation the service answers 404 (it does not know the token)', () => {
  const notFound = () =>
    new ApiError('HTTP 404: Not found.', {
      status: 404,
      hint: 'the service does not know this token',
    });

  it("is `stale` with the group's current token when no earlier `sending` record exists (exit 1); rows without id/name stay `failed`", async () => {
    const opts = rotateRun([
      { current_token: 't-acme', user_group_id: 'acme', name: 'acme' },
      { current_token: 't-bare' },
    ]);
    const service = new FakeService({
      rotate: () => {
        throw notFound();
      },
      get: () => unchanged('acme', 'elsewhere-acme'),
    });
    const deps = makeDeps({ service });
    const error = (await rejection(runBulk(opts, deps, noTimer))) as ApiError;
    expect(error.exitCode).toBe(1);
    expect(error.message).toMatch(/^2 of 2 rows failed \(1 was stale: not rotated by ugs/);
    expect(error.hint).toContain('not rotated by ugs');
    const byRow = new Map(
      records(opts.output ?? '')
        .filter((rec) => rec.status !== 'sending')
        .map((rec) => [rec.row, rec as Rec & { error: string; http_status: number }]),
    );
    expect(byRow.get(1)).toMatchObject({
      status: 'stale',
      token: 'elsewhere-acme',
      http_status: 404,
    });
    expect(byRow.get(1)?.error).toContain("not rotated by ugs: the row's token was not current");
    expect(byRow.get(2)).toMatchObject({ status: 'failed', token: null, http_status: 404 });
    // Only the row with user_group_id and name was read back.
    expect(service.gets).toHaveLength(1);
    expect(deps.io.stderr.text).toMatch(/2 rows in .*: 1 stale, 1 failed/);
  });

  it('is `rotated`, settled, when an earlier run of this results file sent it (--resume after a 404 "failed")', async () => {
    const opts = rotateRun([{ current_token: 't-acme', user_group_id: 'acme', name: 'acme' }]);
    // What a killed run and a resume that raced its request left: sent twice, then a 404.
    const base = { row: 1, user_group_id: 'acme', name: 'acme', token: null, team_id: null };
    writeFileSync(
      opts.output ?? '',
      [
        { ...base, status: 'sending', error: null, http_status: null },
        { ...base, status: 'failed', error: 'HTTP 404: Not found.', http_status: 404 },
      ]
        .map((rec) => `${JSON.stringify(rec)}\n`)
        .join(''),
    );
    const service = new FakeService({
      rotate: () => {
        throw notFound();
      },
      get: () => unchanged('acme', 'new-acme'),
    });
    await runBulk({ ...opts, resume: true }, makeDeps({ service }), noTimer);
    expect(records(opts.output ?? '').at(-1)).toMatchObject({
      status: 'rotated',
      token: 'new-acme',
      settled_by: 'get',
    });
  });

  it('is `rotated`, settled, when an earlier try of this run was sent without an answer', async () => {
    const opts = rotateRun([{ current_token: 't-acme', user_group_id: 'acme', name: 'acme' }]);
    let reads = 0;
    const service = new FakeService({
      rotate: () => {
        // The first try times out (it lands later); the second finds the token spent.
        if (service.rotations.length === 1) {
          throw new OutcomeUnknownError('the rotation request was sent but no answer came back');
        }
        throw notFound();
      },
      get: (): ServiceResult => {
        reads++;
        return unchanged('acme', reads === 1 ? 't-acme' : 'new-acme');
      },
    });
    await runBulk(opts, makeDeps({ service }), noTimer);
    expect(service.rotations).toHaveLength(2);
    expect(records(opts.output ?? '').at(-1)).toMatchObject({
      status: 'rotated',
      token: 'new-acme',
      settled_by: 'get',
    });
  });
});

describe('--resume and a request of an earlier run that may still be in flight', () => {
  const T = Date.parse('2026-11-26T12:00:00.123Z');
  const base = { row: 1, user_group_id: 'acme', name: 'acme', token: null, team_id: null };

  /** Monotonic and wall time move together, and only when the run sleeps. */
  function clockAt(epoch: number) {
    const clock = {
      t: 0,
      now: () => clock.t,
      epochMs: () => epoch + clock.t,
      sleep: async (ms: number) => {
        clock.t += ms;
      },
    };
    return clock;
  }

  /**
   * The killed run's rotation lands 5 s after it was sent: a read-back before then sees the old
   * token, and a retry then would rotate the group a second time.
   */
  function landingService(clock: { epochMs: () => number }) {
    const lands = T + 5_000;
    const service = new FakeService({
      rotate: () => groupResult({ provided_id: 'acme', name: 'acme', token: 'second-acme' }),
      get: () => unchanged('acme', clock.epochMs() < lands ? 't-acme' : 'new-acme'),
    });
    return service;
  }

  it('reads the row back only once the request timeout has passed since its `sending` record, and says so', async () => {
    const opts = rotateRun([{ current_token: 't-acme', user_group_id: 'acme', name: 'acme' }]);
    writeFileSync(
      opts.output ?? '',
      `${JSON.stringify({ ...base, status: 'sending', error: null, http_status: null, at: new Date(T).toISOString() })}\n`,
    );
    // Resumed 1 s after the kill, with --timeout 10.
    const clock = clockAt(T + 1_000);
    const service = landingService(clock);
    const deps = makeDeps({ service, settings: { timeoutMs: 10_000 } });
    await runBulk({ ...opts, resume: true }, deps, { ...noTimer, clock });
    // The read-back came 10 s after the request was sent, not at once: the row rotated once.
    expect(clock.epochMs()).toBeGreaterThanOrEqual(T + 10_000);
    expect(service.rotations).toEqual([]);
    expect(records(opts.output ?? '').at(-1)).toMatchObject({
      status: 'rotated',
      token: 'new-acme',
      settled_by: 'get',
    });
    expect(deps.io.stderr.text).toMatch(
      /--resume: waiting 9\.0s before checking the rows an earlier run sent/,
    );
  });

  it('does not wait when the request timeout has passed already, or for a record without a time', async () => {
    for (const at of [new Date(T - 60_000).toISOString(), undefined]) {
      const opts = rotateRun([{ current_token: 't-acme', user_group_id: 'acme', name: 'acme' }]);
      writeFileSync(
        opts.output ?? '',
        `${JSON.stringify({ ...base, status: 'sending', error: null, http_status: null, ...(at !== undefined && { at }) })}\n`,
      );
      const clock = clockAt(T + 10_000);
      const deps = makeDeps({ service: landingService(clock), settings: { timeoutMs: 30_000 } });
      await runBulk({ ...opts, resume: true }, deps, { ...noTimer, clock });
      expect(clock.t).toBe(0);
      expect(deps.io.stderr.text).not.toMatch(/waiting/);
    }
  });

  it('writes the time of each `sending` record (UTC, milliseconds)', async () => {
    const opts = rotateRun([{ current_token: 't-acme', user_group_id: 'acme', name: 'acme' }]);
    const clock = clockAt(T);
    const service = new FakeService({
      rotate: () => groupResult({ provided_id: 'acme', name: 'acme', token: 'new-acme' }),
    });
    await runBulk(opts, makeDeps({ service }), { ...noTimer, clock });
    const [sending, rotated] = records(opts.output ?? '') as (Rec & { at?: string })[];
    expect(sending).toMatchObject({ status: 'sending', at: '2026-11-26T12:00:00.123Z' });
    expect(rotated?.status).toBe('rotated');
  });
});

describe('a CSV results file written before records carried their time', () => {
  const OLD_HEADER =
    'row,user_group_id,name,status,token,team_id,api_environment_tag,error,http_status,settled_by';

  it('is resumed and appended to in its own columns; a new file has the `at` column', async () => {
    const opts = rotateRun([
      { current_token: 't-acme', user_group_id: 'acme', name: 'acme' },
      { current_token: 't-beta', user_group_id: 'beta', name: 'beta' },
    ]);
    const output = (opts.output ?? '').replace(/\.ndjson$/, '.csv');
    writeFileSync(output, `${OLD_HEADER}\n1,acme,acme,sending,,,,,,\n`);
    const service = new FakeService({
      rotate: (token) => {
        const id = token.slice(2);
        return groupResult({ provided_id: id, name: id, token: `new-${token}` });
      },
      get: () => unchanged('acme', 'new-acme'),
    });
    await runBulk({ ...opts, output, resume: true }, makeDeps({ service }), noTimer);
    const lines = readFileSync(output, 'utf8').trim().split('\n');
    expect(lines[0]).toBe(OLD_HEADER);
    // Every line keeps the header's ten cells (no `at` cell added to an old file).
    for (const line of lines) expect(line.split(',')).toHaveLength(10);
    expect(lines.at(-1)).toMatch(/^2,beta,beta,rotated,new-t-beta,/);
    expect(lines.some((line) => /^1,acme,acme,rotated,new-acme,.*,get$/.test(line))).toBe(true);
    expect(service.rotations).toEqual(['t-beta']);
    // The first run's answer was lost: no rotation was sent again when the group was read back.

    const fresh = output.replace(/\.csv$/, '-new.csv');
    await runBulk({ ...opts, output: fresh }, makeDeps({ service }), noTimer);
    const [header, sending] = readFileSync(fresh, 'utf8').split('\n');
    expect(header).toBe(`${OLD_HEADER},at`);
    expect(sending).toMatch(/^1,acme,acme,sending,.*,\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe('settling a rotation in the customer dialect', () => {
  const customer = {
    default: { baseUrl: 'https://ugs.example.com', apiToken: 'k', dialect: 'customer' as const },
  };

  it('reads the group back with get_customer/, never the get-or-create', async () => {
    const opts = rotateRun([{ current_token: 't-acme', user_group_id: 'acme', name: 'acme' }]);
    let rotations = 0;
    const service = fakeService({
      rotateToken: () => {
        rotations++;
        if (rotations === 1) {
          throw new OutcomeUnknownError('the rotation request was sent but no answer came back');
        }
        return groupResult({ provided_id: 'acme', name: 'acme', token: 'new-acme' });
      },
      getCustomer: () => groupResult({ provided_id: 'acme', name: 'acme', token: 't-acme' }),
    });
    await runBulk(opts, makeDeps({ service, profiles: customer }), noTimer);
    expect(service.calls.map((call) => call.operation)).toEqual([
      'rotateToken',
      'getCustomer',
      'rotateToken',
    ]);
    expect(records(opts.output ?? '').at(-1)).toMatchObject({
      status: 'rotated',
      token: 'new-acme',
    });
  });

  it('leaves a row whose group is not there unknown, creating nothing', async () => {
    const opts = rotateRun([{ current_token: 't-acme', user_group_id: 'acme', name: 'acme' }]);
    const service = fakeService({
      rotateToken: () => {
        throw new OutcomeUnknownError('the rotation request was sent but no answer came back');
      },
      getCustomer: () => {
        throw new ApiError('not found', { status: 404 });
      },
    });
    const error = await rejection(
      runBulk(opts, makeDeps({ service, profiles: customer }), noTimer),
    );
    expect((error as { exitCode?: number }).exitCode).toBe(5);
    expect(service.calls.some((call) => call.operation === 'getUser')).toBe(false);
    const last = records(opts.output ?? '').at(-1) as Rec & { error: string };
    expect(last.status).toBe('unknown');
    expect(last.error).toContain('nothing was created');
  });
});
