/**
 * `get --from` of a few hundred rows against `ugs serve --dialect explo
 * --rate-limit` (DRF's sliding window per client IP) with `--rate` set to the same limit: not one
 * 429, and a wall time within 10% of rows / rate. Both are the built binary, as a user runs them.
 * The limit is scaled up from the vendor's 180/min to 3000/min so that the run takes seconds,
 * with the vendor's one-minute window. Without pacing a run is throttled at once (the second
 * test, against a one-second window that a burst overruns), so the pacing is what passes the
 * first. That a paced run also stays under a window shorter than itself is shown with fake
 * clocks and jittered arrivals (test/bulk/rate.test.ts), where no machine load can flake.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastByRow, readRecords } from '../kit/bulk.js';
import { describeRun, makeSandbox, runUgs, type ServeProcess, serveUgs } from '../kit/index.js';

const ROWS = 300;
const RATE = 3000; // per minute

let serve: ServeProcess;
let bursty: ServeProcess;

beforeAll(async () => {
  [serve, bursty] = await Promise.all([
    serveUgs(['--debug', '--dialect', 'explo', '--rate-limit', `${RATE}/min`]),
    serveUgs(['--debug', '--dialect', 'explo', '--rate-limit', '20/s']),
  ]);
});

afterAll(async () => {
  await Promise.all([serve?.stop(), bursty?.stop()]);
});

function throttledAnswers(server: ServeProcess = serve): number {
  return server
    .stderr()
    .split('\n')
    .filter((line) => / POST \/api\/create_user_group\/ 429 /.test(line)).length;
}

function rowsFile(dir: string, prefix: string, count: number): string {
  const path = join(dir, `${prefix}.csv`);
  const lines = Array.from({ length: count }, (_, i) => `${prefix}-${i},Group ${i}`);
  writeFileSync(path, `user_group_id,name\n${lines.join('\n')}\n`);
  return path;
}

describe('get --from against ugs serve --dialect explo --rate-limit', () => {
  it(`${ROWS} rows with --rate ${RATE}/min: no 429, and done within 10% of rows / rate`, async () => {
    const sb = makeSandbox();
    const output = join(sb.root, 'results.ndjson');
    const env = {
      UGS_BASE_URL: serve.url,
      UGS_API_TOKEN: serve.tokenFor('Customer'),
      UGS_DIALECT: 'explo',
    };
    const before = throttledAnswers();
    const result = await runUgs(
      [
        'get',
        '--from',
        rowsFile(sb.root, 'paced', ROWS),
        '--rate',
        `${RATE}/min`,
        '--output',
        output,
      ],
      { sandbox: sb, env, timeoutMs: 60_000 },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(throttledAnswers() - before).toBe(0);
    const outcomes = [...lastByRow(readRecords<{ row: number; status: string }>(output)).values()];
    expect(outcomes.filter((record) => record.status === 'created')).toHaveLength(ROWS);
    // The run's own time, from its summary line: `300 rows in 6.1s (49.0 rows/s): 300 created`.
    const seconds = Number(/\b300 rows in (\d+(?:\.\d+)?)s\b/.exec(result.stderr)?.[1]);
    const ideal = (ROWS / RATE) * 60;
    expect(seconds, result.stderr).toBeGreaterThanOrEqual(ideal * 0.9);
    expect(seconds, result.stderr).toBeLessThanOrEqual(ideal * 1.1);
  });

  it('the same limit without pacing is met with 429s at once (what --rate prevents)', async () => {
    const sb = makeSandbox();
    const env = { UGS_BASE_URL: bursty.url, UGS_API_TOKEN: bursty.tokenFor('Customer') };
    const before = throttledAnswers(bursty);
    // Twice the limit's rows at fifty times its rate: the point is the first 429s.
    const result = await runUgs(
      [
        '--dialect',
        'explo',
        'get',
        '--from',
        rowsFile(sb.root, 'burst', 40),
        '--rate',
        '1000/s',
        '--concurrency',
        '16',
      ],
      { sandbox: sb, env, timeoutMs: 60_000 },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(throttledAnswers(bursty) - before).toBeGreaterThan(0);
  });
});
