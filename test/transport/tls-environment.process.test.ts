/**
 * NODE_TLS_REJECT_UNAUTHORIZED=0 turns off certificate checks for every TLS connection Node makes
 * with the default options. ugs states its own: a variable left in a shell or a CI job from
 * debugging another tool must not send the API token to whoever holds a certificate for the name.
 * It says once, on stderr, that the variable is ignored.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  acmeBody,
  describeRun,
  expectFailure,
  runUgs,
  type SelfSigned,
  selfSignedCertificate,
  sendJson,
  startProxy,
  startServer,
  type TestServer,
} from '../kit/index.js';

const API_TOKEN = 'api_tls_env_suite_51f0c2aa';
const GET = ['get', '--id', 'acme', '--name', 'Acme Corp'];
const WARNING = /^warning: NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored/;
/** The name only the test proxy resolves (to 127.0.0.1). */
const PROXIED_HOST = 'service.ugs.test';

let tls: SelfSigned;
const cleanup: (() => Promise<void>)[] = [];
beforeAll(() => {
  tls = selfSignedCertificate([PROXIED_HOST]);
});
afterAll(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
});

async function untrusted(): Promise<TestServer> {
  const started = await startServer({ tls }, ({ res }) => sendJson(res, 200, acmeBody()));
  cleanup.push(started.close);
  return started;
}

const warnings = (stderr: string) => stderr.split('\n').filter((line) => /TLS_REJECT/.test(line));

describe.concurrent('NODE_TLS_REJECT_UNAUTHORIZED=0', () => {
  test('a self-signed service is still refused: exit 4, nothing sent, one warning', async () => {
    const t = await untrusted();
    const result = await runUgs([...GET, '--base-url', t.url], {
      env: { UGS_API_TOKEN: API_TOKEN, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
    });
    expect(result.code, describeRun(result)).toBe(4);
    expect(result.stderr).toMatch(/^error: TLS connection to 127\.0\.0\.1:\d+ failed: /m);
    expect(t.requests).toHaveLength(0);
    // Ours, once; not Node's own, which would say that certificates go unchecked.
    expect(warnings(result.stderr), describeRun(result)).toHaveLength(1);
    expect(warnings(result.stderr)[0]).toMatch(WARNING);
  });

  test('through a proxy tunnel the service certificate is checked too', async () => {
    const t = await untrusted();
    const p = await startProxy('tunnel');
    cleanup.push(p.close);
    const result = await runUgs([...GET, '--base-url', t.url.replace('127.0.0.1', PROXIED_HOST)], {
      env: {
        UGS_API_TOKEN: API_TOKEN,
        HTTPS_PROXY: p.url,
        NODE_TLS_REJECT_UNAUTHORIZED: '0',
      },
    });
    expect(result.code, describeRun(result)).toBe(4);
    expect(p.connects).toEqual([`${PROXIED_HOST}:${t.port}`]);
    expect(t.requests).toHaveLength(0);
    expect(warnings(result.stderr)).toHaveLength(1);
  });

  test('--ca-file still works, with the warning', async () => {
    const t = await untrusted();
    const result = await runUgs([...GET, '--base-url', t.url, '--ca-file', tls.certFile], {
      env: { UGS_API_TOKEN: API_TOKEN, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(t.requests).toHaveLength(1);
    expect(warnings(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(WARNING);
  });

  test('a bulk run (many requests) warns once', async () => {
    const t = await untrusted();
    const result = await runUgs(
      ['get', '--from', '-', '--format', 'csv', '--base-url', t.url, '--ca-file', tls.certFile],
      {
        env: { UGS_API_TOKEN: API_TOKEN, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
        stdin: 'user_group_id,name\na,A\nb,B\nc,C\n',
      },
    );
    expect(t.requests.length, describeRun(result)).toBe(3);
    expect(warnings(result.stderr)).toHaveLength(1);
    expect(warnings(result.stderr)[0]).toMatch(WARNING);
  });

  for (const value of [undefined, '1', '']) {
    test(`no warning when it is ${value === undefined ? 'unset' : JSON.stringify(value)}`, async () => {
      const t = await untrusted();
      const result = await runUgs([...GET, '--base-url', t.url], {
        env: {
          UGS_API_TOKEN: API_TOKEN,
          NODE_TLS_REJECT_UNAUTHORIZED: value,
        },
      });
      expectFailure(result, 4);
      expect(warnings(result.stderr)).toEqual([]);
    });
  }

  test('-q keeps the warning off stderr, as every warning', async () => {
    const t = await untrusted();
    const result = await runUgs([...GET, '-q', '--base-url', t.url], {
      env: { UGS_API_TOKEN: API_TOKEN, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
    });
    expect(result.code, describeRun(result)).toBe(4);
    expect(warnings(result.stderr)).toEqual([]);
  });
});
