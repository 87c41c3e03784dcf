/**
 * Names under `.localhost` are not this machine to ugs: the resolver decides where they go, and a
 * hosts-file or DNS entry pointing `evil.localhost` elsewhere would receive the API token in clear
 * text. Only `localhost` itself and loopback address literals skip --insecure-http and proxies.
 */
import { afterAll, describe, expect, test } from 'vitest';
import {
  acmeBody,
  describeRun,
  expectFailure,
  runUgs,
  sendJson,
  startProxy,
  startServer,
  type TestServer,
} from '../kit/index.js';

const API_TOKEN = 'api_localhost_names_7c1e9a';
const GET = ['get', '--id', 'acme', '--name', 'Acme Corp'];

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
});

async function target(): Promise<TestServer> {
  const started = await startServer(({ res }) => sendJson(res, 200, acmeBody()));
  cleanup.push(started.close);
  return started;
}

describe.concurrent('http://<name>.localhost', () => {
  for (const name of ['evil.localhost', 'a.b.localhost', 'EVIL.LocalHost.']) {
    test(`${name} without --insecure-http: exit 2, nothing sent`, async () => {
      const t = await target();
      const result = await runUgs([...GET, '--base-url', `http://${name}:${t.port}`], {
        env: { UGS_API_TOKEN: API_TOKEN },
      });
      const { error } = expectFailure(result, 2);
      expect(error).toMatch(/^refusing to send the API token over plain http to /);
      expect(t.requests).toHaveLength(0);
    });
  }

  test('evil.localhost with --insecure-http follows the proxy rules, as any name', async () => {
    const [p, t] = await Promise.all([startProxy('tunnel'), target()]);
    cleanup.push(p.close);
    const result = await runUgs(
      [...GET, '--insecure-http', '--base-url', `http://evil.localhost:${t.port}`],
      { env: { UGS_API_TOKEN: API_TOKEN, HTTP_PROXY: p.url } },
    );
    // The test proxy tunnels only to its own names: it refused, which shows the request was its.
    expect(p.connects, describeRun(result)).toEqual([`evil.localhost:${t.port}`]);
    expect(result.code, describeRun(result)).toBe(4);
    expect(t.requests).toHaveLength(0);
  });

  test('localhost itself still needs neither, and never goes through the proxy', async () => {
    const [p, t] = await Promise.all([startProxy('tunnel'), target()]);
    cleanup.push(p.close);
    const result = await runUgs([...GET, '--base-url', `http://localhost:${t.port}`], {
      env: { UGS_API_TOKEN: API_TOKEN, HTTP_PROXY: p.url },
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(p.connects).toEqual([]);
    expect(t.requests).toHaveLength(1);
  });
});
