/**
 * `--debug` as a user reads it: the trace starts with the profile, the base URL and the API path
 * and where each came from, then the API token's source and fingerprint; every line of a
 * multi-line body carries the prefix; tokens are fingerprints (`…a1b2`), never whole; and stack
 * traces point at src/*.ts through the source maps, which only --debug loads (that the build
 * ships them is checked with the bundles, in test/install/bundle.process.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { StreamTracer } from '../../src/output/debug.js';
import { Capture } from '../kit/fakes.js';
import {
  acmeBody,
  describeRun,
  json,
  makeSandbox,
  runMain,
  STACK_LINE,
  startServer,
  text,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'api-token-SECRET-0123-a1b2';
const GROUP_TOKEN = 'ugt_hardening_token_0001';

function traceOf(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('[debug]'));
}

describe('--debug trace: where the settings came from', () => {
  it('names profile, base URL, API path and token source from flags and env', async () => {
    const server = await startServer(json(200, acmeBody()));
    try {
      const result = await runMain(
        ['get', '--id', 'acme', '--name', 'Acme Corp', '--base-url', server.url, '--debug'],
        { env: { UGS_API_TOKEN: API_TOKEN, UGS_PROFILE: 'work' } },
      );
      expect(result.code, describeRun(result)).toBe(0);
      expect(traceOf(result.stderr).slice(0, 5)).toEqual([
        '[debug] * profile: work (env UGS_PROFILE)',
        `[debug] * base URL: ${server.url} (flag --base-url)`,
        '[debug] * API path: /api/user (default)',
        '[debug] * API token: …a1b2 (env UGS_API_TOKEN)',
        `[debug] > GET ${server.url}/api/user`,
      ]);
      expect(result.stderr).toContain('[debug] > authorization: Token …a1b2\n');
      expect(result.stderr).toContain(`"token":"…${GROUP_TOKEN.slice(-4)}"`);
      expect(result.stderr).not.toContain(API_TOKEN);
      expect(result.stderr).not.toContain(GROUP_TOKEN);
      expect(result.stderr).not.toContain('[REDACTED]');
    } finally {
      await server.close();
    }
  });

  it('names the profile as the source of what it holds', async () => {
    const server = await startServer(json(200, acmeBody()));
    const sandbox = makeSandbox();
    writeConfig(sandbox, {
      profiles: { staging: { baseUrl: server.url, apiToken: API_TOKEN, apiPath: '/api/user' } },
    });
    try {
      const result = await runMain(
        ['get', '--id', 'acme', '--name', 'Acme Corp', '-p', 'staging', '--debug'],
        { sandbox, env: { UGS_BASE_URL: undefined } },
      );
      expect(result.code, describeRun(result)).toBe(0);
      expect(traceOf(result.stderr).slice(0, 4)).toEqual([
        '[debug] * profile: staging (flag --profile)',
        `[debug] * base URL: ${server.url} (profile "staging")`,
        '[debug] * API path: /api/user (profile "staging")',
        '[debug] * API token: …a1b2 (profile "staging")',
      ]);
      expect(result.stderr).not.toContain(API_TOKEN);
    } finally {
      await server.close();
    }
  });

  it('says what is missing when there is no token or base URL', async () => {
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme Corp', '--debug']);
    expect(result.code, describeRun(result)).toBe(3);
    expect(traceOf(result.stderr)).toEqual([
      '[debug] * profile: default (default)',
      '[debug] * base URL: none (no --base-url, UGS_BASE_URL or profile value)',
      '[debug] * API path: /api/user (default)',
      '[debug] * API token: none (no UGS_API_TOKEN or profile value)',
    ]);
  });
});

describe('--debug trace of bodies', () => {
  it('prefixes every line of a multi-line body and fingerprints tokens in it', async () => {
    const page = `<html>\r\n<body>\nbad token ${API_TOKEN}\n\u001b[2J</body>\n</html>\n`;
    const server = await startServer(text(502, page, 'text/html'));
    try {
      const result = await runMain(
        ['get', '--id', 'acme', '--name', 'Acme Corp', '--base-url', server.url, '--debug'],
        { env: { UGS_API_TOKEN: API_TOKEN }, timeoutMs: 30_000 },
      );
      expect(result.code, describeRun(result)).toBe(1);
      const trace = traceOf(result.stderr);
      const body = trace.slice(
        trace.lastIndexOf('[debug] <') + 1,
        trace.lastIndexOf('[debug] <') + 6,
      );
      expect(body).toEqual([
        '[debug] < <html>',
        '[debug] < <body>',
        '[debug] < bad token …a1b2',
        '[debug] < \\u001b[2J</body>',
        '[debug] < </html>',
      ]);
      // Nothing on stderr but trace lines before the error.
      const lines = result.stderr.split('\n').filter((line) => line !== '');
      const firstError = lines.findIndex((line) => line.startsWith('error:'));
      expect(lines.slice(0, firstError).every((line) => line.startsWith('[debug] '))).toBe(true);
      expect(result.stderr).not.toContain(API_TOKEN);
    } finally {
      await server.close();
    }
  });

  it('a secret shorter than 8 characters is [REDACTED], never shown by its end', () => {
    const out = new Capture();
    const tracer = new StreamTracer(out, ['ab12cd']);
    tracer.response({
      status: 200,
      headers: {},
      body: '{"token":"zz9876","echo":"ab12cd"}',
      elapsedMs: 1,
    });
    expect(out.text).toContain('< {"token":"[REDACTED]","echo":"[REDACTED]"}');
    expect(out.text).not.toContain('9876');
    expect(out.text).not.toContain('12cd');
  });
});

describe('--debug stack traces', () => {
  it('point at the TypeScript sources with --debug; no stack without it', async () => {
    const server = await startServer(json(500, { success: 0, detail: 'boom' }));
    try {
      const args = ['get', '--id', 'acme', '--name', 'Acme Corp', '--base-url', server.url];
      const env = { UGS_API_TOKEN: API_TOKEN };
      const [debug, plain] = await Promise.all([
        runMain([...args, '--debug'], { env, timeoutMs: 30_000 }),
        runMain(args, { env, timeoutMs: 30_000 }),
      ]);
      expect(debug.code, describeRun(debug)).toBe(1);
      expect(debug.stderr).toMatch(STACK_LINE);
      expect(debug.stderr).toMatch(/^\s+at .*[/\\]src[/\\][\w/\\-]+\.ts:\d+:\d+\)?$/m);
      expect(debug.stderr).not.toMatch(/dist[/\\]main\.cjs:\d+/);
      expect(plain.code, describeRun(plain)).toBe(1);
      expect(plain.stderr).not.toMatch(STACK_LINE);
    } finally {
      await server.close();
    }
  });
});
