/**
 * A real HTTP CONNECT proxy on 127.0.0.1, started by the test: `ugs` must go through it when
 * HTTPS_PROXY/HTTP_PROXY say so (undici tunnels plain-http targets with CONNECT too), bypass it
 * when NO_PROXY matches, and report a proxy's refusal (407, 403) as a clear network error
 * (exit 4) rather than as something the service said. The runs are in-process (`runMain`): ugs
 * reads the proxy variables from the environment main is given, as the binary does from its own. The service is addressed by a name that
 * only the proxy resolves (`service.ugs.test`): loopback addresses never go through a proxy.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  closedPort,
  describeRun,
  expectFailure,
  okBody,
  type Reply,
  runMain,
  type SelfSigned,
  selfSignedCertificate,
  sendJson,
  startProxy,
  startServer,
  type TestProxy,
  type TestServer,
  userGroup,
} from '../kit/index.js';

const API_TOKEN = 'api_proxy_suite_0c4f7d92a1';
/** Only the test proxy knows this name (`.test` never resolves): it tunnels it to 127.0.0.1. */
const HOST = 'service.ugs.test';
const GET_ARGS = ['get', '--insecure-http', '--id', 'acme', '--name', 'Acme Corp'];

/** The target's URL under the name only the proxy resolves. */
const via = (t: TestServer) => t.url.replace('127.0.0.1', HOST);

/** The group asked for (`--id acme`): an answer for another group would be refused. */
const BODY = okBody({ user_group: userGroup({ provided_id: 'acme' }) });
const answer: Reply = ({ res }) => sendJson(res, 200, BODY);

let tls: SelfSigned;
const cleanup: (() => Promise<void>)[] = [];

beforeAll(() => {
  tls = selfSignedCertificate([HOST]);
});
afterAll(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
});

async function proxy(mode: 'tunnel' | 407 | 403): Promise<TestProxy> {
  const started = await startProxy(mode);
  cleanup.push(started.close);
  return started;
}

async function target(secure = false): Promise<TestServer> {
  const started = await startServer(secure ? { tls } : {}, answer);
  cleanup.push(started.close);
  return started;
}

describe.concurrent('HTTP CONNECT proxy', () => {
  test('an http:// target goes through HTTP_PROXY, tunnelled with CONNECT', async () => {
    const [p, t] = await Promise.all([proxy('tunnel'), target()]);
    const result = await runMain([...GET_ARGS, '--base-url', via(t)], {
      env: { UGS_API_TOKEN: API_TOKEN, HTTP_PROXY: p.url, HTTPS_PROXY: p.url },
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(p.connects).toEqual([`${HOST}:${t.port}`]);
    expect(p.forwarded).toEqual([]);
    expect(t.requests).toHaveLength(1);
    expect(t.requests[0]?.headers.authorization).toBe(`Token ${API_TOKEN}`);
  });

  test('an https:// target goes through HTTPS_PROXY (with --ca-file for its certificate)', async () => {
    const [p, t] = await Promise.all([proxy('tunnel'), target(true)]);
    const result = await runMain(
      [...GET_ARGS, '--base-url', via(t), '--ca-file', tls.certFile, '--json'],
      { env: { UGS_API_TOKEN: API_TOKEN, HTTPS_PROXY: p.url } },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(BODY);
    expect(p.connects).toEqual([`${HOST}:${t.port}`]);
    expect(t.requests).toHaveLength(1);
  });

  test('lower-case https_proxy wins over HTTPS_PROXY, as curl reads them', async () => {
    const [good, refusing, t] = await Promise.all([proxy('tunnel'), proxy(403), target(true)]);
    const result = await runMain([...GET_ARGS, '--base-url', via(t), '--ca-file', tls.certFile], {
      env: { UGS_API_TOKEN: API_TOKEN, https_proxy: good.url, HTTPS_PROXY: refusing.url },
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(good.connects).toHaveLength(1);
    expect(refusing.connects).toHaveLength(0);
  });

  test('proxy credentials from the URL reach the proxy and never the trace', async () => {
    const [p, t] = await Promise.all([proxy('tunnel'), target(true)]);
    const url = new URL(p.url);
    url.username = 'corp-user';
    url.password = 'proxy-pass-9d8e7f';
    const result = await runMain(
      [...GET_ARGS, '--base-url', via(t), '--ca-file', tls.certFile, '--debug'],
      { env: { UGS_API_TOKEN: API_TOKEN, HTTPS_PROXY: url.href } },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(p.authorizations).toEqual([
      `Basic ${Buffer.from('corp-user:proxy-pass-9d8e7f').toString('base64')}`,
    ]);
    expect(result.stderr).not.toContain('proxy-pass-9d8e7f');
    expect(result.stderr).not.toContain(API_TOKEN);
  });

  for (const noProxy of [HOST, `${HOST}:PORT`, `localhost,${HOST}`, '.ugs.test', '*']) {
    test(`NO_PROXY=${noProxy} bypasses the proxy`, async () => {
      const [p, t] = await Promise.all([proxy('tunnel'), target()]);
      const result = await runMain([...GET_ARGS, '--base-url', via(t)], {
        env: {
          UGS_API_TOKEN: API_TOKEN,
          HTTP_PROXY: p.url,
          HTTPS_PROXY: p.url,
          NO_PROXY: noProxy.replace('PORT', String(t.port)),
        },
      });
      // Bypassed: ugs looked the name up itself, and only the proxy knows it.
      expect(expectFailure(result, 4).error).toBe(`could not resolve host ${HOST}`);
      expect(p.connects).toEqual([]);
      expect(p.forwarded).toEqual([]);
      expect(t.requests).toHaveLength(0);
    });
  }

  test('NO_PROXY for another host does not bypass the proxy', async () => {
    const [p, t] = await Promise.all([proxy('tunnel'), target()]);
    const result = await runMain([...GET_ARGS, '--base-url', via(t)], {
      env: {
        UGS_API_TOKEN: API_TOKEN,
        HTTP_PROXY: p.url,
        NO_PROXY: 'internal.example.com,127.0.0.2',
      },
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(p.connects).toHaveLength(1);
  });

  for (const status of [407, 403] as const) {
    test(`a proxy answering ${status} is a clear exit-4 error, for get and for rotate`, async () => {
      const [p, t] = await Promise.all([proxy(status), target()]);
      const env = { UGS_API_TOKEN: API_TOKEN, HTTP_PROXY: p.url, HTTPS_PROXY: p.url };
      const [get, rotate] = await Promise.all([
        runMain([...GET_ARGS, '--base-url', via(t)], { env }),
        runMain(
          ['rotate', '--insecure-http', '--yes', '--current-token-stdin', '--base-url', via(t)],
          {
            env,
            stdin: 'ugt_old_token_behind_proxy',
          },
        ),
      ]);
      for (const result of [get, rotate]) {
        // A refused tunnel proves nothing reached the service: rotate is 4, not "maybe" (5).
        const { error, hint } = expectFailure(result, 4);
        expect(error).toBe(`the proxy refused to connect to ${HOST}:${t.port} (HTTP ${status})`);
        expect(hint).toMatch(status === 407 ? /credentials.*HTTPS_PROXY/ : /NO_PROXY/);
      }
      // Neither is retried: a refusal is configuration, not a passing fault.
      expect(p.connects).toHaveLength(2);
      expect(t.requests).toHaveLength(0);
    });
  }

  test('a proxy that is down or does not resolve is named as the culprit (exit 4)', async () => {
    const [port, t] = await Promise.all([closedPort(), target()]);
    const [down, unknown] = await Promise.all([
      runMain([...GET_ARGS, '--base-url', via(t)], {
        env: { UGS_API_TOKEN: API_TOKEN, HTTP_PROXY: `http://127.0.0.1:${port}` },
      }),
      runMain([...GET_ARGS, '--base-url', via(t)], {
        env: { UGS_API_TOKEN: API_TOKEN, HTTP_PROXY: 'http://ugs-proxy.invalid:3128' },
      }),
    ]);
    expect(expectFailure(down, 4).error).toBe(
      `could not connect to the proxy 127.0.0.1:${port} (for ${HOST}:${t.port}): connection refused`,
    );
    const { error, hint } = expectFailure(unknown, 4);
    expect(error).toBe(
      `could not connect to the proxy ugs-proxy.invalid (for ${HOST}:${t.port}): host not found`,
    );
    expect(hint).toMatch(/HTTPS_PROXY.*NO_PROXY/);
    expect(t.requests).toHaveLength(0);
  });

  test('a refused service behind NO_PROXY is still reported as the service', async () => {
    const [p, port] = await Promise.all([proxy('tunnel'), closedPort()]);
    const result = await runMain([...GET_ARGS, '--base-url', `http://127.0.0.1:${port}`], {
      env: { UGS_API_TOKEN: API_TOKEN, HTTP_PROXY: p.url, NO_PROXY: '127.0.0.1' },
    });
    expect(expectFailure(result, 4).error).toBe(
      `could not connect to 127.0.0.1:${port}: connection refused`,
    );
    expect(p.connects).toEqual([]);
  });

  // Through a proxy, an http:// request to this machine would hand the API token in
  // clear text to whoever runs the proxy.
  for (const [host, noProxy] of [
    ['127.0.0.1', undefined],
    ['127.0.0.1', 'internal.example.com'],
    ['localhost', undefined],
    ['localhost', ''],
  ] as const) {
    test(`a loopback target (${host}, NO_PROXY=${noProxy ?? 'unset'}) never goes through a proxy`, async () => {
      const [p, t] = await Promise.all([proxy('tunnel'), target()]);
      const result = await runMain([...GET_ARGS, '--base-url', t.url.replace('127.0.0.1', host)], {
        env: {
          UGS_API_TOKEN: API_TOKEN,
          HTTP_PROXY: p.url,
          http_proxy: p.url,
          HTTPS_PROXY: p.url,
          ...(noProxy !== undefined && { NO_PROXY: noProxy, no_proxy: noProxy }),
        },
      });
      expect(result.code, describeRun(result)).toBe(0);
      expect(p.connects).toEqual([]);
      expect(p.forwarded).toEqual([]);
      expect(t.requests).toHaveLength(1);
    });
  }
});
