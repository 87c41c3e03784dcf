/**
 * `ugs update --from` killed with SIGKILL mid-run against `ugs serve --dialect customer`, then
 * `--resume`d: every group is updated exactly once (the service's access lines count the update
 * requests per id), and the results file ends with every row `updated`. Rows the killed run sent
 * without recording an answer are read back, not sent blind.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lastByRow, readRecords, untilResults } from '../kit/bulk.js';
import {
  describeRun,
  makeSandbox,
  runMain,
  type ServeProcess,
  serveUgs,
  startUgs,
} from '../kit/index.js';

const processes: ServeProcess[] = [];
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
});

interface Rec {
  row: number;
  user_group_id: string;
  status: string;
  error: string | null;
}

describe('update --from after kill -9', () => {
  it('--resume updates every group exactly once; every row ends updated', async () => {
    const sandbox = makeSandbox();
    const data = join(sandbox.root, 'state.json');
    const count = 100;
    const ids = Array.from({ length: count }, (_, i) => `u-${i + 1}`);
    const groups = join(sandbox.root, 'groups.ndjson');
    writeFileSync(
      groups,
      ids.map((id) => `${JSON.stringify({ user_group_id: id, name: `Group ${id}` })}\n`).join(''),
    );
    const envOf = (serve: ServeProcess) => ({
      UGS_BASE_URL: serve.url,
      UGS_API_TOKEN: serve.tokenFor('Customer'),
      UGS_DIALECT: 'customer',
    });
    // The groups are made by a first service; the same data is then served with every fifth
    // request held 2 s before it is done, so the kill finds updates in flight.
    const seeding = await serveUgs(['--dialect', 'customer', '--data', data], { sandbox });
    processes.push(seeding);
    const created = await runMain(
      [
        'get',
        '--from',
        groups,
        '--output',
        join(sandbox.root, 'created.ndjson'),
        '--rate',
        '200/s',
      ],
      { sandbox, env: envOf(seeding), timeoutMs: 60_000 },
    );
    expect(created.code, describeRun(created)).toBe(0);
    await seeding.stop();
    const serve = await serveUgs(
      ['--debug', '--dialect', 'customer', '--data', data, '--fault', 'slow:0.2', '--seed', '7'],
      { sandbox },
    );
    processes.push(serve);
    const env = envOf(serve);

    const changes = join(sandbox.root, 'changes.csv');
    writeFileSync(
      changes,
      `user_group_id,name,properties.plan\n${ids.map((id) => `${id},Renamed ${id},pro`).join('\n')}\n`,
    );
    const out = join(sandbox.root, 'updated.ndjson');
    const args = ['update', '--from', changes, '--output', out, '--concurrency', '4'];
    // Paced so the kill lands mid-run: 100 rows at 40/s take about 2.5 s.
    const { child, result } = startUgs([...args, '--rate', '40/s'], { sandbox, env });
    await untilResults(out, { status: 'updated', count: 30 });
    child.kill('SIGKILL');
    await result;
    const first = readRecords<Rec>(out);
    const doneBefore = new Set(first.filter((r) => r.status === 'updated').map((r) => r.row));
    expect(doneBefore.size).toBeGreaterThan(10);
    expect(doneBefore.size).toBeLessThan(count);
    // Rows sent without a recorded answer: what --resume must not send blind.
    const inDoubt = [...lastByRow(first).values()].filter((r) => r.status === 'sending');
    expect(inDoubt.length).toBeGreaterThan(0);

    // --timeout 4: the resumed run waits that long after the killed run's last `sending` record
    // before reading rows back (a held request of that run lands 2 s after it was sent).
    const resumed = await runMain([...args, '--resume', '--timeout', '4', '--rate', '200/s'], {
      sandbox,
      env,
      timeoutMs: 60_000,
    });
    expect(resumed.code, describeRun(resumed)).toBe(0);
    for (const rec of readRecords<Rec>(out).slice(first.length)) {
      expect(doneBefore.has(rec.row), `row ${rec.row} was done before the kill`).toBe(false);
    }
    const last = lastByRow(readRecords<Rec>(out));
    expect(last.size).toBe(count);
    for (const rec of last.values())
      expect(rec.status, `row ${rec.row}: ${rec.error}`).toBe('updated');

    // The service's own count: one update request per group.
    const perId = new Map<string, number>();
    for (const line of serve.stderr().split('\n')) {
      const id = /POST \/api\/update_customer\/ 200 .*\bupdated id="([^"]+)"/.exec(line)?.[1];
      if (id !== undefined) perId.set(id, (perId.get(id) ?? 0) + 1);
    }
    expect(ids.filter((id) => perId.get(id) !== 1)).toEqual([]);
  }, 120_000);
});
