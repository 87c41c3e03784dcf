/**
 * `runBulk` in-process: outcomes a row's answer can come to beyond "done" and "failed" — an
 * answer for another group (`mismatch`), a rotation that hands back the token sent, a row settled
 * by reading its group back — and how they count in the exit and the summary.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AppendFs, nodeAppendFs } from '../../src/bulk/append-fs.js';
import { type BulkOptions, runBulk } from '../../src/bulk/run.js';
import { realClock } from '../../src/bulk/scheduler.js';
import {
  ApiError,
  NetworkError,
  OutcomeUnknownError,
  type OutputError,
  type UgsError,
} from '../../src/errors.js';
import { InFlight } from '../../src/platform/io.js';
import type { ServiceResult } from '../../src/service/service.js';
import { bulkSpecs } from '../kit/bulk.js';
import { FakeService, groupResult, makeDeps, makeIO, rejection } from '../kit/fakes.js';
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
    spec: bulkSpecs[kind],
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

describe('a service that is unavailable for a while: the run pauses and probes, then carries on', () => {
  const DOWN = 'the service answered HTTP 504: a text/html body';

  /**
   * A service behind a gateway that answers 504 until `upAt` (fake time; never when undefined).
   * Rotations answered by the gateway are committed behind it for even groups, as a gateway's
   * timeout can hide. Every request is logged with the time it was sent.
   */
  function gatewayService(clock: { t: number }, upAt: number | undefined, onProbe?: () => void) {
    const down = () => upAt === undefined || clock.t < upAt;
    const tokens = new Map<string, string>();
    const committed = new Map<string, number>();
    const log: { at: number; what: 'get' | 'rotate' | 'probe' }[] = [];
    const commit = (id: string) => {
      committed.set(id, (committed.get(id) ?? 0) + 1);
      tokens.set(id, `new-${id}`);
    };
    const service = new FakeService({
      get: (request) => {
        log.push({ at: clock.t, what: 'get' });
        if (down()) throw new ApiError(DOWN, { status: 504, unavailable: true });
        const id = request.user_group_id;
        return groupResult({
          provided_id: id,
          name: request.name,
          token: tokens.get(id) ?? `t-${id}`,
        });
      },
      rotate: (token) => {
        log.push({ at: clock.t, what: 'rotate' });
        const id = token.replace(/^t-/, '');
        if (tokens.has(id)) {
          throw new ApiError('the service answered HTTP 404: Not found.', { status: 404 });
        }
        if (down()) {
          if (Number(id.replace(/\D/g, '')) % 2 === 0) commit(id);
          throw new OutcomeUnknownError(`${DOWN}; the token may or may not have been rotated`, {
            unavailable: true,
          });
        }
        commit(id);
        return groupResult({ provided_id: id, name: id, token: `new-${id}` });
      },
      probe: () => {
        log.push({ at: clock.t, what: 'probe' });
        onProbe?.();
        return {
          verdict: down() ? 'unexpected' : 'accepted',
          status: down() ? 504 : 400,
          method: 'GET' as const,
          path: '/api/user',
          contentType: down() ? 'text/html' : 'application/json',
          detail: undefined,
        };
      },
    });
    return { service, log, committed, tokens };
  }

  const rowsOf = (kind: 'get' | 'rotate', count: number) =>
    ndjsonFile(
      Array.from({ length: count }, (_, i) =>
        kind === 'get'
          ? { user_group_id: `g${i + 1}`, name: `G ${i + 1}` }
          : { current_token: `t-g${i + 1}`, user_group_id: `g${i + 1}`, name: `g${i + 1}` },
      ),
    );

  it('get: down for 5 s from the first request, then back: every row found, a few probes, nothing else sent meanwhile', async () => {
    const clock = fakeClock();
    // The progress line at a terminal, drawn while the first probe is on its way.
    let tick = () => {};
    const { service, log } = gatewayService(clock, 5000, () => tick());
    const deps = makeDeps({ service, io: makeIO({ stderrIsTTY: true }) });
    const opts = { ...options('get', rowsOf('get', 30)), concurrency: 8 };
    const every = (onTick: () => void) => {
      tick = onTick;
      return () => undefined;
    };
    await runBulk(opts, deps, { every, clock });
    const recs = recordsIn(deps.io.stdout.text);
    expect(recs).toHaveLength(30);
    expect(recs.every((rec) => rec.status === 'found')).toBe(true);
    // Probes at 1, 3 and 7 s; between the pause and the probe that found it back, no row's request.
    const probes = log.filter((entry) => entry.what === 'probe').map((entry) => entry.at);
    expect(probes).toEqual([1000, 3000, 7000]);
    expect(log.filter((entry) => entry.what === 'get' && entry.at > 0 && entry.at < 7000)).toEqual(
      [],
    );
    // Before the pause: the 6 gateway answers and the rows in flight, not three per row.
    expect(log.filter((entry) => entry.at === 0).length).toBeLessThanOrEqual(6 + 8);
    // (Notes are wrapped to the terminal's width.)
    const stderr = deps.io.stderr.text.replace(/\s+/g, ' ');
    expect(stderr).toContain(
      'note: the service is unavailable (6 requests in a row were answered by a gateway, the last: the service answered HTTP 504',
    );
    expect(stderr).toContain('note: the service answers again after 7.0s: the run carries on');
    expect(stderr).toMatch(/service unavailable since \d\d:\d\d:\d\d, retrying now/);
  });

  it('rotate: rotations the gateway answered are read back, never resent blind: each group rotated exactly once', async () => {
    const clock = fakeClock();
    const { service, committed, tokens } = gatewayService(clock, 5000);
    const deps = makeDeps({ service });
    const output = join(tempDir('bulk-outcomes'), 'outage-rotate.ndjson');
    const opts = { ...options('rotate', rowsOf('rotate', 20), output), concurrency: 8 };
    await runBulk(opts, deps, { ...noTimer, clock });
    const last = new Map(recordsIn(readFileSync(output, 'utf8')).map((rec) => [rec.row, rec]));
    expect(last.size).toBe(20);
    for (const rec of last.values()) {
      expect(rec.status, JSON.stringify(rec)).toBe('rotated');
      expect(rec.token).toBe(tokens.get(rec.user_group_id ?? ''));
    }
    expect([...committed.values()].every((times) => times === 1)).toBe(true);
    expect(committed.size).toBe(20);
    // Some were committed behind the gateway and learnt by reading the group back.
    expect([...last.values()].some((rec) => rec.settled_by === 'get')).toBe(true);
  });

  it.each([
    ['never comes back', undefined, 120_000, 7],
    ['--give-up-after 3s', 3000, 3000, 2],
  ] as const)(
    'get: a service that %s stops within the limit (exit 4, --resume hint), after a few probes',
    async (_what, giveUpAfterMs, limit, most) => {
      const clock = fakeClock();
      const { service, log } = gatewayService(clock, undefined);
      const deps = makeDeps({ service });
      const output = join(tempDir('bulk-outcomes'), `outage-down-${limit}.ndjson`);
      const opts = {
        ...options('get', rowsOf('get', 200), output),
        concurrency: 8,
        ...(giveUpAfterMs !== undefined && { giveUpAfterMs }),
      };
      const error = await rejection(runBulk(opts, deps, { ...noTimer, clock }));
      expect((error as NetworkError).exitCode).toBe(4);
      expect((error as Error).message).toMatch(
        /^the service is unavailable: 6 requests in a row were answered by a gateway .* since \d\d:\d\d:\d\d, and \d+ probes? over .* did not get through; the rows not sent were skipped/,
      );
      expect((error as NetworkError).hint).toMatch(/--resume/);
      expect(clock.t).toBeLessThanOrEqual(limit);
      const probes = log.filter((entry) => entry.what === 'probe');
      expect(probes.length).toBeGreaterThan(0);
      expect(probes.length).toBeLessThanOrEqual(most);
      expect(log.filter((entry) => entry.what === 'get').length).toBeLessThanOrEqual(6 + 8);
      const last = new Map(
        recordsIn(readFileSync(output, 'utf8')).map((rec) => [rec.row, rec.status]),
      );
      expect(last.size).toBe(200);
      expect([...last.values()].filter((status) => status === 'skipped').length).toBeGreaterThan(
        180,
      );
    },
  );

  it('the 2-minute limit is a hook: a shorter one ends the pause sooner', async () => {
    const clock = fakeClock();
    const { service } = gatewayService(clock, undefined);
    const deps = makeDeps({ service });
    const opts = { ...options('get', rowsOf('get', 20)), concurrency: 4 };
    const error = await rejection(
      runBulk(opts, deps, { ...noTimer, clock, outageLimitMs: 10_000 }),
    );
    expect((error as NetworkError).exitCode).toBe(4);
    expect(clock.t).toBe(10_000);
  });

  it.each(['get', 'rotate'] as const)(
    '%s: Ctrl+C during the pause stops at once, and no request is sent after it',
    async (kind) => {
      const clock = fakeClock();
      const io = makeIO({ inFlight: new InFlight() });
      let sentAtStop = -1;
      const { service, log, committed } = gatewayService(clock, undefined, () => {
        // The signal comes while the first probe is on its way.
        if (sentAtStop === -1) {
          io.inFlight?.takeSignal('SIGINT');
          sentAtStop = log.length;
        }
      });
      const deps = makeDeps({ io, service });
      const output = join(tempDir('bulk-outcomes'), `outage-interrupt-${kind}.ndjson`);
      const opts = { ...options(kind, rowsOf(kind, 20), output), concurrency: 4 };
      const error = await rejection(runBulk(opts, deps, { ...noTimer, clock }));
      expect((error as UgsError).exitCode).toBe(130);
      expect(log.length).toBe(sentAtStop);
      expect(clock.t).toBe(1000);
      const last = new Map(recordsIn(readFileSync(output, 'utf8')).map((rec) => [rec.row, rec]));
      expect(last.size).toBe(20);
      // Rows waiting for the service: a get tried before says its last failure, a rotation in
      // doubt is left for --resume to read back; the others were never sent.
      for (const rec of last.values()) {
        if (rec.status === 'skipped') expect(rec.error).toBe('not sent: the run was interrupted');
        else if (kind === 'get') expect(rec.status).toBe('failed');
        else expect(rec.status).toBe('unknown');
      }
      expect([...last.values()].filter((rec) => rec.status === 'skipped').length).toBeGreaterThan(
        10,
      );
      expect([...committed.values()].every((times) => times === 1)).toBe(true);
    },
  );
});

/**
 * The real file system with a byte budget, as a disk with that much room: a write past it is
 * short, the next one fails with ENOSPC. `free()` makes room again.
 */
/**
 * A disk that fills up once `budget` bytes are written, at the first write after that which
 * holds `carrying` (any write when not given). A rotate run fsyncs each row's `sending` record
 * just before its request, so which write meets the full disk first depends on timing; a test of
 * a lost rotation result says which. From then on every write fails.
 */
function fillingFs(budget: number, carrying = '') {
  const disk = {
    left: budget,
    full: false,
    fs: {
      ...nodeAppendFs,
      write: async (fd: number, buffer: Uint8Array, offset: number, length: number) => {
        const text = Buffer.from(buffer.subarray(offset, offset + length)).toString('utf8');
        if (disk.left <= 0 && text.includes(carrying)) disk.full = true;
        if (disk.full) {
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
            code: 'ENOSPC',
          });
        }
        const n = await nodeAppendFs.write(fd, buffer, offset, length);
        disk.left -= n;
        return n;
      },
    } satisfies AppendFs,
    free() {
      disk.full = false;
      disk.left = Number.POSITIVE_INFINITY;
    },
  };
  return disk;
}

/** Groups `g-1`… with tokens; rotations answer after a few ms, so rows are in flight together. */
function groupStore(count: number) {
  const tokens = new Map<string, string>();
  const rotations = new Map<string, number>();
  for (let i = 1; i <= count; i++) tokens.set(`g-${i}`, `t-g-${i}-0`);
  const service = new FakeService({
    rotate: async (token) => {
      await new Promise((resolve) => setTimeout(resolve, 2));
      const id = [...tokens].find(([, t]) => t === token)?.[0];
      if (id === undefined) throw new ApiError('the service answered HTTP 404', { status: 404 });
      const n = (rotations.get(id) ?? 0) + 1;
      rotations.set(id, n);
      tokens.set(id, `t-${id}-${n}`);
      return groupResult({ provided_id: id, name: id, token: `t-${id}-${n}` });
    },
    get: (request) =>
      groupResult(
        { provided_id: request.user_group_id, token: tokens.get(request.user_group_id) },
        { new_user_group: false },
      ),
  });
  return { service, tokens, rotations };
}

describe('a full disk under --output', () => {
  it('starts no new row, names the rotated rows whose records were lost (exit 5), and --resume after freeing space settles them', async () => {
    const count = 600;
    const store = groupStore(count);
    const from = ndjsonFile(
      Array.from({ length: count }, (_, i) => ({
        current_token: `t-g-${i + 1}-0`,
        user_group_id: `g-${i + 1}`,
        name: `g-${i + 1}`,
      })),
    );
    const output = join(tempDir('bulk-outcomes'), 'full.ndjson');
    // Room for the first journal batch (256 `sending` records) and a few results.
    const oneSending = `${JSON.stringify({ row: 100, user_group_id: 'g-100', name: 'g-100', status: 'sending', token: null, team_id: null, error: null, http_status: null })}\n`;
    const disk = fillingFs(256 * oneSending.length + 3_000, '"status":"rotated"');
    const deps = makeDeps({ service: store.service });
    const opts = { ...options('rotate', from, output), concurrency: 4 };
    const error = await rejection(runBulk(opts, deps, { ...noTimer, fs: disk.fs }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect((error as OutcomeUnknownError).exitCode).toBe(5);
    const message = (error as Error).message;
    expect(message).toMatch(/no space left on the device \(ENOSPC\)/);
    expect((error as OutcomeUnknownError).hint).toMatch(/^free space, then .*--resume/);
    // No row was started once a record could not be written: only those journaled and in flight.
    expect(store.rotations.size).toBeLessThanOrEqual(256);
    // Every rotation that happened is either on disk or named in the message.
    const named = new Set(
      (message.match(/rows? ([\d, ]+)(?: and \d+ more)? (?:was|were) rotated/)?.[1] ?? '')
        .split(', ')
        .map(Number),
    );
    const onDisk = new Map<number, Rec>();
    for (const line of readFileSync(output, 'utf8').split('\n')) {
      try {
        const rec = JSON.parse(line) as Rec;
        onDisk.set(rec.row, rec);
      } catch {
        // the torn last line
      }
    }
    for (const id of store.rotations.keys()) {
      const row = Number(id.slice(2));
      const rec = onDisk.get(row);
      expect(rec?.status === 'rotated' || named.has(row), `row ${row}`).toBe(true);
    }
    expect(named.size).toBeGreaterThan(0);
    expect(deps.io.stderr.text).not.toMatch(/unexpected/);

    disk.free();
    const again = makeDeps({ service: store.service });
    // Resumed a minute later by the wall clock: no request of the first run can be in flight.
    const later = { ...realClock, epochMs: () => Date.now() + 60_000 };
    await runBulk({ ...opts, resume: true }, again, { ...noTimer, fs: disk.fs, clock: later });
    const last = new Map<number, Rec>();
    for (const line of readFileSync(output, 'utf8').split('\n')) {
      try {
        const rec = JSON.parse(line) as Rec;
        if (rec.status !== 'sending') last.set(rec.row, rec);
      } catch {
        // the torn line of the first run
      }
    }
    expect(last.size).toBe(count);
    for (const [row, rec] of last) {
      expect(rec.status, `row ${row}`).toBe('rotated');
      expect(rec.token, `row ${row}`).toBe(store.tokens.get(`g-${row}`));
      // Exactly once: no group was rotated twice.
      expect(store.rotations.get(`g-${row}`), `row ${row}`).toBe(1);
    }
    for (const row of named) expect(last.get(row)?.settled_by, `row ${row}`).toBe('get');
  });

  it('get: exit 1 naming the file and --resume, no unexpected failure', async () => {
    const from = ndjsonFile(
      Array.from({ length: 300 }, (_, i) => ({ user_group_id: `g-${i + 1}`, name: `G ${i + 1}` })),
    );
    const service = new FakeService({
      get: async (request) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        return groupResult({ provided_id: request.user_group_id });
      },
    });
    const output = join(tempDir('bulk-outcomes'), 'full-get.ndjson');
    const disk = fillingFs(2_000);
    const deps = makeDeps({ service });
    const error = await rejection(
      runBulk({ ...options('get', from, output), concurrency: 4 }, deps, {
        ...noTimer,
        fs: disk.fs,
      }),
    );
    expect((error as Error).constructor.name).toBe('OutputError');
    expect((error as OutputError).exitCode).toBe(1);
    expect((error as Error).message).toMatch(/full-get\.ndjson: no space left on the device/);
    expect((error as OutputError).hint).toMatch(/--resume/);
    expect(service.gets.length).toBeLessThan(300);
  });
});
