/**
 * Bulk runs of the built binary against the kit's scripted server: how many connections a run
 * opens, the exit code when some rows fail and the rest succeed, and the progress bar at a
 * terminal.
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  delay,
  makeSandbox,
  okBody,
  type Reply,
  runUgs,
  sendJson,
  describeRun as show,
  startPty,
  startServer,
  stripAnsi,
  type TestServer,
  userGroup,
} from '../kit/index.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Rec {
  row: number;
  user_group_id: string | null;
  status: string;
  error: string | null;
  http_status: number | null;
}

function rows(count: number): string {
  return Array.from(
    { length: count },
    (_, i) => `${JSON.stringify({ user_group_id: `g-${i + 1}`, name: `Group ${i + 1}` })}\n`,
  ).join('');
}

function recordsOf(stdout: string): Rec[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Rec);
}

/** Get User answered as the service does: the group of the id asked for. */
const echo: Reply = ({ res, request }) => {
  const asked = JSON.parse(request.body) as { user_group_id: string; name: string };
  sendJson(
    res,
    200,
    okBody({
      user_group: userGroup({
        provided_id: asked.user_group_id,
        name: asked.name,
        token: `tok-${asked.user_group_id}`,
      }),
    }),
  );
};

function envFor(target: TestServer) {
  return { UGS_BASE_URL: target.url, UGS_API_TOKEN: 'api-token-0123456789' };
}

describe('bulk runs against a scripted service', () => {
  it('opens no more connections than --concurrency', async () => {
    server = await startServer(echo);
    const sandbox = makeSandbox();
    const file = join(sandbox.root, 'groups.ndjson');
    writeFileSync(file, rows(120));
    const result = await runUgs(['get', '--from', file, '--concurrency', '3'], {
      sandbox,
      env: envFor(server),
    });
    expect(result.code, show(result)).toBe(0);
    expect(server.requests).toHaveLength(120);
    expect(server.connections).toBeLessThanOrEqual(3);
  });

  it('exits 1 when some rows fail, after doing every other row', async () => {
    const refuseSome: Reply = (ctx) => {
      const asked = JSON.parse(ctx.request.body) as { user_group_id: string };
      if (asked.user_group_id === 'g-3' || asked.user_group_id === 'g-7') {
        sendJson(ctx.res, 400, { name: ['Ensure this field has no more than 255 characters.'] });
        return;
      }
      return echo(ctx);
    };
    server = await startServer(refuseSome);
    const sandbox = makeSandbox();
    const file = join(sandbox.root, 'groups.ndjson');
    writeFileSync(file, rows(8));
    const result = await runUgs(['get', '--from', file, '--concurrency', '2'], {
      sandbox,
      env: envFor(server),
    });
    expect(result.code, show(result)).toBe(1);
    const recs = recordsOf(result.stdout);
    expect(recs.map((rec) => rec.row).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const failed = recs.filter((rec) => rec.status === 'failed');
    expect(failed.map((rec) => rec.user_group_id).sort()).toEqual(['g-3', 'g-7']);
    for (const rec of failed) {
      expect(rec.http_status).toBe(400);
      expect(rec.error).toContain('name: Ensure this field has no more than 255 characters.');
    }
    expect(recs.filter((rec) => rec.status === 'found')).toHaveLength(6);
    // Each failed row was sent once: a 400 is not retried.
    expect(server.requests).toHaveLength(8);
    expect(result.stderr).toMatch(/8 rows in .*: 6 found, 2 failed/);
    expect(result.stderr).toMatch(/^error: 2 of 8 rows failed$/m);
    expect(result.stderr).toMatch(/^hint: /m);
  });

  it('draws a progress bar at a terminal, takes it off for each row line, then clears it for the summary', async () => {
    server = await startServer(delay(25, echo));
    const sandbox = makeSandbox();
    const file = join(sandbox.root, 'groups.ndjson');
    writeFileSync(file, rows(30));
    const pty = startPty(sandbox, ['get', '--from', file, '--concurrency', '1'], {
      env: envFor(server),
      timeoutMs: 30_000,
    });
    // The bar, part done: [###.....] done/total, percent, rate.
    await pty.waitFor(/\[#+\.+\] ([1-9]|1\d|2\d)\/30 {2}\d+% {2}[\d.]+ rows\/s/, 15_000);
    await pty.waitFor(/30 rows in \S+ \([\d.]+ rows\/s\): 30 found/, 15_000);
    const exit = await pty.finish();
    expect(exit.code, pty.text()).toBe(0);
    // Row lines on stdout share the screen with the bar: each line, as it is left on the screen
    // (what follows its last carriage return), is a whole row line, never a bar with a row after it.
    const screenLines = pty.raw.split('\n').map((line) => {
      const segments = stripAnsi(line)
        .split('\r')
        .filter((segment) => segment !== '');
      return segments.at(-1) ?? '';
    });
    const rowLines = screenLines.filter((line) => /g-\d+/.test(line));
    expect(rowLines).toHaveLength(30);
    for (const line of rowLines) expect(line).toMatch(/^ {1,2}\d+ {2}g-\d+ +found +\u2026\S{0,4}$/);
    // Erased before the summary: carriage return, then "erase to the end of the line".
    expect(screenLines.filter((line) => line.includes('['))).toEqual([]);
    expect(screenLines).toContainEqual(expect.stringMatching(/^30 rows in .*: 30 found$/));
    expect(server.requests).toHaveLength(30);
  });

  it.each(['ndjson', 'csv'])(
    '--resume refuses a %s results file written for another input (exit 2, nothing sent)',
    async (format) => {
      server = await startServer(echo);
      const sandbox = makeSandbox();
      const first = join(sandbox.root, 'first.ndjson');
      const other = join(sandbox.root, 'other.ndjson');
      writeFileSync(first, rows(5));
      // Same row count, one id changed: row numbers alone would match.
      writeFileSync(other, rows(5).replace('"g-3"', '"g-x"'));
      const out = join(sandbox.root, `results.${format}`);
      const env = envFor(server);
      const done = await runUgs(['get', '--from', first, '--output', out], { sandbox, env });
      expect(done.code, show(done)).toBe(0);
      const sent = server.requests.length;

      const refused = await runUgs(['get', '--from', other, '--output', out, '--resume'], {
        sandbox,
        env,
      });
      expect(refused.code, show(refused)).toBe(2);
      expect(refused.stderr).toMatch(/^error: --resume: .* holds the results of another input/m);
      expect(refused.stderr).toMatch(/^hint: .*a new --output file/m);
      expect(server.requests.length).toBe(sent);

      // Fewer rows than the results hold: another input too, though every id it has matches.
      const shorter = join(sandbox.root, 'shorter.ndjson');
      writeFileSync(shorter, rows(3));
      const cut = await runUgs(['get', '--from', shorter, '--output', out, '--resume'], {
        sandbox,
        env,
      });
      expect(cut.code, show(cut)).toBe(2);
      expect(cut.stderr).toMatch(/^error: --resume: .*the results have row 5; this input has 3/m);
      expect(server.requests.length).toBe(sent);

      // The input it was written for resumes: every row is done, nothing is sent again.
      const same = await runUgs(['get', '--from', first, '--output', out, '--resume'], {
        sandbox,
        env,
      });
      expect(same.code, show(same)).toBe(0);
      expect(same.stderr).toContain('5 rows are done already');
      expect(server.requests.length).toBe(sent);
    },
  );
});
