/**
 * `ugs delete --from` killed with -9 mid-run against `ugs serve --dialect customer`, then
 * `--resume`d: the built binary (a kill is the point) and the emulator as its own process, whose
 * access lines (`--debug`) say every DELETE it answered. Each group is deleted exactly once; no
 * row that got an answer is sent again; a row left `sending` by the kill is sent once more and
 * its 404 read as deleted (settled).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lastByRow, readRecords, untilResults } from '../kit/bulk.js';
import {
  call,
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
  settled_by?: string;
  error: string | null;
}

const ACCESS_LINE = /^\S+Z DELETE \/api\/delete_customer\/ (\d{3}) \d+ms (.*)$/;

const servers: ServeProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((serve) => serve.stop()));
});

/** The DELETE access lines of the server, once `count` of them are written. */
function deleteLines(serve: ServeProcess, count: number): Promise<string[]> {
  return serve.stderrLines(ACCESS_LINE, count);
}

describe('delete --from: kill -9, then --resume', () => {
  it('every group deleted exactly once, answered rows never sent again, the rest settled; the service holds none', async () => {
    const sandbox = makeSandbox();
    const apiToken = 'apitoken-delete-kill-13579bdf';
    const dataFile = join(sandbox.root, 'state.json');
    const base = [
      '--dialect',
      'customer',
      '--data',
      dataFile,
      '--api-token',
      `${apiToken}:Customer`,
    ];
    const envOf = (server: ServeProcess) => ({
      UGS_BASE_URL: server.url,
      UGS_API_TOKEN: apiToken,
      UGS_DIALECT: 'customer',
    });
    const count = 100;
    const ids = Array.from({ length: count }, (_, i) => `kd-${i + 1}`);

    // The groups, created through ugs itself (by a quick server sharing the state file), and
    // their tokens as the delete input.
    const quick = await serveUgs(base, { sandbox });
    servers.push(quick);
    const groups = join(sandbox.root, 'groups.ndjson');
    writeFileSync(
      groups,
      ids.map((id) => `${JSON.stringify({ user_group_id: id, name: id })}\n`).join(''),
    );
    const created = join(sandbox.root, 'created.ndjson');
    const made = await runMain(['get', '--from', groups, '--output', created, '--rate', '200/s'], {
      sandbox,
      env: envOf(quick),
    });
    expect(made.code, describeRun(made)).toBe(0);
    await quick.stop();
    // A quarter of its answers take 2 s (seeded): the kill finds deletes on their way.
    const serve = await serveUgs([...base, '--debug', '--fault', 'slow:0.25', '--seed', '3'], {
      sandbox,
    });
    servers.push(serve);
    const env = envOf(serve);
    const tokens = new Map<string, string>();
    for (const rec of lastByRow(readRecords<Rec>(created)).values()) {
      tokens.set(rec.user_group_id ?? '', rec.token ?? '');
    }
    expect(tokens.size).toBe(count);
    const input = join(sandbox.root, 'tokens.csv');
    writeFileSync(
      input,
      `user_group_id,current_token\n${ids.map((id) => `${id},${tokens.get(id)}`).join('\n')}\n`,
    );

    // Killed once 30 rows are deleted and at least two are on their way (journaled `sending`,
    // no answer yet).
    const out = join(sandbox.root, 'deleted.ndjson');
    const args = ['delete', '--from', input, '--output', out, '--yes'];
    const { child, result: killed } = startUgs([...args, '--concurrency', '4', '--rate', '20/s'], {
      sandbox,
      env,
    });
    await untilResults(out, { status: 'deleted', count: 30, sending: 2 });
    child.kill('SIGKILL');
    await killed;
    const first = readRecords<Rec>(out);
    const atKill = lastByRow(first);
    const answered = new Set(
      [...atKill.values()].filter((rec) => rec.status === 'deleted').map((rec) => rec.row),
    );
    const inDoubt = new Set(
      [...atKill.values()].filter((rec) => rec.status === 'sending').map((rec) => rec.row),
    );
    expect(answered.size).toBeGreaterThanOrEqual(29);
    expect(answered.size).toBeLessThan(count);
    expect(inDoubt.size).toBeGreaterThanOrEqual(1);

    // --timeout 3: --resume waits that long after the killed run's last `sending` record, so no
    // request of that run (2 s at the slowest) is still on its way when rows are sent again.
    const resumed = await runMain(
      [...args, '--resume', '--concurrency', '16', '--rate', '200/s', '--timeout', '3'],
      {
        sandbox,
        env,
        timeoutMs: 60_000,
      },
    );
    expect(resumed.code, describeRun(resumed)).toBe(0);

    const all = readRecords<Rec>(out);
    for (const rec of all.slice(first.length)) {
      expect(answered.has(rec.row), `row ${rec.row} had its answer before the kill`).toBe(false);
    }
    const last = lastByRow(all);
    expect(last.size).toBe(count);
    const settled = new Set<number>();
    for (const rec of last.values()) {
      expect(rec.status, `row ${rec.row}: ${rec.error}`).toBe('deleted');
      if (rec.settled_by !== undefined) {
        expect(rec.settled_by).toBe('delete');
        settled.add(rec.row);
      }
    }
    // Only a row the kill left `sending` can have been settled, and one was (its delete had
    // reached the service before the kill).
    for (const row of settled) expect(inDoubt.has(row), `row ${row}`).toBe(true);
    expect(settled.size).toBeGreaterThanOrEqual(1);

    // The service's side: one DELETE answered 200 per group, and a 404 only for each settled row
    // (its repeat), none for a row answered before the kill.
    const lines = await deleteLines(serve, count + settled.size);
    const deletedIds = new Map<string, number>();
    const refused: string[] = [];
    for (const line of lines) {
      const [, status, rest] = ACCESS_LINE.exec(line) ?? [];
      if (status === '200') {
        const id = /\bdeleted id="([^"]+)"/.exec(rest ?? '')?.[1] ?? '?';
        deletedIds.set(id, (deletedIds.get(id) ?? 0) + 1);
      } else refused.push(line);
    }
    expect(deletedIds.size).toBe(count);
    for (const id of ids) expect(deletedIds.get(id), id).toBe(1);
    expect(refused).toHaveLength(settled.size);
    const settledLast4 = [...settled].map((row) =>
      (tokens.get(ids[row - 1] ?? '') ?? '').slice(-4),
    );
    for (const line of refused) {
      expect(line).toMatch(/ 404 /);
      expect(
        settledLast4.some((last4) => line.includes(`…${last4}`)),
        line,
      ).toBe(true);
    }

    // And the service holds none of the groups (asked all at once: some answers are slow).
    const replies = await Promise.all(
      ids.map((id) =>
        call(serve.url, {
          method: 'POST',
          path: '/api/get_customer/',
          token: null,
          headers: { 'explo-authorization': `Token ${apiToken}` },
          body: { provided_id: id },
        }),
      ),
    );
    expect(new Set(replies.map((reply) => reply.status))).toEqual(new Set([404]));
    // No token reached the results or the output.
    const text = `${readFileSync(out, 'utf8')}${resumed.stdout}${resumed.stderr}`;
    for (const token of tokens.values()) expect(text).not.toContain(token);
  }, 120_000);
});
