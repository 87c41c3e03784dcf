/**
 * A service that throttles without end (every answer 429 or 503 with `Retry-After: 30`) against
 * the built binary: a bulk run stops once no request has succeeded for `--give-up-after`, as for
 * a service that is down (exit 4, `--resume` hint), instead of going on for days. The default
 * of ten minutes is covered in-process with a fake clock (test/bulk/outcomes.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bulkRowsFile } from '../kit/bulk.js';
import {
  describeRun,
  json,
  makeSandbox,
  runUgs,
  startServer,
  type TestServer,
} from '../kit/index.js';

const env = (target: TestServer) => ({
  UGS_BASE_URL: target.url,
  UGS_API_TOKEN: 'api-token-0123456789',
});

/** What the service asks for each time: ugs's own cap (MAX_RETRY_AFTER_MS). */
const RETRY_AFTER_S = 30;

// Side by side (describe.concurrent): each test waits out its own two seconds of trying,
// against its own server, closed through its own test context.
describe.concurrent('endless throttling', () => {
  it.for([
    ['get', 429],
    ['get', 503],
    ['rotate', 429],
  ] as const)(
    '%s --from against %i + Retry-After: 30 forever ends with exit 4 after --give-up-after',
    { timeout: RETRY_AFTER_S * 1000 + 5_000 },
    async ([kind, status], { onTestFinished }) => {
      const server = await startServer(
        json(
          status,
          { success: 0, detail: 'Request was throttled.' },
          { 'Retry-After': String(RETRY_AFTER_S) },
        ),
      );
      onTestFinished(() => server.close());
      const sandbox = makeSandbox();
      const rows = bulkRowsFile(sandbox.root, kind, 200);
      const out = join(sandbox.root, 'out.ndjson');
      const args = [kind, '--from', rows, '--output', out, '--give-up-after', '2s'];
      // Two seconds of trying, not 30 s per wait: a run that honoured one Retry-After before
      // giving up could not end before 30 s, so its deadline, just under that, fails it. No
      // bound nearer the 2 s, which a loaded machine could overrun.
      const result = await runUgs(kind === 'rotate' ? [...args, '--yes'] : args, {
        sandbox,
        env: env(server),
        timeoutMs: RETRY_AFTER_S * 1000 - 2_000,
      });
      const context = describeRun(result);
      expect(result.code, context).toBe(4);
      expect(result.stderr, context).toMatch(
        /^error: gave up: no request has succeeded for 2\.0s/m,
      );
      expect(result.stderr, context).toMatch(/^hint: .*--resume/m);
      expect(result.stderr, context).not.toContain('unexpected');
      const statuses = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { status: string }).status)
        .filter((s) => s !== 'sending');
      expect(statuses.filter((s) => s === 'skipped').length, context).toBeGreaterThan(150);
    },
  );
});
