/**
 * `ugs rotate --from --output-tokens last4` killed with -9 mid-run against `ugs serve` (its own
 * process, whose `--debug` access lines say every rotation it made), then `--resume`d: each group
 * is rotated exactly once, the results file never holds a whole token (old or new), and every
 * group's new token reached stdout (the killed run's or the resumed run's).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
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

interface Rec {
  row: number;
  user_group_id: string | null;
  status: string;
  token: string | null;
  token_last4?: string | null;
  token_sha256?: string | null;
  settled_by?: string | null;
  error: string | null;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function ndjson(text: string): Rec[] {
  return text
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line) as Rec);
}

const servers: ServeProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((serve) => serve.stop()));
});

/** The ids the server rotated (200 access lines), once `count` of them are written. */
async function rotatedIds(serve: ServeProcess, count: number): Promise<string[]> {
  const lines = await serve.stderrLines(/ 200 \d+ms .*\brotated id="[^"]+"/, count);
  return lines.map((line) => /\brotated id="([^"]+)"/.exec(line)?.[1] ?? '');
}

describe('rotate --from --output-tokens last4: kill -9, then --resume', () => {
  it('every group rotated exactly once, every new token on stdout, no whole token in the file', async () => {
    const sandbox = makeSandbox();
    const apiToken = 'apitoken-last4-kill-2468ace0';
    const dataFile = join(sandbox.root, 'state.json');
    const base = ['--data', dataFile, '--api-token', `${apiToken}:Customer`];
    const envOf = (server: ServeProcess) => ({ UGS_BASE_URL: server.url, UGS_API_TOKEN: apiToken });
    const count = 100;
    const ids = Array.from({ length: count }, (_, i) => `lk-${i + 1}`);

    // The groups, made through ugs itself by a quick server sharing the state file.
    const quick = await serveUgs(base, { sandbox });
    servers.push(quick);
    const groups = join(sandbox.root, 'groups.ndjson');
    writeFileSync(
      groups,
      ids.map((id) => `${JSON.stringify({ user_group_id: id, name: id })}\n`).join(''),
    );
    const made = await runMain(['get', '--from', groups, '--rate', '200/s'], {
      sandbox,
      env: envOf(quick),
    });
    expect(made.code, describeRun(made)).toBe(0);
    const oldTokens = new Map(
      ndjson(made.stdout).map((r) => [r.user_group_id ?? '', r.token ?? '']),
    );
    expect(oldTokens.size).toBe(count);
    await quick.stop();
    const input = join(sandbox.root, 'tokens.csv');
    writeFileSync(
      input,
      `user_group_id,name,current_token\n${ids.map((id) => `${id},${id},${oldTokens.get(id)}`).join('\n')}\n`,
    );

    // A quarter of the answers take 2 s (seeded): the kill finds rotations on their way.
    const serve = await serveUgs([...base, '--debug', '--fault', 'slow:0.25', '--seed', '5'], {
      sandbox,
    });
    servers.push(serve);
    const env = envOf(serve);
    const out = join(sandbox.root, 'rotated.ndjson');
    const args = ['rotate', '--from', input, '--output', out, '--output-tokens', 'last4', '--yes'];
    const { child, result: killed } = startUgs([...args, '--concurrency', '4', '--rate', '20/s'], {
      sandbox,
      env,
    });
    await untilResults(out, { status: 'rotated', count: 30, sending: 2 });
    child.kill('SIGKILL');
    const first = await killed;
    const atKill = lastByRow(readRecords<Rec>(out));
    const doneAtKill = new Set(
      [...atKill.values()].filter((rec) => rec.status === 'rotated').map((rec) => rec.row),
    );
    expect(doneAtKill.size).toBeGreaterThanOrEqual(29);
    expect(doneAtKill.size).toBeLessThan(count);
    expect([...atKill.values()].some((rec) => rec.status === 'sending')).toBe(true);
    const linesAtKill = readRecords<Rec>(out).length;

    // --timeout 3: --resume waits that long after the killed run's last `sending` record, so no
    // request of that run (2 s at the slowest) is still on its way when rows are read back.
    const resumed = await runMain(
      [...args, '--resume', '--concurrency', '16', '--rate', '200/s', '--timeout', '3'],
      { sandbox, env, timeoutMs: 60_000 },
    );
    expect(resumed.code, describeRun(resumed)).toBe(0);

    // The service's side: one rotation per group, none twice.
    const rotated = await rotatedIds(serve, count);
    const times = new Map<string, number>();
    for (const id of rotated) times.set(id, (times.get(id) ?? 0) + 1);
    for (const id of ids) expect(times.get(id), id).toBe(1);
    expect(rotated).toHaveLength(count);

    // The groups' tokens now, and where they went.
    const read = await runMain(['get', '--from', groups, '--rate', '200/s'], { sandbox, env });
    expect(read.code, describeRun(read)).toBe(0);
    const newTokens = new Map(
      ndjson(read.stdout).map((r) => [r.user_group_id ?? '', r.token ?? '']),
    );
    const printed = new Set(
      [...ndjson(first.stdout), ...ndjson(resumed.stdout)].map((rec) => rec.token),
    );
    for (const id of ids) {
      const token = newTokens.get(id) ?? '';
      expect(token).not.toBe(oldTokens.get(id));
      expect(printed.has(token), `${id}'s new token reached stdout`).toBe(true);
    }
    // Rows done before the kill were not sent again (their records come first, once).
    const all = readRecords<Rec>(out);
    for (const rec of all.slice(linesAtKill))
      expect(doneAtKill.has(rec.row), `row ${rec.row}`).toBe(false);
    const last = lastByRow(all);
    expect(last.size).toBe(count);
    for (const rec of last.values()) {
      const token = newTokens.get(rec.user_group_id ?? '') ?? '';
      expect(rec, `row ${rec.row}: ${rec.error}`).toMatchObject({
        status: 'rotated',
        token: null,
        token_last4: token.slice(-4),
        token_sha256: sha256(token),
      });
    }
    // No whole token, old or new, in the results file.
    const text = readFileSync(out, 'utf8');
    for (const token of [...oldTokens.values(), ...newTokens.values()]) {
      expect(text).not.toContain(token);
    }
  }, 120_000);
});
