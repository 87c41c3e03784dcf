/**
 * No URL that ugs shows carries a password or a token: a server's `Location`, a mistyped
 * `--base-url`, a proxy variable and every `--debug` line show a URL with its `user:password@` as
 * `***@` and every query (and fragment) value as `***`, the path kept.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { displayProxy } from '../../src/doctor/proxy.js';
import { UsageError } from '../../src/errors.js';
import { parseBaseUrl, redactUrl } from '../../src/input/parse.js';
import { StreamTracer } from '../../src/output/debug.js';
import { API_TOKEN, failure, GET_REQUEST, useHttpClients } from '../kit/http-client.js';
import { describeRun, expectFailure, runUgs, startServer } from '../kit/index.js';
import type { Reply } from '../kit/server.js';

const PASSWORD = 'hunter2-Pa55word';
const QUERY_TOKEN = 'tok_live_9c8b7a6d5e4f3a2b';
const LOCATION = `https://admin:${PASSWORD}@sso.example.com/login/start?token=${QUERY_TOKEN}&next=/api/user`;
const SHOWN = 'https://***@sso.example.com/login/start?token=***&next=***';

describe('redactUrl', () => {
  it.each([
    [LOCATION, SHOWN],
    ['https://host.example/a/b', 'https://host.example/a/b'],
    ['https://user@host.example/', 'https://***@host.example/'],
    ['http://u:p@a@host.example:8080/x@y', 'http://***@host.example:8080/x@y'],
    ['//user:pw@host.example/x', '//***@host.example/x'],
    ['https:\\\\user:pw@host.example\\x', 'https:\\\\***@host.example\\x'],
    ['http:user:pw@host.example/', 'http:***@host.example/'],
    ['  https://user:pw@host.example/', 'https://***@host.example/'],
    ['ht\ttps://user:pw@host.example/', 'https://***@host.example/'],
    ['/api/user/?x=1', '/api/user/?x=***'],
    ['/login?next=/api/user', '/login?next=***'],
    ['/p?secretvalue', '/p?***'],
    ['/p?a=&b=2&&c', '/p?a=&b=***&&***'],
    ['/p#access_token=abc&state=1', '/p#access_token=***&state=***'],
    ['/p?a=1#b=2', '/p?a=***#b=***'],
    ['/api/@me/x', '/api/@me/x'],
    ['not a url:: at all', 'not a url:: at all'],
  ])('%s -> %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  it('a proxy is shown the same way', () => {
    expect(displayProxy(new URL('http://me:pw@proxy.example:3128/?key=abc'))).toBe(
      'http://***@proxy.example:3128/?key=***',
    );
  });
});

describe('a redirect that ugs does not follow names its Location without secrets', () => {
  const h = useHttpClients();
  const redirect =
    (status: number, location: string): Reply =>
    ({ res }) => {
      res.writeHead(status, { location });
      res.end();
    };

  it.each([301, 302, 303, 307, 308])('HTTP %i: the message keeps the path', async (status) => {
    const server = await h.server(redirect(status, LOCATION));
    const { service } = await h.client(server.url);
    const error = await failure(service.rotateToken('ugt_old_token_abcd'));
    expect(error.message).toContain(`HTTP ${status}`);
    expect(error.message).toContain(SHOWN);
    expect(`${error.message} ${error.hint}`).not.toContain(PASSWORD);
    expect(`${error.message} ${error.hint}`).not.toContain(QUERY_TOKEN);
  });

  it('an unparseable Location is cut the same way', async () => {
    const location = `https://admin:${PASSWORD}@bad host/?token=${QUERY_TOKEN}`;
    const server = await h.server(redirect(302, location));
    const { service } = await h.client(server.url);
    const error = await failure(service.getUser(GET_REQUEST));
    expect(error.message).toContain('https://***@bad host/?token=***');
    expect(error.message).not.toContain(PASSWORD);
    expect(error.message).not.toContain(QUERY_TOKEN);
  });

  it('--debug shows the Location header the same way', async () => {
    const out = new PassThrough();
    let trace = '';
    out.on('data', (chunk: Buffer) => {
      trace += chunk.toString('utf8');
    });
    const server = await h.server(redirect(302, LOCATION));
    const { service } = await h.client(server.url, { tracer: new StreamTracer(out) });
    await failure(service.getUser(GET_REQUEST));
    expect(trace).toContain(`[debug] < location: ${SHOWN}`);
    expect(trace).not.toContain(PASSWORD);
    expect(trace).not.toContain(QUERY_TOKEN);
  });

  it('the trace of a request shows its URL the same way', () => {
    const out = new PassThrough();
    let trace = '';
    out.on('data', (chunk: Buffer) => {
      trace += chunk.toString('utf8');
    });
    new StreamTracer(out).request({
      method: 'GET',
      url: new URL(`https://u:${PASSWORD}@host.example/api/user/?token=${QUERY_TOKEN}`),
      headers: {},
      body: '',
      attempt: 0,
    });
    expect(trace).toContain('> GET https://***@host.example/api/user/?token=***');
    expect(trace).not.toContain(PASSWORD);
    expect(trace).not.toContain(QUERY_TOKEN);
  });

  it('the binary, --debug included: exit 1, nothing secret on either stream', async () => {
    const server = await startServer(redirect(302, LOCATION));
    try {
      const run = (extra: string[]) =>
        runUgs(['rotate', '--yes', '--current-token-stdin', ...extra, '--base-url', server.url], {
          env: { UGS_API_TOKEN: API_TOKEN },
          stdin: 'ugt_old_token_abcd',
        });
      const [plain, debug] = await Promise.all([run([]), run(['--debug'])]);
      const { error } = expectFailure(plain, 1);
      expect(error).toContain(SHOWN);
      expect(debug.code, describeRun(debug)).toBe(1);
      expect(debug.stderr).toContain(`[debug] < location: ${SHOWN}`);
      for (const result of [plain, debug]) {
        const all = result.stdout + result.stderr;
        expect(all, describeRun(result)).not.toContain(PASSWORD);
        expect(all, describeRun(result)).not.toContain(QUERY_TOKEN);
      }
    } finally {
      await server.close();
    }
  });
});

describe('a base URL that is refused is named without its secrets', () => {
  it.each([
    `https://host.example/?token=${QUERY_TOKEN}`,
    `https://host.example/#token=${QUERY_TOKEN}`,
    `https://user:${PASSWORD}@host.example:99999/`,
    `https://user:${PASSWORD}@/?token=${QUERY_TOKEN}`,
  ])('%s', (text) => {
    let error: unknown;
    try {
      parseBaseUrl(text, { insecureHttp: false });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    const shown = `${(error as UsageError).message} ${(error as UsageError).hint ?? ''}`;
    expect(shown).not.toContain(PASSWORD);
    expect(shown).not.toContain(QUERY_TOKEN);
  });
});
