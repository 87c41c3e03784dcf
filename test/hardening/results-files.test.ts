/**
 * The files of a bulk run attacked: a results file written by the other command, a results file
 * planted by another user or through a symlink, `--from` and `--output` naming one file, an
 * input rewritten while a rotation runs, FIFOs and pipes as `--from` (and signals while ugs waits
 * on them), and two runs on one results file at once.
 *
 * In-process (runBulk with a recording fake service) where no real process matters; the built
 * binary against the in-process emulator for pipes, signals and a second process.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BulkOptions, runBulk } from '../../src/bulk/run.js';
import { UsageError } from '../../src/errors.js';
import type { GetUserRequest, ServiceResult } from '../../src/service.js';
import { FakeService, groupResult, makeDeps, rejection } from '../kit/fakes.js';
import {
  describeRun,
  runShell,
  serviceForTest,
  startUgs,
  tempDir,
  UGS_SHELL,
} from '../kit/index.js';

const API_TOKEN = 'api-token-results-files';

interface Rec {
  row: number;
  user_group_id: string | null;
  status: string;
  token: string | null;
}

function records(path: string): Rec[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Rec);
}

function lastByRow(recs: readonly Rec[]): Map<number, Rec> {
  const last = new Map<number, Rec>();
  for (const rec of recs) last.set(rec.row, rec);
  return last;
}

function options(
  kind: 'get' | 'rotate',
  from: string,
  output: string | undefined,
  extra: Partial<BulkOptions> = {},
): BulkOptions {
  return {
    kind,
    from,
    format: from.endsWith('.csv') ? 'csv' : 'ndjson',
    concurrency: 4,
    output,
    resume: false,
    yes: true,
    ...extra,
  };
}

/** A Get User that echoes the request, as the service does. */
function found(request: GetUserRequest): ServiceResult {
  return groupResult(
    {
      provided_id: request.user_group_id,
      name: request.name,
      token: `tok-${request.user_group_id}`,
    },
    { new_user_group: true },
  );
}

/** Rotation answers: each token's group (by `groups`) with a new token. */
function rotator(groups: ReadonlyMap<string, string> = new Map(), onRotate?: () => void) {
  return new FakeService({
    get: found,
    rotate: (token) => {
      onRotate?.();
      const id = groups.get(token) ?? 'acme';
      return groupResult({
        provided_id: id,
        token: `new-${token}`,
        api_environment_tag: 'Customer',
      });
    },
  });
}

function _groupLines(count: number, prefix = 'g'): string {
  return Array.from(
    { length: count },
    (_, i) =>
      `${JSON.stringify({ user_group_id: `${prefix}-${i + 1}`, name: `Group ${i + 1}` })}\n`,
  ).join('');
}

describe('an input that changes while a rotation runs', () => {
  it('rewritten after the first rotation: every validated row is rotated, from the validated tokens', async () => {
    const dir = tempDir('changing');
    const from = join(dir, 'tokens.ndjson');
    const output = join(dir, 'rotated.ndjson');
    // Far more than one read of the file: the send pass is still reading when it changes.
    const tokens = Array.from(
      { length: 3000 },
      (_, i) => `tok-${String(i).padStart(5, '0')}-${'x'.repeat(80)}`,
    );
    writeFileSync(from, tokens.map((t) => `${JSON.stringify({ current_token: t })}\n`).join(''));
    let rewritten = false;
    const service = rotator(new Map(), () => {
      if (rewritten) return;
      rewritten = true;
      writeFileSync(from, '{"current_token":"planted-after-validation"}\n');
    });
    await runBulk(options('rotate', from, output), makeDeps({ service }));
    expect(rewritten).toBe(true);
    expect([...service.rotations].sort()).toEqual(tokens);
    const last = lastByRow(records(output));
    expect(last.size).toBe(tokens.length);
    expect([...last.values()].every((rec) => rec.status === 'rotated')).toBe(true);
  });
});

/** A FIFO at `path` with a writer that opens it and writes `text`, then stays silent (open). */
function silentWriter(path: string, text: string): ChildProcess {
  return spawn(
    'sh',
    ['-c', 'mkfifo "$1" && exec 3>"$1" && printf %s "$2" >&3 && exec sleep 60', 'sh', path, text],
    { stdio: 'ignore' },
  );
}

async function waitForPath(path: string): Promise<void> {
  const { existsSync } = await import('node:fs');
  for (let i = 0; i < 200 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('--from a FIFO or a pipe', () => {
  it('--from <(cat rows.csv): read once, every row sent once, exit 0', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const dir = tempDir('pipe');
    const rows = join(dir, 'rows.csv');
    writeFileSync(rows, 'user_group_id,name\np-1,P 1\np-2,P 2\n');
    const out = join(dir, 'out.ndjson');
    const result = await runShell(
      `${UGS_SHELL} get --from <(cat '${rows}') --format csv --output '${out}'`,
      { env: { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN } },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.createdIds().sort()).toEqual(['p-1', 'p-2']);
    expect(service.requests).toHaveLength(2);
    expect([...lastByRow(records(out)).values()].map((rec) => rec.status)).toEqual([
      'created',
      'created',
    ]);
  });

  it('--from /dev/stdin on a pipe: read once, rotated once', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const group = await service.seed('s-1', 'S 1');
    const dir = tempDir('stdin');
    const out = join(dir, 'out.ndjson');
    const row = JSON.stringify({ current_token: group.token, user_group_id: 's-1', name: 'S 1' });
    const result = await runShell(
      `printf '%s\\n' '${row}' | ${UGS_SHELL} rotate --from /dev/stdin --format ndjson --output '${out}' --yes`,
      { env: { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN } },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests).toHaveLength(1);
    const [rec] = records(out).filter((r) => r.status !== 'sending');
    expect(rec?.status).toBe('rotated');
    expect(rec?.token).toBe((await service.group('s-1')).token);
  });

  it('a device or a terminal is refused, naming --from -', async () => {
    const dir = tempDir('device');
    const service = new FakeService();
    const error = await rejection(
      runBulk(
        options('get', '/dev/null', join(dir, 'out.ndjson'), { format: 'csv' }),
        makeDeps({ service }),
      ),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toContain('/dev/null');
    expect((error as UsageError).hint).toContain('--from -');
    expect(service.gets).toEqual([]);
  });

  describe.each([
    ['a FIFO nobody writes to', ''],
    ['a FIFO whose writer went silent after the header', 'user_group_id,name\n'],
  ])('%s', (_what, text) => {
    it.each(['SIGINT', 'SIGTERM'] as const)(
      'a second %s ends the run within 2 s',
      async (signal) => {
        const dir = tempDir('fifo');
        const fifo = join(dir, 'rows.csv');
        const writer = text === '' ? undefined : silentWriter(fifo, text);
        try {
          if (writer === undefined) execFileSync('mkfifo', [fifo]);
          await waitForPath(fifo);
          const { child, result } = startUgs(['get', '--from', fifo], {
            env: { UGS_BASE_URL: 'http://127.0.0.1:9', UGS_API_TOKEN: API_TOKEN },
            stdin: null,
          });
          // Let it reach the wait on the FIFO.
          await new Promise((r) => setTimeout(r, 700));
          child.kill(signal);
          await new Promise((r) => setTimeout(r, 200));
          const second = performance.now();
          child.kill(signal);
          const run = await result;
          expect(performance.now() - second, describeRun(run)).toBeLessThan(2_000);
          expect(run.code, describeRun(run)).toBe(130);
        } finally {
          writer?.kill('SIGKILL');
          if (writer !== undefined) await once(writer, 'close');
        }
      },
    );
  });
});
