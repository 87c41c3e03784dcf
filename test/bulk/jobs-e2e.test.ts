/**
 * Bulk runs in-process (runMain) against a service behind a gateway: a gateway that says the
 * service is down pauses the run and probes it, stopping (exit 4, the rest `skipped`, `--resume`
 * continues) only when it stays down; a blip costs no row. A slash-only service's redirect is
 * learnt once per run.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UNAVAILABLE_STREAK } from '../../src/bulk/run.js';
import { bulkRowsFile, lastByRow } from '../kit/bulk.js';
import {
  customerEnv,
  json,
  makeSandbox,
  okBody,
  type Reply,
  runMain,
  describeRun as show,
  startEmulator,
  startServer,
  type TestServer,
  text,
  userGroup,
} from '../kit/index.js';

const BAD_GATEWAY_HTML =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function env(url: string) {
  return { UGS_BASE_URL: url, UGS_API_TOKEN: 'api-token-0123456789' };
}

function lines(path: string): { row: number; status: string; error: string | null }[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { row: number; status: string; error: string | null });
}

describe('a service that stays down stops the run after a pause, having sent a few probes', () => {
  // Side by side: each case spends its 3 s waiting for --give-up-after, each with its own server.
  it.concurrent.for([
    ['get', 502, 'HTML'],
    ['get', 504, 'HTML'],
    ['get', 503, 'JSON without Retry-After'],
    ['get', 500, 'HTML'],
    ['rotate', 502, 'HTML'],
  ] as const)(
    '%s --from of 200 rows against %i (%s): a few requests and probes, exit 4, the rest skipped, --resume hint',
    { timeout: 70_000 },
    async ([kind, status, body], { expect, onTestFinished }) => {
      const server = await startServer(
        body === 'HTML'
          ? text(status, BAD_GATEWAY_HTML, 'text/html')
          : json(status, { detail: 'Service temporarily unavailable.' }),
      );
      onTestFinished(() => server.close());
      const sandbox = makeSandbox();
      const rows = bulkRowsFile(sandbox.root, kind, 200);
      const out = join(sandbox.root, 'out.ndjson');
      // The pause lasts 2 minutes unless --give-up-after is shorter.
      const args = [kind, '--from', rows, '--output', out, '--give-up-after', '3s'];
      const result = await runMain(kind === 'rotate' ? [...args, '--yes'] : args, {
        sandbox,
        env: env(server.url),
        timeoutMs: 60_000,
      });
      const context = show(result);
      expect(result.code, context).toBe(4);
      expect(result.stderr, context).toMatch(/^error: the service is unavailable: /m);
      expect(result.stderr, context).toMatch(/^hint: run the same command with --resume/m);
      expect(result.stderr, context).toMatch(/ and [12] probes? over \d\.\ds did not get through/);
      // The probe: doctor's, the API path with an empty body, which changes nothing. Probes at
      // 1 s and at the 3-second limit.
      const probes = server.requests.filter((request) => request.body === '{}');
      expect(probes.length, context).toBeGreaterThan(0);
      expect(probes.length, context).toBeLessThanOrEqual(2);
      // Not 600 requests for 200 rows: the streak, each with its retries, and the rows in flight
      // at the default concurrency (8) when the run paused; then the probes alone.
      expect(server.requests.length - probes.length, context).toBeLessThanOrEqual(
        (UNAVAILABLE_STREAK + 8) * 3,
      );
      const last = lastByRow(lines(out));
      expect(last.size, context).toBe(200);
      const statuses = [...last.values()].map((rec) => rec.status);
      expect(statuses.filter((s) => s === 'skipped').length, context).toBeGreaterThan(150);
      expect(
        statuses.filter((s) => s === 'sending'),
        context,
      ).toEqual([]);
    },
  );

  it('a success between resets the count: a service failing every other request is not "down", and no row is lost to it', async () => {
    // A gateway's HTML 500 (not retried by the transport) for every other request: without the
    // successes between, UNAVAILABLE_STREAK of these would pause the run.
    const bad = text(500, BAD_GATEWAY_HTML, 'text/html');
    // The group each request asked for, so that every answer is the row's own.
    const good: Reply = (ctx) => {
      const asked = JSON.parse(ctx.request.body) as { user_group_id: string; name: string };
      return json(
        200,
        okBody({ user_group: userGroup({ provided_id: asked.user_group_id, name: asked.name }) }),
      )(ctx);
    };
    server = await startServer((ctx) => (ctx.index % 2 === 0 ? bad(ctx) : good(ctx)));
    const sandbox = makeSandbox();
    const rows = join(sandbox.root, 'rows.ndjson');
    const count = UNAVAILABLE_STREAK * 4;
    writeFileSync(
      rows,
      Array.from({ length: count }, (_, i) =>
        JSON.stringify({ user_group_id: `acme-${i}`, name: 'Acme' }),
      ).join('\n'),
    );
    const result = await runMain(['get', '--from', rows, '--concurrency', '1'], {
      sandbox,
      env: env(server.url),
      timeoutMs: 60_000,
    });
    // A gateway's answer is a blip, not the row's: each row met one, and was tried once more.
    expect(result.code, show(result)).toBe(0);
    expect(result.stderr, show(result)).not.toMatch(/unavailable/);
    expect(server.requests.length, show(result)).toBe(count * 2);
  }, 70_000);
});

describe('a slash-only service: the redirect is learnt once per run', () => {
  it('get --from of 40 rows: at most one redirect per row in flight, one note, every row done', async () => {
    const lines: string[] = [];
    const emulator = await startEmulator({
      trailingSlash: true,
      log: (line) => void lines.push(line.slice(line.indexOf(' ') + 1)),
    });
    try {
      const sandbox = makeSandbox();
      const rows = join(sandbox.root, 'rows.ndjson');
      writeFileSync(
        rows,
        Array.from({ length: 40 }, (_, i) =>
          JSON.stringify({ user_group_id: `s-${i}`, name: `S ${i}` }),
        ).join('\n'),
      );
      const result = await runMain(['get', '--from', rows, '--concurrency', '2'], {
        sandbox,
        env: customerEnv(emulator),
        timeoutMs: 60_000,
      });
      const context = show(result);
      expect(result.code, context).toBe(0);
      expect(result.stdout.trim().split('\n'), context).toHaveLength(40);
      const notes = result.stderr.match(/^note: the service redirected .*$/gm) ?? [];
      expect(notes, context).toHaveLength(1);
      expect(notes[0]).toMatch(
        /redirected \/api\/user to \/api\/user\/;.*--api-path \/api\/user\//,
      );
      const requests = lines.filter((line) => /^(GET|POST) \//.test(line));
      // Only the rows sent before the first redirect came back meet it (2 in flight).
      expect(requests.filter((line) => / 301 /.test(line)).length, context).toBeLessThanOrEqual(2);
      expect(
        requests.filter((line) => /^GET \/api\/user\/ /.test(line)),
        context,
      ).toHaveLength(40);
    } finally {
      await emulator.close();
    }
  });

  it('rotate --from: the rotations go to the learnt path, each token rotated once', async () => {
    const emulator = await startEmulator({ trailingSlash: true });
    try {
      const sandbox = makeSandbox();
      const env = customerEnv(emulator);
      const groups = join(sandbox.root, 'groups.ndjson');
      writeFileSync(
        groups,
        Array.from({ length: 10 }, (_, i) =>
          JSON.stringify({ user_group_id: `r-${i}`, name: `R ${i}` }),
        ).join('\n'),
      );
      const got = await runMain(['get', '--from', groups], { sandbox, env });
      expect(got.code, show(got)).toBe(0);
      const tokens = got.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { token: string }).token);
      const input = join(sandbox.root, 'tokens.ndjson');
      writeFileSync(input, tokens.map((t) => JSON.stringify({ current_token: t })).join('\n'));
      const out = join(sandbox.root, 'rotated.ndjson');
      const rotated = await runMain(
        ['rotate', '--from', input, '--output', out, '--yes', '--concurrency', '2'],
        { sandbox, env },
      );
      expect(rotated.code, show(rotated)).toBe(0);
      expect(rotated.stderr.match(/^note: the service redirected/gm), show(rotated)).toHaveLength(
        1,
      );
      const last = lastByRow(lines(out));
      expect([...last.values()].map((rec) => rec.status)).toEqual(Array(10).fill('rotated'));
    } finally {
      await emulator.close();
    }
  });
});
