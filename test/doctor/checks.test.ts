/**
 * `ugs doctor`'s checks with a fake network: each failure it can name, the fix it gives, what it
 * skips after a failure, and that the API token never appears whole.
 */
import { describe, expect, it } from 'vitest';
import { type DoctorDeps, runDoctor, unicodeOutput } from '../../src/commands/doctor.js';
import { operations } from '../../src/commands/operations.js';
import { credentialAccount } from '../../src/config/secure-store.js';
import { noProxyEntry, proxyFor } from '../../src/doctor/proxy.js';
import { ApiError, ChecksFailedError } from '../../src/errors.js';
import { redactUrl } from '../../src/input/parse.js';
import { userAgent } from '../../src/platform/version.js';
import type { Dialect } from '../../src/service/dialect.js';
import { type ProbeAnswer, probeVerdict } from '../../src/service/probe.js';
import { HttpServiceClient } from '../../src/service/service.js';
import type {
  HttpClient,
  HttpRequest,
  HttpResponse,
  RetryPolicy,
} from '../../src/transport/http.js';
import type { DoctorNetwork, TlsInfo } from '../../src/transport/network.js';
import { MemoryCredentialStore, makeDeps, makeIO, rejection, testSystem } from '../kit/fakes.js';
import { describeRun, makeSandbox, runMain, startEmulator, writeConfig } from '../kit/index.js';

const TOKEN = 'api-token-0123456789-wxyz';
const NOW = new Date('2026-01-01T00:00:00Z');

/** DRF's answer to Get User's `{}` once the token passed: the probe's good news. */
const FIELDS_MISSING: HttpResponse = {
  status: 400,
  headers: { 'content-type': 'application/json' },
  text: '{"name":["This field is required."],"user_group_id":["This field is required."]}',
};

interface FakeNetworkOptions {
  lookup?: (host: string) => string[];
  connect?: (host: string, port: number) => void;
  tls?: Partial<TlsInfo>;
  /** Answers each HTTP request of the probe, which the real service client sends (service.ts). */
  probe?: (request: HttpRequest) => HttpResponse;
}

function fakeNetwork(options: FakeNetworkOptions = {}) {
  const calls: string[] = [];
  const probes: HttpRequest[] = [];
  const policies: RetryPolicy[] = [];
  const network: DoctorNetwork = {
    async lookup(host) {
      calls.push(`lookup ${host}`);
      return (options.lookup ?? (() => ['192.0.2.10']))(host);
    },
    async connect(host, port) {
      calls.push(`connect ${host}:${port}`);
      options.connect?.(host, port);
    },
    async tls(target) {
      calls.push(`tls ${target.host}:${target.port} ${target.servername}`);
      return {
        protocol: 'TLSv1.3',
        issuer: 'Example CA, Example Org',
        validTo: new Date(NOW.getTime() + 90 * 86_400_000),
        authorized: true,
        authorizationError: undefined,
        ...options.tls,
      };
    },
    now: () => 0,
  };
  // The transport under the service client: the probe's requests, as they would go on the wire.
  const http = {
    async send(request: HttpRequest, policy: RetryPolicy) {
      probes.push(request);
      policies.push(policy);
      return (options.probe ?? (() => FIELDS_MISSING))(request);
    },
  } as unknown as HttpClient;
  return { network, http, calls, probes, policies };
}

function codeError(code: string): Error {
  return Object.assign(new Error(code), { code });
}

async function doctor(
  options: {
    env?: Record<string, string>;
    baseUrl?: string;
    token?: string | null;
    probe?: boolean;
    json?: boolean;
    network?: FakeNetworkOptions;
    insecureHttp?: boolean;
    /** The token is kept in this credential store (login --secure-storage), not in the file. */
    store?: MemoryCredentialStore;
  } = {},
) {
  const io = makeIO({ env: { LANG: 'C.UTF-8', ...options.env } });
  const profile: Record<string, string> = { baseUrl: options.baseUrl ?? 'https://ugs.example.com' };
  if (options.store !== undefined) profile.tokenStore = 'keyring';
  else if (options.token !== null) profile.apiToken = options.token ?? TOKEN;
  const base = makeDeps({
    io,
    profiles: { default: profile },
    ...(options.store && { credentialStore: options.store }),
    settings: { insecureHttp: options.insecureHttp ?? false },
  });
  const { network, http, calls, probes, policies } = fakeNetwork(options.network);
  const notes: string[] = [];
  const deps: DoctorDeps = {
    ...base,
    network,
    now: () => NOW,
    // What the real factory's connect makes, over the fake transport.
    connect: async (target) =>
      new HttpServiceClient(http, target, userAgent(base.system.nodeVersion), {
        operations,
        notify: (note) => notes.push(note),
      }),
  };
  let error: unknown;
  try {
    await runDoctor(
      { probe: options.probe ?? false, json: options.json ?? false, profileSource: 'default' },
      deps,
    );
  } catch (caught) {
    error = caught;
  }
  const out = io.stdout.text;
  const line = (title: string) => out.split('\n').find((l) => l.slice(2).startsWith(title)) ?? '';
  return { out, error, calls, probes, policies, notes, line };
}

describe('runDoctor', () => {
  it('passes every check against a healthy https service, and sends nothing without --probe', async () => {
    const run = await doctor();
    expect(run.error).toBeUndefined();
    expect(run.line('base URL')).toMatch(/^✓ base URL +https:\/\/ugs\.example\.com\/api\/user/);
    expect(run.line('DNS')).toMatch(/^✓ DNS +ugs\.example\.com -> 192\.0\.2\.10/);
    expect(run.line('TCP connect')).toMatch(/^✓ TCP connect +ugs\.example\.com:443 in \d+ ms/);
    expect(run.line('TLS')).toMatch(
      /^✓ TLS +TLSv1\.3, issuer Example CA, Example Org, certificate expires in 90 days, system CAs/,
    );
    expect(run.line('API token')).toMatch(/^✓ API token +\*\*\*\*wxyz from profile "default"/);
    expect(run.line('probe')).toMatch(/^– probe +not sent/);
    expect(run.probes).toEqual([]);
    expect(run.out).not.toContain(TOKEN);
  });

  it('--probe: 400 to {} means the token is good; the request is a GET with {} and the token', async () => {
    const run = await doctor({ probe: true });
    expect(run.error).toBeUndefined();
    expect(run.line('probe')).toMatch(/^✓ probe +GET \/api\/user with \{\}: HTTP 400/);
    expect(run.probes).toHaveLength(1);
    const [probe] = run.probes;
    expect(probe?.url.href).toBe('https://ugs.example.com/api/user');
    expect(probe?.body).toBe('{}');
    expect(probe?.headers.authorization).toBe(`Token ${TOKEN}`);
  });

  it.each([
    [
      401,
      '{"detail":"Invalid token."}',
      /HTTP 401 \(Invalid token\.\): the token was refused/,
      /ugs login/,
    ],
    [403, '{"detail":"nope"}', /HTTP 403 \(nope\): the token was refused/, /ugs login/],
    [404, '<html>', /HTTP 404 with no content type, expected 400/, /--api-path/],
    [200, '{"success":1}', /HTTP 200 with no content type, expected 400/, /base URL/],
  ])('--probe: HTTP %i fails the check with a fix, exit 1', async (status, text, detail, fix) => {
    const run = await doctor({
      probe: true,
      network: { probe: () => ({ status, headers: {}, text }) },
    });
    expect(run.error).toBeInstanceOf(ChecksFailedError);
    expect((run.error as ChecksFailedError).exitCode).toBe(1);
    expect(run.line('probe')).toMatch(/^✗ probe/);
    expect(run.line('probe')).toMatch(detail);
    const lines = run.out.split('\n');
    expect(lines[lines.indexOf(run.line('probe')) + 1]).toMatch(fix);
    expect(run.out).not.toContain(TOKEN);
  });

  it('--probe: a 403 for want of permission is a warning (a read-only token?), exit 0', async () => {
    const run = await doctor({
      probe: true,
      network: {
        probe: () => ({
          status: 403,
          headers: { 'content-type': 'application/json' },
          text: '{"detail":"You do not have permission to perform this action."}',
        }),
      },
    });
    expect(run.error).toBeUndefined();
    expect(run.line('probe')).toMatch(
      /^! probe +GET \/api\/user with \{\}: HTTP 403 \(You do not have permission to perform this action\.\): the token was accepted, but the service refused this call, which changes data: the token may be read-only$/,
    );
    const lines = run.out.split('\n');
    expect(lines[lines.indexOf(run.line('probe')) + 1]).toMatch(
      /fix: commands that create or change data will be refused with it: run `ugs login` with a read-write API token/,
    );
  });

  it.each([
    ['explo', '!', /POST \/api\/refresh_user_group_token\/ with \{\}: HTTP 403 .*may be read-only/],
    ['customer', '✓', /POST \/api\/get_customer\/ with \{"provided_id":""\}: HTTP 400 .*accepted/],
  ])('--probe with a read-only key of `ugs serve --dialect %s`', async (dialect, mark, said) => {
    const readOnly = {
      token: 'ro-key-doctor-3c2d',
      environment: 'Customer' as const,
      readOnly: true,
    };
    const emulator = await startEmulator({ dialect: dialect as Dialect, apiTokens: [readOnly] });
    try {
      const sandbox = makeSandbox();
      writeConfig(sandbox, {
        profiles: { default: { baseUrl: emulator.url, apiToken: readOnly.token, dialect } },
      });
      const run = await runMain(['doctor', '--probe'], { sandbox, env: { LANG: 'C.UTF-8' } });
      expect(run.code, describeRun(run)).toBe(0);
      const probe = run.stdout.split('\n').find((l) => l.slice(2).startsWith('probe')) ?? '';
      expect(probe.slice(0, 1)).toBe(mark);
      expect(probe).toMatch(said);
      expect(run.stdout + run.stderr).not.toContain(readOnly.token);
    } finally {
      await emulator.close();
    }
  });

  it("--probe follows Django's slash redirect once, as ugs does", async () => {
    const run = await doctor({
      probe: true,
      network: {
        probe: (request): HttpResponse =>
          request.url.pathname === '/api/user'
            ? { status: 301, headers: { location: '/api/user/' }, text: '' }
            : FIELDS_MISSING,
      },
    });
    expect(run.error).toBeUndefined();
    expect(run.probes.map((p) => p.url.pathname)).toEqual(['/api/user', '/api/user/']);
    expect(run.line('probe')).toMatch(/GET \/api\/user\/ with \{\}: HTTP 400/);
  });

  it('--probe is sent by the service client: the headers of get, never retried, no note on stdout', async () => {
    const run = await doctor({
      probe: true,
      network: { probe: () => ({ status: 503, headers: {}, text: '' }) },
    });
    const [probe] = run.probes;
    expect(probe?.method).toBe('GET');
    expect(probe?.headers).toEqual({
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: `Token ${TOKEN}`,
      'user-agent': userAgent(testSystem.nodeVersion),
    });
    // A 503 is shown as it came: a retry could hide the answer the user asked to see.
    expect(run.probes).toHaveLength(1);
    expect(run.policies[0]?.maxRetries).toBe(0);
    expect(run.line('probe')).toMatch(/HTTP 503 with no content type, expected 400/);
  });

  it("--probe shows a server's content type with its control characters escaped", async () => {
    const run = await doctor({
      probe: true,
      network: {
        probe: () => ({
          status: 404,
          headers: { 'content-type': 'text/html\u001b[2J\u0007' },
          text: '',
        }),
      },
    });
    expect(run.line('probe')).toContain('HTTP 404 with text/html\\u001b[2J\\u0007, expected 400');
    expect(run.out).not.toContain('\u0007');
  });

  // The one redirect rule of service.ts, for the probe as for get: a 301/302/307/308 to the same
  // origin, the same path with a slash appended, the same query and user information. doctor
  // once had its own rule, which followed the last two cases below.
  it.each([
    ['the slash appended', 301, '/api/user/', true],
    ['the slash appended, 308', 308, 'https://ugs.example.com/api/user/', true],
    ['another path', 301, '/api/users/', false],
    ['303 (which turns a request into a GET)', 303, '/api/user/', false],
    ['another origin', 301, 'https://elsewhere.example.com/api/user/', false],
    ['http instead of https', 301, 'http://ugs.example.com/api/user/', false],
    ['a query added', 301, '/api/user/?next=%2Flogin', false],
    ['user information added', 302, 'https://admin:pw@ugs.example.com/api/user/', false],
  ])(
    '--probe follows a redirect to %s exactly when get does',
    async (_label, status, location, followed) => {
      const endpoint = 'https://ugs.example.com/api/user';
      const answer =
        (final: HttpResponse) =>
        (request: HttpRequest): HttpResponse =>
          request.url.href === endpoint ? { status, headers: { location }, text: '' } : final;

      const run = await doctor({
        probe: true,
        network: { probe: answer(FIELDS_MISSING) },
      });

      const sent: HttpRequest[] = [];
      const userGroup = {
        success: 1,
        user_group: { provided_id: 'acme', name: 'Acme', token: 'ugt_1234567890' },
      };
      const reply = answer({ status: 200, headers: {}, text: JSON.stringify(userGroup) });
      const http = {
        async send(request: HttpRequest) {
          sent.push(request);
          return reply(request);
        },
      } as unknown as HttpClient;
      const target = { baseUrl: new URL('https://ugs.example.com'), apiToken: TOKEN };
      const get = new HttpServiceClient(http, target, 'ugs/test', { operations }).getUser({
        name: 'Acme',
        user_group_id: 'acme',
      });
      const getError = await get.then(
        () => undefined,
        (error: unknown) => error,
      );

      // The same requests, to the same URLs, and the same refusal in the same words.
      expect(run.probes.map((p) => p.url.href)).toEqual(sent.map((r) => r.url.href));
      expect(run.probes).toHaveLength(followed ? 2 : 1);
      if (followed) {
        expect(getError).toBeUndefined();
        expect(run.line('probe')).toMatch(/^✓ probe +GET \/api\/user\/ with \{\}: HTTP 400/);
        expect(run.notes).toEqual([
          'the service redirected /api/user to /api/user/; the request was sent there (pass --api-path /api/user/ to skip the redirect)',
        ]);
      } else {
        expect(getError).toBeInstanceOf(ApiError);
        const message = (getError as ApiError).message;
        expect(message).toMatch(/a redirect .*which ugs does not follow/);
        expect(run.line('probe').replace(/^✗ probe +/, '')).toBe(message);
        expect(run.out).not.toContain('pw@');
        expect(run.notes).toEqual([]);
      }
    },
  );

  it('an unresolvable host fails DNS and skips what needs a connection', async () => {
    const run = await doctor({
      probe: true,
      network: {
        lookup: () => {
          throw codeError('ENOTFOUND');
        },
      },
    });
    expect(run.error).toBeInstanceOf(ChecksFailedError);
    expect((run.error as Error).message).toBe('1 of 9 checks failed: DNS');
    expect(run.line('DNS')).toMatch(/^✗ DNS +cannot resolve ugs\.example\.com \(ENOTFOUND\)/);
    expect(run.line('TCP connect')).toMatch(/^– /);
    expect(run.line('TLS')).toMatch(/^– /);
    expect(run.line('probe')).toMatch(/^– probe +not sent: fix the checks above first/);
    expect(run.probes).toEqual([]);
  });

  it('a refused connection fails TCP with a fix naming the port', async () => {
    const run = await doctor({
      network: {
        connect: () => {
          throw codeError('ECONNREFUSED');
        },
      },
    });
    expect(run.line('TCP connect')).toMatch(
      /^✗ TCP connect +ugs\.example\.com:443 failed \(ECONNREFUSED\)/,
    );
    expect(run.out).toMatch(/fix: nothing listens there/);
  });

  it.each([
    [
      { authorized: false, authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT' },
      /not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT\)/,
      /--ca-file/,
    ],
    [
      { validTo: new Date(NOW.getTime() - 3 * 86_400_000) },
      /expires in -3 days.*: expired/,
      /renew/,
    ],
  ])('TLS: %j fails with a fix', async (tls, detail, fix) => {
    const run = await doctor({ network: { tls } });
    expect(run.line('TLS')).toMatch(/^✗ TLS/);
    expect(run.line('TLS')).toMatch(detail);
    expect(run.out).toMatch(fix);
    expect(run.error).toBeInstanceOf(ChecksFailedError);
  });

  it('names a custom CA in use', async () => {
    const run = await doctor({ env: { NODE_EXTRA_CA_CERTS: '/etc/corp-ca.pem' } });
    expect(run.line('TLS')).toMatch(/custom CA: NODE_EXTRA_CA_CERTS \/etc\/corp-ca\.pem/);
  });

  it('through a proxy: DNS and TCP go to the proxy, TLS is left to the probe', async () => {
    const run = await doctor({
      env: { HTTPS_PROXY: 'http://user:secret@proxy.corp:3128' },
      probe: true,
    });
    expect(run.calls).toEqual(['lookup proxy.corp', 'connect proxy.corp:3128']);
    expect(run.line('proxy')).toMatch(
      /ugs\.example\.com through http:\/\/\*\*\*@proxy\.corp:3128 \(from HTTPS_PROXY/,
    );
    expect(run.out).not.toContain('secret');
    expect(run.line('TLS')).toMatch(/^– TLS +negotiated through the proxy/);
    expect(run.line('probe')).toMatch(/^✓ probe/);
    // --probe was given: no check may tell the user to add it.
    expect(run.out).not.toContain('add --probe');
  });

  it('through a proxy without --probe: TLS says that --probe would check it', async () => {
    const run = await doctor({ env: { HTTPS_PROXY: 'http://proxy.corp:3128' } });
    expect(run.line('TLS')).toMatch(/^– TLS +negotiated through the proxy/);
    expect(run.out).toContain('add --probe to send a request through it');
  });

  it('a host in NO_PROXY is reached directly, and the check says which entry', async () => {
    const run = await doctor({
      env: { HTTPS_PROXY: 'http://proxy.corp:3128', NO_PROXY: 'localhost,.example.com' },
    });
    expect(run.line('proxy')).toMatch(
      /bypassed for ugs\.example\.com by NO_PROXY entry "\.example\.com"/,
    );
    expect(run.calls[0]).toBe('lookup ugs.example.com');
  });

  it('plain http to another host fails unless --insecure-http, which is named', async () => {
    const refused = await doctor({ baseUrl: 'http://ugs.example.com' });
    expect(refused.line('base URL')).toMatch(
      /^✗ base URL +refusing to send the API token over plain http/,
    );
    expect(refused.out).toMatch(/fix: use https:\/\//);
    const allowed = await doctor({ baseUrl: 'http://ugs.example.com', insecureHttp: true });
    expect(allowed.line('base URL')).toMatch(/^✓ .*the API token crosses the network unencrypted/);
    expect(allowed.line('TLS')).toMatch(/^– TLS +not used/);
  });

  it('no token, or a malformed one: the token check fails, its fix names the way to set it', async () => {
    const missing = await doctor({ token: null, probe: true });
    expect(missing.line('API token')).toMatch(/^✗ API token +not set/);
    expect(missing.out).toMatch(/fix: run `ugs login`, or set UGS_API_TOKEN/);
    expect(missing.probes).toEqual([]);
    const spaced = await doctor({ env: { UGS_API_TOKEN: 'abc def-1234567' } });
    expect(spaced.line('API token')).toMatch(
      /^✗ API token +from UGS_API_TOKEN: contains a space or tab at position 4/,
    );
    expect(spaced.out).not.toContain('abc def-1234567');
  });

  it('a token in the credential store is read from it: checked, masked and used by the probe', async () => {
    const store = new MemoryCredentialStore({
      [credentialAccount('default', '/fake/ugs/config.json')]: TOKEN,
    });
    const run = await doctor({ store, probe: true });
    expect(run.error).toBeUndefined();
    expect(run.line('API token')).toMatch(/^✓ API token +\*\*\*\*wxyz from profile "default"/);
    expect(run.line('probe')).toMatch(/^✓ probe +GET \/api\/user with \{\}: HTTP 400/);
    expect(run.probes[0]?.headers.authorization).toBe(`Token ${TOKEN}`);
    expect(run.out).not.toContain(TOKEN);

    store.unreachable = 'no D-Bus session';
    const unreachable = await doctor({ store, probe: true });
    expect(unreachable.line('API token')).toMatch(
      /^✗ API token +cannot read the API token of profile "default" from the Fake Keychain: no D-Bus session/,
    );
    expect(unreachable.out).toMatch(/fix: run `ugs login --secure-storage` again where/);
    expect(unreachable.probes).toEqual([]);
  });

  it('nothing configured: the same nine checks, those that need a base URL skipped', async () => {
    const io = makeIO({ env: { LANG: 'C.UTF-8' } });
    const { network, calls } = fakeNetwork();
    const deps: DoctorDeps = makeDeps({ io, profiles: {}, network, now: () => NOW });
    const error = await rejection(
      runDoctor({ probe: true, json: false, profileSource: 'default' }, deps),
    );
    expect((error as Error).message).toBe('3 of 9 checks failed: profile, base URL, API token');
    expect(
      io.stdout.text
        .split('\n')
        .filter((l) => /^[✓✗–] /.test(l))
        .map((l) => l[0]),
    ).toEqual(['–', '✗', '✗', '–', '–', '–', '–', '✗', '–']);
    expect(io.stdout.text).toMatch(
      /fix: pass --base-url <url>, set UGS_BASE_URL, or run `ugs login`/,
    );
    expect(calls).toEqual([]);
  });

  it('--json prints {ok, checks} with each check as data', async () => {
    const run = await doctor({
      json: true,
      network: {
        lookup: () => {
          throw codeError('ENOTFOUND');
        },
      },
    });
    const parsed = JSON.parse(run.out) as {
      ok: boolean;
      checks: { id: string; status: string; fix?: string }[];
    };
    expect(parsed.ok).toBe(false);
    expect(parsed.checks.map((c) => c.id)).toEqual([
      'config',
      'profile',
      'base-url',
      'proxy',
      'dns',
      'tcp',
      'tls',
      'token',
      'probe',
    ]);
    expect(parsed.checks.find((c) => c.id === 'dns')).toMatchObject({
      status: 'fail',
      fix: expect.any(String),
    });
    expect(run.error).toBeInstanceOf(ChecksFailedError);
  });

  it('writes ASCII marks where Unicode cannot show', async () => {
    expect(unicodeOutput({ LANG: 'en_US.UTF-8' })).toBe(true);
    expect(unicodeOutput({ LANG: 'en_US.UTF-8', TERM: 'dumb' })).toBe(false);
    expect(unicodeOutput({ LANG: 'C' })).toBe(false);
    expect(unicodeOutput({ LC_ALL: 'C', LANG: 'en_US.UTF-8' })).toBe(false);
    const run = await doctor({ env: { TERM: 'dumb' } });
    expect(run.out).toMatch(/^ok base URL/m);
    expect(run.out).not.toMatch(/[✓✗–]/);
  });
});

describe('proxyFor: the proxy the transport would use', () => {
  const https = new URL('https://api.example.com');
  it.each([
    [{}, 'none'],
    [{ HTTPS_PROXY: 'http://p:1' }, 'proxy'],
    [{ https_proxy: '', HTTPS_PROXY: 'http://p:1' }, 'none'],
    [{ HTTP_PROXY: 'http://p:1' }, 'proxy'],
    [{ HTTPS_PROXY: 'http://p:1', NO_PROXY: '*' }, 'bypassed'],
    [{ HTTPS_PROXY: 'http://p:1', NO_PROXY: 'example.com' }, 'bypassed'],
    [{ HTTPS_PROXY: 'http://p:1', NO_PROXY: 'api.example.com:8443' }, 'proxy'],
    [{ HTTPS_PROXY: 'http://p:1', no_proxy: 'other.com', NO_PROXY: 'example.com' }, 'proxy'],
    [{ HTTPS_PROXY: 'not a url' }, 'invalid'],
  ])('%j -> %s', (env, kind) => {
    expect(proxyFor(https, env).kind).toBe(kind);
  });

  it('never for loopback; HTTPS_PROXY is not used for http://', () => {
    expect(proxyFor(new URL('http://127.0.0.1:4010'), { HTTP_PROXY: 'http://p:1' })).toEqual({
      kind: 'none',
      reason: 'loopback',
    });
    expect(proxyFor(new URL('http://h.example'), { HTTPS_PROXY: 'http://p:1' }).kind).toBe('none');
  });

  it('matches NO_PROXY entries as undici does', () => {
    expect(noProxyEntry('a.b.example.com', 443, 'x.org, *.example.com')).toBe('*.example.com');
    expect(noProxyEntry('notexample.com', 443, 'example.com')).toBeUndefined();
    expect(noProxyEntry('example.com', 443, 'example.com:443')).toBe('example.com:443');
  });

  it('never shows proxy credentials', () => {
    expect(redactUrl('http://user:pass@proxy:3128')).toBe('http://***@proxy:3128');
    expect(redactUrl('http://proxy:3128')).toBe('http://proxy:3128');
  });
});

describe("probeVerdict: only the service's own refusal of {} says the token was accepted", () => {
  const JSON_TYPE = 'application/json';
  const answer = (status: number, text: string, contentType?: string): ProbeAnswer => ({
    status,
    headers: contentType === undefined ? {} : { 'content-type': contentType },
    text,
  });
  const NGINX_400 =
    '<html>\r\n<head><title>400 Bad Request</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n</body>\r\n</html>\r\n';

  it.each([
    [
      "DRF's field errors for Get User's fields",
      answer(
        400,
        '{"name":["This field is required."],"user_group_id":["This field is required."]}',
        JSON_TYPE,
      ),
    ],
    [
      'one field error, with a charset',
      answer(400, '{"user_group_id":["This field is required."]}', `${JSON_TYPE}; charset=utf-8`),
    ],
    [
      "the interface's error shape",
      answer(400, '{"success":0,"error":"name is required"}', JSON_TYPE),
    ],
    ['the error shape alone', answer(400, '{"success":0}', JSON_TYPE)],
    [
      "the emulator's answer: the envelope and DRF's field errors",
      answer(400, '{"success":0,"name":["This field is required."]}', JSON_TYPE),
    ],
  ])('accepted: %s', (_what, reply) => {
    expect(probeVerdict(reply, 'interface')).toBe('accepted');
  });

  it.each([
    ["nginx's HTML 400 page", answer(400, NGINX_400, 'text/html')],
    ['a text/plain 400', answer(400, 'Bad Request\n', 'text/plain')],
    ['a 400 without a body or a content type', answer(400, '')],
    [
      'a JSON 400 of another shape',
      answer(400, '{"message":"Bad Request","statusCode":400}', JSON_TYPE),
    ],
    [
      "DRF's refusal of the whole request",
      answer(400, '{"detail":"JSON parse error - x"}', JSON_TYPE),
    ],
    [
      'field errors naming fields the request does not have',
      answer(400, '{"email":["This field is required."]}', JSON_TYPE),
    ],
    ['a field error that is not a list of messages', answer(400, '{"name":"required"}', JSON_TYPE)],
    ['an empty field error list', answer(400, '{"name":[]}', JSON_TYPE)],
    ['an empty JSON object', answer(400, '{}', JSON_TYPE)],
    ['a JSON list', answer(400, '[["This field is required."]]', JSON_TYPE)],
    ['"success": 1 with a 400', answer(400, '{"success":1}', JSON_TYPE)],
    ['the error shape served as HTML', answer(400, '{"success":0}', 'text/html')],
    ['field errors without a content type', answer(400, '{"name":["This field is required."]}')],
    ['a 200', answer(200, '{"success":1}', JSON_TYPE)],
    ['an HTML 404', answer(404, '<h1>Not Found</h1>', 'text/html')],
  ])('unexpected: %s', (_what, reply) => {
    expect(probeVerdict(reply, 'interface')).toBe('unexpected');
  });

  it('explo: the empty refresh is judged by the fields of the refresh', () => {
    const missing = answer(400, '{"current_token":["This field is required."]}', JSON_TYPE);
    expect(probeVerdict(missing, 'explo')).toBe('accepted');
    const emulator = answer(
      400,
      '{"success":0,"current_token":["This field is required."]}',
      JSON_TYPE,
    );
    expect(probeVerdict(emulator, 'explo')).toBe('accepted');
    // Get User's fields are not the refresh's: some other view answered.
    const other = answer(400, '{"name":["This field is required."]}', JSON_TYPE);
    expect(probeVerdict(other, 'explo')).toBe('unexpected');
    expect(probeVerdict(missing, 'interface')).toBe('unexpected');
    expect(probeVerdict(answer(400, 'Bad Request', 'text/plain'), 'explo')).toBe('unexpected');
  });

  it("read-only: a JSON 403 with DRF's permission detail, the token accepted but not for writing", () => {
    const denied = '{"detail":"You do not have permission to perform this action."}';
    expect(probeVerdict(answer(403, denied, JSON_TYPE), 'explo')).toBe('read-only');
    expect(
      probeVerdict(answer(403, `{"success":0,${denied.slice(1)}`, JSON_TYPE), 'interface'),
    ).toBe('read-only');
    // Another detail, a 401, or the words outside JSON: the token itself was refused.
    expect(probeVerdict(answer(401, denied, JSON_TYPE), 'explo')).toBe('refused');
    expect(probeVerdict(answer(403, denied, 'text/html'), 'explo')).toBe('refused');
  });

  it.each([401, 403])('refused: %i, whatever its body', (status) => {
    expect(
      probeVerdict(answer(status, '{"detail":"Invalid token."}', JSON_TYPE), 'interface'),
    ).toBe('refused');
    expect(probeVerdict(answer(status, '<html>', 'text/html'), 'explo')).toBe('refused');
  });
});
