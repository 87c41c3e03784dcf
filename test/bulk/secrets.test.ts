/**
 * Bulk rotate and the tokens of its rows: every row's current token (and every new one) is a
 * known secret of the run. A server that quotes a current token back in free text does not get
 * it into a `--debug` trace or a message, and under a CI runner each one is masked before any
 * line that may carry it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { redactSecrets, SecretSet } from '../../src/text/redact.js';
import { Capture, makeIO } from '../kit/fakes.js';
import {
  type ReplyContext,
  sendJson,
  startServer,
  type TestServer,
  tempDir,
} from '../kit/index.js';

const SYSTEM = {
  platform: 'linux' as const,
  homedir: '/nonexistent',
  nodeVersion: 'v20.0.0',
  uid: process.getuid?.(),
  waitForShutdown: () => new Promise<string>(() => {}),
};

const CURRENT = ['current-token-aaaa1111', 'current-token-bbbb2222', 'current-token-cccc3333'];

let server: TestServer;

/**
 * Rotates the first two rows' tokens, quoting the token sent in a free-text field (no token-named
 * key), and refuses the third with the token in its message.
 */
function quotingService(ctx: ReplyContext): void {
  const sentToken = (JSON.parse(ctx.request.body) as { current_token: string }).current_token;
  const row = CURRENT.indexOf(sentToken);
  if (row === 2) {
    sendJson(ctx.res, 400, { success: 0, detail: `unknown: ${sentToken} was revoked` });
    return;
  }
  sendJson(ctx.res, 200, {
    success: 1,
    user_group: {
      team_id: row + 1,
      token: `new-token-${row}-0123456789`,
      name: `Group ${row}`,
      provided_id: `g${row}`,
      api_environment_tag: 'Customer',
      note: `replaces ${sentToken}`,
    },
  });
}

beforeAll(async () => {
  server = await startServer(quotingService);
});
afterAll(async () => {
  await server.close();
});

/** A bulk rotate run in-process, stdout and stderr into one capture, as a runner reads a step. */
async function bulkRotate(extraArgs: string[], env: Record<string, string>) {
  const dir = tempDir('bulk-secrets');
  const from = join(dir, 'tokens.csv');
  writeFileSync(from, `current_token\n${CURRENT.join('\n')}\n`);
  const merged = new Capture();
  const io = {
    ...makeIO({
      env: {
        UGS_CONFIG_DIR: join(dir, 'config'),
        UGS_BASE_URL: server.url,
        UGS_API_TOKEN: 'api-token-0123456789',
        ...env,
      },
    }),
    stdout: merged,
    stderr: merged,
  };
  const output = join(dir, 'rotated.ndjson');
  const code = await main(
    ['rotate', '--from', from, '--output', output, '--yes', ...extraArgs],
    io,
    SYSTEM,
  );
  return { code, text: merged.text, context: merged.text };
}

describe('bulk rotate: the rows tokens are secrets of the run', () => {
  it('--debug never prints a current token the server quotes back', async () => {
    const result = await bulkRotate(['--debug', '--concurrency', '1'], {});
    expect(result.code, result.context).toBe(1);
    expect(result.text, result.context).toMatch(/^\[debug\] < .*replaces …1111/m);
    expect(result.text, result.context).toMatch(/unknown: …3333 was revoked/);
    for (const token of CURRENT) expect(result.text, result.context).not.toContain(token);
  });

  for (const [runner, env] of [
    ['GitHub Actions', { GITHUB_ACTIONS: 'true' }],
    ['Azure Pipelines', { TF_BUILD: 'True' }],
  ] as const) {
    it(`${runner}: every current and new token is masked before any line that may carry it`, async () => {
      const mask = runner === 'GitHub Actions' ? '::add-mask::' : '##vso[task.setsecret]';
      const result = await bulkRotate(['--debug'], env);
      expect(result.code, result.context).toBe(1);
      const tokens = [...CURRENT, 'new-token-0-0123456789', 'new-token-1-0123456789'];
      for (const token of tokens) {
        const masked = result.text.indexOf(`${mask}${token}\n`);
        expect(masked, `${token} not masked\n${result.context}`).toBeGreaterThanOrEqual(0);
        expect(result.text.indexOf(token), `${token} before its mask`).toBe(masked + mask.length);
        // Fingerprinted in the trace all the same.
        expect(result.text, result.context).toContain(`…${token.slice(-4)}`);
      }
    });
  }
});

describe('SecretSet', () => {
  it('redacts every secret, the longest first where two start at one place', () => {
    const secrets = new SecretSet(['abcd1234', 'abcd12345678', 'zz']);
    expect(secrets.redact('x abcd12345678 y abcd1234 zz', (s) => `<${s.length}>`)).toBe(
      'x <12> y <8> zz',
    );
    expect(redactSecrets('a secret-1 b', ['secret-1'])).toBe('a [REDACTED] b');
  });

  it('is linear in the number of secrets (a bulk run of many rows with --debug)', () => {
    const tokenOf = (i: number) => `row-token-${i.toString(36).padStart(8, '0')}`;
    const setOf = (count: number) => {
      const secrets = new SecretSet();
      for (let i = 0; i < count; i++) secrets.add(tokenOf(i));
      return secrets;
    };
    const line = `{"note":"${tokenOf(777)}"} `.repeat(20);
    let out = '';
    /** The best of three passes of 1,000 lines: the least the machine's load added. */
    const time = (secrets: SecretSet) => {
      let best = Number.POSITIVE_INFINITY;
      for (let pass = 0; pass < 3; pass++) {
        const started = performance.now();
        for (let i = 0; i < 1000; i++) out = secrets.redact(line, () => '***');
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    // A ratio, not a wall-clock bound: 100 times the secrets may not cost 100 times the time
    // (the split-per-secret loop did, and took minutes for this), whatever the machine's load.
    const few = time(setOf(1_000));
    const many = time(setOf(100_000));
    expect(many, `${Math.round(many)} ms vs ${Math.round(few)} ms`).toBeLessThan(10 * few + 50);
    expect(out).not.toContain('row-token');
  });
});
