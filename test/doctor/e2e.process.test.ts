/**
 * `ugs doctor` against loopback services (the first case runs the built binary; the others run
 * the same main in-process, `runMain`, as nothing they check needs a process of its own): the
 * emulator (every check passes), the scripted TLS server, a proxy, and the ways a setup goes
 * wrong. Nothing leaves 127.0.0.1 except one DNS question for a name under `.invalid`, which cannot exist.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  closedPort,
  describeRun,
  json,
  makeSandbox,
  type RunResult,
  runMain,
  runUgs,
  type Sandbox,
  selfSignedCertificate,
  startProxy,
  startServer,
  text,
  useEmulator,
  writeConfig,
} from '../kit/index.js';

const emulator = useEmulator();
let apiToken: string;
beforeAll(() => {
  apiToken = emulator.tokenFor('Customer');
});

/** A UTF-8 locale, so the marks are ✓ ✗ –. */
const UTF8 = { LANG: 'C.UTF-8', LC_ALL: undefined, LC_CTYPE: undefined };

async function loggedIn(url = emulator.url, token = apiToken): Promise<Sandbox> {
  const sandbox = makeSandbox();
  // Unchecked: some of these logins save a bad token or a server ugs does not trust, for doctor.
  const run = await runMain(['login', '--no-verify', '--base-url', url, '--with-token'], {
    sandbox,
    stdin: `${token}\n`,
  });
  expect(run.code, describeRun(run)).toBe(0);
  return sandbox;
}

function line(run: RunResult, title: string): string {
  return run.stdout.split('\n').find((l) => l.slice(2).startsWith(title)) ?? '';
}

function marks(run: RunResult): string[] {
  return run.stdout
    .split('\n')
    .filter((l) => /^[✓✗–] /.test(l))
    .map((l) => l.slice(0, 1));
}

describe('ugs doctor', () => {
  it('against `ugs serve` after login: every check passes, --probe included (exit 0)', async () => {
    const sandbox = await loggedIn();
    const run = await runUgs(['doctor', '--probe'], { sandbox, env: UTF8 });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stderr, describeRun(run)).toBe('');
    expect(marks(run)).toHaveLength(9);
    // TLS is not used over http://; everything else passes.
    expect(
      marks(run).filter((m) => m !== '✓'),
      describeRun(run),
    ).toEqual(['–']);
    expect(line(run, 'config file')).toContain(`${sandbox.configPath} (mode 0600, directory 0700)`);
    expect(line(run, 'profile')).toMatch(/"default" \(the default\): base URL from profile/);
    expect(line(run, 'TCP connect')).toMatch(/127\.0\.0\.1:\d+ in \d+ ms/);
    expect(line(run, 'probe')).toMatch(/HTTP 400 .*the token was accepted/);
    expect(line(run, 'API token')).toContain(`****${apiToken.slice(-4)}`);
    expect(run.stdout).not.toContain(apiToken);
  });

  it('--json: the same checks as data on stdout', async () => {
    const sandbox = await loggedIn();
    const run = await runMain(['doctor', '--probe', '--json'], { sandbox });
    expect(run.code, describeRun(run)).toBe(0);
    const report = JSON.parse(run.stdout) as {
      ok: boolean;
      checks: { id: string; status: string }[];
    };
    expect(report.ok).toBe(true);
    expect(report.checks.find((c) => c.id === 'probe')?.status).toBe('pass');
    expect(run.stdout).not.toContain(apiToken);
  });

  it('a refused API token fails the probe: ✗ and exit 1', async () => {
    const sandbox = await loggedIn(emulator.url, 'f'.repeat(64));
    const run = await runMain(['doctor', '--probe'], { sandbox, env: UTF8 });
    expect(run.code, describeRun(run)).toBe(1);
    expect(line(run, 'probe')).toMatch(
      /^✗ probe +GET \/api\/user with \{\}: HTTP 401 \(Invalid token\.\): the token was refused/,
    );
    expect(run.stdout).toMatch(/fix: run `ugs login` with a valid API token/);
    expect(run.stderr).toMatch(/^error: 1 of 9 checks failed: probe\nhint: /);
  });

  it.each([
    [
      "nginx's HTML 400 page",
      text(400, '<html><head><title>400 Bad Request</title></head></html>', 'text/html'),
      'text/html',
    ],
    ['a text/plain 400', text(400, 'Bad Request', 'text/plain'), 'text/plain'],
    [
      'a JSON 400 of another shape',
      json(400, { message: 'Bad Request', statusCode: 400 }),
      'application/json',
    ],
  ])(
    '--probe answered by %s: ✗ probe, exit 1, naming status, content type and URL',
    async (_what, reply, contentType) => {
      const server = await startServer(reply);
      try {
        const sandbox = await loggedIn(server.url);
        const saved = readFileSync(sandbox.configPath);
        const run = await runMain(['doctor', '--probe'], { sandbox, env: UTF8 });
        expect(run.code, describeRun(run)).toBe(1);
        expect(line(run, 'probe')).toMatch(/^✗ probe +GET /);
        expect(line(run, 'probe').replace(/^✗ probe +/, '')).toBe(
          `GET ${server.url}/api/user with {}: HTTP 400 with ${contentType}, not the service's refusal of an empty request (a JSON error with "success": 0, or field errors for name, user_group_id, mapping, properties)`,
        );
        expect(run.stdout).toMatch(
          /fix: a proxy, a load balancer or another server may have answered/,
        );
        expect(run.stderr).toMatch(/^error: 1 of 9 checks failed: probe\n/);
        expect(readFileSync(sandbox.configPath).equals(saved)).toBe(true);
      } finally {
        await server.close();
      }
    },
  );

  it.each([
    ["DRF's field errors", json(400, { name: ['This field is required.'] })],
    ["the interface's error shape", json(400, { success: 0, error: 'name is required' })],
  ])('--probe answered by %s: ✓ probe, exit 0', async (_what, reply) => {
    const server = await startServer(reply);
    try {
      const sandbox = await loggedIn(server.url);
      const run = await runMain(['doctor', '--probe'], { sandbox, env: UTF8 });
      expect(run.code, describeRun(run)).toBe(0);
      expect(line(run, 'probe')).toMatch(
        /^✓ probe +GET \/api\/user with \{\}: HTTP 400 .*accepted/,
      );
    } finally {
      await server.close();
    }
  });

  it('a config file others can read fails, with the chmod that fixes it', async () => {
    const sandbox = await loggedIn();
    chmodSync(sandbox.configPath, 0o644);
    const run = await runMain(['doctor'], { sandbox, env: UTF8 });
    expect(run.code, describeRun(run)).toBe(1);
    expect(line(run, 'config file')).toMatch(
      /^✗ config file +.*\(mode 0644, directory 0700\): other users can read the API token/,
    );
    expect(run.stdout).toContain(`fix: chmod 600 ${sandbox.configPath}`);
  });

  it('a corrupt config file fails, naming the file and the position', async () => {
    const sandbox = makeSandbox();
    writeConfig(sandbox, {});
    writeFileSync(sandbox.configPath, '{"profiles": {', { mode: 0o600 });
    const run = await runMain(['doctor'], { sandbox, env: UTF8 });
    expect(run.code, describeRun(run)).toBe(1);
    expect(line(run, 'config file')).toMatch(/^✗ config file +config file .* is not valid JSON/);
    expect(run.stdout).not.toMatch(/^\s+at /m);
  });

  it('an unresolvable host fails DNS; TCP, TLS and the probe are skipped', async () => {
    const sandbox = await loggedIn();
    const run = await runMain(['doctor', '--probe', '--base-url', 'https://ugs-doctor.invalid'], {
      sandbox,
      env: UTF8,
    });
    expect(run.code, describeRun(run)).toBe(1);
    expect(line(run, 'DNS')).toMatch(
      /^✗ DNS +cannot resolve ugs-doctor\.invalid \((ENOTFOUND|EAI_AGAIN)\)/,
    );
    expect(line(run, 'TCP connect')).toMatch(/^– /);
    expect(line(run, 'probe')).toMatch(/^– /);
  });

  it('a closed port fails TCP connect', async () => {
    const sandbox = await loggedIn();
    const port = await closedPort();
    const run = await runMain(['doctor', '--base-url', `http://127.0.0.1:${port}`], {
      sandbox,
      env: UTF8,
    });
    expect(run.code, describeRun(run)).toBe(1);
    expect(line(run, 'TCP connect')).toMatch(
      new RegExp(`^✗ TCP connect +127\\.0\\.0\\.1:${port} failed \\(ECONNREFUSED\\)`),
    );
    expect(line(run, 'base URL')).toMatch(/^✓ /);
  });

  it('TLS: protocol, issuer and days left with --ca-file; untrusted without it', async () => {
    const tls = selfSignedCertificate(['ugs-doctor.test']);
    const server = await startServer({ tls }, json(400, { name: ['This field is required.'] }));
    try {
      const sandbox = await loggedIn(server.url);
      const trusted = await runMain(['doctor', '--probe', '--ca-file', tls.certFile], {
        sandbox,
        env: UTF8,
      });
      expect(trusted.code, describeRun(trusted)).toBe(0);
      expect(line(trusted, 'TLS')).toMatch(
        /^✓ TLS +TLSv1\.[23], issuer ugs-doctor\.test, certificate expires in [01] days?, custom CA: --ca-file/,
      );
      expect(line(trusted, 'probe')).toMatch(/^✓ probe/);
      expect(server.requests.at(-1)).toMatchObject({ method: 'GET', body: '{}' });

      const untrusted = await runMain(['doctor'], { sandbox, env: UTF8 });
      expect(untrusted.code, describeRun(untrusted)).toBe(1);
      expect(line(untrusted, 'TLS')).toMatch(
        /^✗ TLS .*issuer ugs-doctor\.test.*not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT\)/,
      );
      expect(untrusted.stdout).toMatch(/fix: .*--ca-file <pem>/);
    } finally {
      await server.close();
    }
  });

  it('through a proxy: the proxy is named and the probe goes through its tunnel', async () => {
    const proxy = await startProxy('tunnel');
    try {
      const url = emulator.url.replace('127.0.0.1', 'service.ugs.test');
      const sandbox = await loggedIn();
      const run = await runMain(['doctor', '--probe', '--base-url', url, '--insecure-http'], {
        sandbox,
        env: { ...UTF8, HTTP_PROXY: proxy.url },
      });
      expect(run.code, describeRun(run)).toBe(0);
      expect(line(run, 'proxy')).toMatch(
        /^✓ proxy +service\.ugs\.test through http:\/\/127\.0\.0\.1:\d+ \(from HTTP_PROXY/,
      );
      expect(line(run, 'TCP connect')).toMatch(/^✓ TCP connect +proxy 127\.0\.0\.1:\d+/);
      expect(proxy.connects).toEqual([url.replace('http://', '')]);
    } finally {
      await proxy.close();
    }
  });

  it('ASCII marks for TERM=dumb', async () => {
    const sandbox = await loggedIn();
    const run = await runMain(['doctor'], { sandbox, env: { ...UTF8, TERM: 'dumb' } });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toMatch(/^ok config file/m);
    expect(run.stdout).not.toMatch(/[✓✗–]/);
  });
});
