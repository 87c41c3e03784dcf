/**
 * `ugs jwt`: embed JWTs minted locally with the embed secret (a compact JWE, dir + A256GCM),
 * fetched from the Customer API (`--via-api`, generate_jwt/), and read back (`jwt inspect`).
 * The minted JWT is opened by jose's own compactDecrypt with the raw key and, independently, by
 * node:crypto's AES-256-GCM by hand; a JWE made by hand with node:crypto is read by `inspect`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compactDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';
import { mint, prepare } from '../../src/jwt/fast-mint.js';
import { type MintOptions, runJwt } from '../../src/operations/generate-jwt/command.js';
import { MemoryCredentialStore, makeDeps, makeIO, terminalIO } from '../kit/fakes.js';
import {
  describeRun,
  makeSandbox,
  runMain,
  type Sandbox,
  serviceWithProfile,
  stripAnsi,
  writeConfig,
} from '../kit/index.js';

const SECRET = 'embed-secret-0123456789abcdefXYZ'; // 32 bytes
const OTHER_SECRET = 'another-secret-0123456789abcdefZ'; // 32 bytes
const KID = 'key-2026';
const ENV = { UGS_EMBED_SECRET: SECRET, UGS_EMBED_KEY_ID: KID };
const API_TOKEN = 'apitoken-jwt-test-1234abcd';

const b64 = (buffer: Buffer) => buffer.toString('base64url');

/** A compact JWE (dir, A256GCM) made with node:crypto alone: the other side of the round trip. */
function handMadeJwe(claims: unknown, secret: string, kid: string): string {
  const header = b64(Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid })));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(secret, 'utf8'), iv);
  // The AAD of a compact JWE is the ASCII of the protected header's base64url (RFC 7516 5.1).
  cipher.setAAD(Buffer.from(header, 'ascii'));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(claims), 'utf8'), cipher.final()]);
  return [header, '', b64(iv), b64(ciphertext), b64(cipher.getAuthTag())].join('.');
}

/** A compact JWE opened by hand with node:crypto: its header and its payload's JSON. */
function handOpen(jwt: string, secret: string): { header: unknown; claims: unknown } {
  const [header = '', encryptedKey, iv = '', ciphertext = '', tag = ''] = jwt.split('.');
  // `dir`: the key is the shared secret itself, so the encrypted key part is empty.
  expect(encryptedKey).toBe('');
  const decipher = createDecipheriv(
    'aes-256-gcm',
    Buffer.from(secret, 'utf8'),
    Buffer.from(iv, 'base64url'),
  );
  decipher.setAAD(Buffer.from(header, 'ascii'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  const plain = Buffer.concat([
    decipher.update(Buffer.from(ciphertext, 'base64url')),
    decipher.final(),
  ]);
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')),
    claims: JSON.parse(plain.toString('utf8')),
  };
}

async function mintJson(args: readonly string[], env: Record<string, string> = ENV) {
  const result = await runMain(['jwt', '--id', 'acme', '--embed', 'sales', ...args, '--json'], {
    env,
  });
  expect(result.code, describeRun(result)).toBe(0);
  return JSON.parse(result.stdout) as {
    jwt: string;
    header: Record<string, unknown>;
    claims: Record<string, unknown>;
    expires_at: string;
  };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A local mint for acme's `sales` embed, as `ugs jwt --id acme --embed sales` parses it. */
function mintOptions(format: MintOptions['format']): MintOptions {
  return {
    action: 'mint',
    id: 'acme',
    embed: 'sales',
    expires: undefined,
    origin: undefined,
    keyId: undefined,
    chart: undefined,
    viaApi: false,
    secret: undefined,
    format,
  };
}

describe('ugs jwt: minted locally with the embed secret', () => {
  it("jose's own compactDecrypt opens it with the raw 32-byte key: the documented header and claims", async () => {
    const before = nowSeconds();
    const minted = await mintJson(['--origin', 'https://app.example.com', '--expires', '2h']);
    const { plaintext, protectedHeader } = await compactDecrypt(
      minted.jwt,
      new TextEncoder().encode(SECRET),
    );
    expect(protectedHeader).toEqual({ alg: 'dir', enc: 'A256GCM', kid: KID });
    const claims = JSON.parse(new TextDecoder().decode(plaintext)) as Record<string, unknown>;
    expect(claims).toEqual({
      cst: 'acme',
      dsh: 'sales',
      exp: expect.any(Number),
      iss: 'https://app.example.com/',
    });
    expect(claims.exp).toBeGreaterThanOrEqual(before + 7200);
    expect(claims.exp).toBeLessThanOrEqual(nowSeconds() + 7200);
    expect(minted.claims).toEqual(claims);
    expect(minted.header).toEqual(protectedHeader);
    expect(minted.expires_at).toBe(
      new Date((claims.exp as number) * 1000).toISOString().replace('.000Z', 'Z'),
    );
  });

  it("node:crypto's AES-256-GCM opens it by hand (AAD = the protected header's base64url)", async () => {
    const minted = await mintJson([]);
    const opened = handOpen(minted.jwt, SECRET);
    expect(opened.header).toEqual({ alg: 'dir', enc: 'A256GCM', kid: KID });
    expect(opened.claims).toEqual(minted.claims);
    // 24 hours when --expires is not given, as the vendor's API does.
    const exp = (opened.claims as { exp: number }).exp;
    expect(Math.abs(exp - (nowSeconds() + 86400))).toBeLessThanOrEqual(2);
    expect(() => handOpen(minted.jwt, OTHER_SECRET)).toThrow();
  });

  it('prints the JWT alone by default, and --field jwt for scripts', async () => {
    const plain = await runMain(['jwt', '--id', 'acme', '--embed', 'sales'], { env: ENV });
    expect(plain.code, describeRun(plain)).toBe(0);
    expect(plain.stdout).toMatch(/^[\w-]+\.\.[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const field = await runMain(['jwt', '--id', 'acme', '--embed', 'sales', '--field', 'jwt'], {
      env: ENV,
    });
    expect(field.code, describeRun(field)).toBe(0);
    expect(handOpen(field.stdout.trim(), SECRET).claims).toMatchObject({ cst: 'acme' });
    const bad = await runMain(['jwt', '--id', 'a', '--embed', 'b', '--field', 'token'], {
      env: ENV,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('fields: jwt, header, claims, expires_at');
  });

  it.each([
    ['90s', 90],
    ['30m', 1800],
    ['2h', 7200],
    ['7d', 604800],
    ['PT2H', 7200],
    ['P1DT30M', 88200],
  ])('--expires %s is exp = now + %i s', async (flag, seconds) => {
    const before = nowSeconds();
    const { claims } = await mintJson(['--expires', flag]);
    expect(claims.exp).toBeGreaterThanOrEqual(before + seconds);
    expect(claims.exp).toBeLessThanOrEqual(nowSeconds() + seconds);
  });

  it.each([
    [['--expires', '0s'], 'must be more than 0'],
    [['--expires', 'P1M'], 'no years or months'],
    [['--expires', 'soon'], 'expects a duration'],
    [['--origin', 'http://app.example.com'], 'must use https://'],
    [['--origin', 'https://app.example.com/page'], 'an origin (scheme, host and port)'],
  ])('%j is exit 2 before anything is minted', async (flags, text) => {
    const result = await runMain(['jwt', '--id', 'acme', '--embed', 'sales', ...flags], {
      env: ENV,
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain(text);
    expect(result.stdout).toBe('');
  });

  it('--origin: a trailing slash is added; http:// is allowed on this machine only', async () => {
    expect((await mintJson(['--origin', 'https://app.example.com:8443'])).claims.iss).toBe(
      'https://app.example.com:8443/',
    );
    expect((await mintJson(['--origin', 'http://localhost:3000/'])).claims.iss).toBe(
      'http://localhost:3000/',
    );
  });

  it('a secret that is not 32 bytes is exit 2 saying so, and nothing is printed', async () => {
    const result = await runMain(['jwt', '--id', 'acme', '--embed', 'sales'], {
      env: { UGS_EMBED_SECRET: 'x'.repeat(44), UGS_EMBED_KEY_ID: KID },
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain(
      'error: the embed secret (env UGS_EMBED_SECRET) is 44 bytes; an A256GCM key is exactly 32',
    );
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain('x'.repeat(44));
  });

  it('no secret anywhere, or no key id for it: exit 2 saying how to give one', async () => {
    const none = await runMain(['jwt', '--id', 'acme', '--embed', 'sales']);
    expect(none.code, describeRun(none)).toBe(2);
    expect(none.stderr).toContain('error: no embed secret');
    expect(none.stderr).toContain('--embed-secret-stdin');
    const noKid = await runMain(['jwt', '--id', 'acme', '--embed', 'sales'], {
      env: { UGS_EMBED_SECRET: SECRET },
    });
    expect(noKid.code, describeRun(noKid)).toBe(2);
    expect(noKid.stderr).toContain('no key id');
  });

  it('--secret-stdin reads the secret from stdin (a trailing newline is not part of it)', async () => {
    const result = await runMain(
      ['jwt', '--id', 'acme', '--embed', 'sales', '--secret-stdin', '--key-id', 'k9', '--json'],
      { stdin: `${OTHER_SECRET}\n` },
    );
    expect(result.code, describeRun(result)).toBe(0);
    const { jwt } = JSON.parse(result.stdout) as { jwt: string };
    expect(handOpen(jwt, OTHER_SECRET).header).toEqual({ alg: 'dir', enc: 'A256GCM', kid: 'k9' });
  });

  it('--secret in argv is used, with the warning --current-token gets at a terminal', async () => {
    const deps = makeDeps({ io: terminalIO(), profiles: {} });
    await runJwt(
      {
        action: 'mint',
        id: 'acme',
        embed: 'sales',
        expires: undefined,
        origin: undefined,
        keyId: KID,
        chart: undefined,
        viaApi: false,
        secret: { kind: 'flag', value: SECRET },
        format: { kind: 'field', name: 'jwt' },
      },
      deps,
    );
    expect(stripAnsi(deps.io.stderr.text).replace(/\s+/g, ' ')).toContain(
      'warning: --secret puts the embed secret in your shell history and in process lists',
    );
    expect(handOpen(deps.io.stdout.text.trim(), SECRET).claims).toMatchObject({ cst: 'acme' });
  });

  it("the profile's secret (config file): saved by login --embed-secret-stdin, used by jwt", async () => {
    const sb = makeSandbox();
    const login = await runMain(['login', '--embed-secret-stdin', '--embed-key-id', KID], {
      sandbox: sb,
      stdin: `${SECRET}\n`,
    });
    expect(login.code, describeRun(login)).toBe(0);
    expect(login.stderr).toContain(`Saved the embed secret (kid ${KID}) of profile "default"`);
    const config = JSON.parse(readFileSync(sb.configPath, 'utf8')) as {
      profiles: Record<string, Record<string, string>>;
    };
    expect(config.profiles.default).toEqual({ embedSecret: SECRET, embedKeyId: KID });
    const minted = await runMain(['jwt', '--id', 'acme', '--embed', 'sales'], { sandbox: sb });
    expect(minted.code, describeRun(minted)).toBe(0);
    expect(handOpen(minted.stdout.trim(), SECRET).header).toMatchObject({ kid: KID });
  });

  it('login --embed-secret-stdin refuses a secret that is not 32 bytes, and saves nothing', async () => {
    const sb = makeSandbox();
    const login = await runMain(['login', '--embed-secret-stdin', '--embed-key-id', KID], {
      sandbox: sb,
      stdin: 'too-short\n',
    });
    expect(login.code, describeRun(login)).toBe(2);
    expect(login.stderr).toContain('is 9 bytes; an A256GCM key is exactly 32');
    expect(existsSync(sb.configPath)).toBe(false);
  });

  it('login --embed-secret-stdin --secure-storage keeps it in the credential store, as the API token', async () => {
    const store = new MemoryCredentialStore();
    const { runLogin } = await import('../../src/commands/login.js');
    const login = makeDeps({
      io: makeIO({ stdinText: SECRET }),
      profiles: {},
      credentialStore: store,
    });
    await runLogin(
      {
        withToken: false,
        secureStorage: true,
        verify: true,
        embedSecretStdin: true,
        embedKeyId: KID,
      },
      login,
    );
    expect(login.config.profiles.default).toEqual({ embedKeyId: KID, embedSecretStore: 'keyring' });
    expect([...store.secrets.values()]).toEqual([SECRET]);
    expect([...store.secrets.keys()][0]).toMatch(/embed secret$/);
    const mint = makeDeps({ profiles: login.config.profiles, credentialStore: store });
    await runJwt(mintOptions({ kind: 'field', name: 'jwt' }), mint);
    expect(handOpen(mint.io.stdout.text.trim(), SECRET).header).toMatchObject({ kid: KID });
  });
});

describe('ugs jwt inspect', () => {
  const claims = { cst: 'acme', dsh: 'sales', exp: 0, iss: 'https://app.example.com/' };

  it('reads a JWE made by hand with node:crypto: the claims round-trip exactly', async () => {
    const made = {
      cst: 'acme',
      dsh: 'sales',
      exp: nowSeconds() + 3600,
      iss: 'https://app.example.com/',
      rbc: { region: ['eu', 'us'] },
      des: 'émbed ✓',
    };
    const jwt = handMadeJwe(made, SECRET, KID);
    const result = await runMain(['jwt', 'inspect', '-', '--json'], { env: ENV, stdin: jwt });
    expect(result.code, describeRun(result)).toBe(0);
    const read = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(read.claims).toStrictEqual(made);
    expect(read.header).toEqual({ alg: 'dir', enc: 'A256GCM', kid: KID });
    expect(read.expired).toBe(false);
    expect(read.problems).toEqual([]);
  });

  it('shows the header, the claims and "expires in 1h 59m"', async () => {
    const now = new Date('2026-11-29T08:00:30Z');
    const exp = Date.parse('2026-11-29T10:00:00Z') / 1000;
    const deps = makeDeps({
      io: makeIO({ env: ENV, stdinText: handMadeJwe({ ...claims, exp }, SECRET, KID) }),
      now: () => now,
      profiles: {},
    });
    await runJwt(inspectOptions({ jwtFromStdin: true }), deps);
    const out = deps.io.stdout.text;
    expect(out).toContain('alg\tdir\nenc\tA256GCM\nkid\tkey-2026\n');
    expect(out).toContain('cst\tacme\n');
    expect(out).toContain(`exp\t${exp} (2026-11-29T10:00:00Z, expires in 1h 59m)`);
  });

  it('an expired JWT is exit 1, "expired 3h ago", after its header and claims', async () => {
    const exp = nowSeconds() - 3 * 3600 - 30;
    const result = await runMain(['jwt', 'inspect', '-'], {
      env: ENV,
      stdin: handMadeJwe({ ...claims, exp }, SECRET, KID),
    });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout).toContain('kid\tkey-2026');
    expect(result.stdout).toContain('expired 3h ago');
    expect(result.stderr).toMatch(/error: the JWT expired 3h ago \(at \d{4}-\d\d-\d\dT/);
  });

  it('another key is exit 1: "not encrypted with this embed secret (kid X)"', async () => {
    const jwt = handMadeJwe({ ...claims, exp: nowSeconds() + 60 }, OTHER_SECRET, 'old-key');
    const result = await runMain(['jwt', 'inspect', '-'], { env: ENV, stdin: jwt });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout).toContain('kid\told-key');
    expect(result.stderr).toContain('error: not encrypted with this embed secret (kid old-key)');
    expect(result.stderr).toContain(`the JWT names key old-key; the embed secret used`);
  });

  it.each([
    [
      'a JWS',
      `${b64(Buffer.from('{"alg":"HS256","typ":"JWT"}'))}.${b64(Buffer.from('{"sub":"1"}'))}.c2ln`,
      'error: this is a JWS (a signed JWT, alg HS256), not the JWE an embedded dashboard takes',
    ],
    ['garbage', 'not-a-token-at-all', 'error: this is not a JWT'],
  ])('%s is exit 1 and named as such', async (_, text, error) => {
    const result = await runMain(['jwt', 'inspect', '-'], { env: ENV, stdin: text });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain(error);
  });

  it('--id and --embed: exit 1 when the claims name another customer or dashboard', async () => {
    const jwt = handMadeJwe({ ...claims, exp: nowSeconds() + 600 }, SECRET, KID);
    const ok = await runMain(['jwt', 'inspect', '-', '--id', 'acme', '--embed', 'sales'], {
      env: ENV,
      stdin: jwt,
    });
    expect(ok.code, describeRun(ok)).toBe(0);
    const other = await runMain(['jwt', 'inspect', '-', '--id', 'globex', '--embed', 'ops'], {
      env: ENV,
      stdin: jwt,
    });
    expect(other.code, describeRun(other)).toBe(1);
    expect(other.stderr).toContain(
      'error: the JWT is for customer "acme", not "globex"; the JWT is for dashboard "sales", not "ops"',
    );
  });

  it('without any secret: the header only, a note, exit 0; --id then needs the secret (exit 2)', async () => {
    const jwt = handMadeJwe({ ...claims, exp: nowSeconds() + 600 }, SECRET, KID);
    const header = await runMain(['jwt', 'inspect', '-'], { stdin: jwt });
    expect(header.code, describeRun(header)).toBe(0);
    expect(header.stdout).toBe('alg\tdir\nenc\tA256GCM\nkid\tkey-2026\n');
    expect(header.stderr).toContain('note: the claims are encrypted');
    const checked = await runMain(['jwt', 'inspect', '-', '--id', 'acme'], { stdin: jwt });
    expect(checked.code, describeRun(checked)).toBe(2);
  });

  it('a JWT in argv works, with the warning --current-token gets at a terminal', async () => {
    const jwt = handMadeJwe({ ...claims, exp: nowSeconds() + 600 }, SECRET, KID);
    const deps = makeDeps({ io: terminalIO({ env: ENV }), profiles: {} });
    await runJwt(inspectOptions({ jwt }), deps);
    expect(stripAnsi(deps.io.stderr.text).replace(/\s+/g, ' ')).toContain(
      'warning: a JWT on the command line lands in your shell history and in process lists',
    );
    const piped = makeDeps({ io: makeIO({ env: ENV }), profiles: {} });
    await runJwt(inspectOptions({ jwt }), piped);
    expect(piped.io.stderr.text).not.toContain('warning');
  });

  it('the JWT and the secret cannot both come from stdin (exit 2)', async () => {
    const result = await runMain(['jwt', 'inspect', '-', '--secret-stdin'], { stdin: 'x' });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('cannot both come from stdin');
  });

  it('`jwt inspect` takes --id, --json and --secret-stdin after it, and refuses what only minting takes', async () => {
    const jwt = handMadeJwe({ ...claims, exp: nowSeconds() + 600 }, SECRET, KID);
    const result = await runMain(['jwt', 'inspect', jwt, '--id', 'globex', '--json'], {
      env: ENV,
    });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain('not "globex"');
    expect(JSON.parse(result.stdout)).toMatchObject({ problems: ['another customer'] });
    const fromStdin = await runMain(['jwt', 'inspect', jwt, '--secret-stdin', '--key-id', KID], {
      stdin: SECRET,
    });
    expect(fromStdin.code, describeRun(fromStdin)).toBe(0);
    expect(fromStdin.stdout).toContain('cst\tacme');
    const mintFlag = await runMain(['jwt', 'inspect', jwt, '--expires', '2h'], { env: ENV });
    expect(mintFlag.code, describeRun(mintFlag)).toBe(2);
    expect(mintFlag.stderr).toContain('--expires is not an option of jwt inspect');
  });

  it('inspect --check asks get_customer/ whether the customer exists (exit 1 when not)', async () => {
    const { sb, service } = await serviceWithProfile(
      API_TOKEN,
      { dialect: 'customer' },
      { dialect: 'customer' },
    );
    await service.seed('acme', 'Acme');
    const jwt = (id: string) =>
      handMadeJwe({ cst: id, dsh: 'sales', exp: nowSeconds() + 600 }, SECRET, KID);
    const ok = await runMain(['jwt', 'inspect', '-', '--check'], {
      sandbox: sb,
      env: ENV,
      stdin: jwt('acme'),
    });
    expect(ok.code, describeRun(ok)).toBe(0);
    expect(ok.stderr).toContain('the service has customer "acme"');
    const missing = await runMain(['jwt', 'inspect', '-', '--check'], {
      sandbox: sb,
      env: ENV,
      stdin: jwt('ghost'),
    });
    expect(missing.code, describeRun(missing)).toBe(1);
    expect(missing.stderr).toContain(
      `error: the JWT's customer "ghost" does not exist on the service`,
    );
    expect(service.requests.slice(-1).map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual([
      'POST /api/get_customer/ {"provided_id":"ghost"}',
    ]);
  });
});

function inspectOptions(
  over: Partial<Parameters<typeof runJwt>[0] & { action: 'inspect' }>,
): Parameters<typeof runJwt>[0] {
  return {
    action: 'inspect',
    jwt: undefined,
    jwtFromStdin: false,
    id: undefined,
    embed: undefined,
    check: false,
    keyId: undefined,
    secret: undefined,
    json: false,
    ...over,
  };
}

describe('ugs jwt --via-api (customer dialect)', () => {
  const customerService = () =>
    serviceWithProfile(
      API_TOKEN,
      { dialect: 'customer', embedSecrets: [{ kid: KID, secret: SECRET }] },
      { dialect: 'customer' },
    );

  it('asks generate_jwt/ with the same flags (--expires as ISO 8601) and prints what came back', async () => {
    const { sb, service } = await customerService();
    await service.seed('acme', 'Acme');
    const before = service.requests.length;
    const result = await runMain(
      [
        'jwt',
        '--via-api',
        '--id',
        'acme',
        '--embed',
        'sales',
        '--expires',
        '2h',
        '--origin',
        'https://app.example.com',
        '--key-id',
        KID,
        '--json',
      ],
      { sandbox: sb, env: { UGS_EMBED_SECRET: SECRET } },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /api/generate_jwt/',
    ]);
    expect(service.requests.at(-1)?.json).toEqual({
      provided_id: 'acme',
      embed_id: 'sales',
      key_id: KID,
      expiration: 'PT2H',
      embed_origin: 'https://app.example.com/',
    });
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed.header).toEqual({ alg: 'dir', enc: 'A256GCM', kid: KID });
    // The secret at hand reads the service's JWT back: the same claims a local mint makes.
    expect(printed.claims).toEqual(handOpen(printed.jwt as string, SECRET).claims);
    expect(printed.claims).toMatchObject({
      cst: 'acme',
      dsh: 'sales',
      iss: 'https://app.example.com/',
    });
    const field = await runMain(
      ['jwt', '--via-api', '--id', 'acme', '--embed', 'sales', '--field', 'jwt'],
      { sandbox: sb },
    );
    expect(field.code, describeRun(field)).toBe(0);
    expect(service.requests.at(-1)?.json).toEqual({ provided_id: 'acme', embed_id: 'sales' });
    expect(handOpen(field.stdout.trim(), SECRET).claims).toMatchObject({ cst: 'acme' });
  });

  it('says so when the service encrypted it with another key than the one at hand', async () => {
    const { sb, service } = await customerService();
    await service.seed('acme', 'Acme');
    const result = await runMain(['jwt', '--via-api', '--id', 'acme', '--embed', 'sales'], {
      sandbox: sb,
      env: { UGS_EMBED_SECRET: OTHER_SECRET },
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).toContain(
      "warning: the service's JWT is not encrypted with your embed secret",
    );
  });

  it('in another dialect: exit 2 naming the customer dialect, nothing sent', async () => {
    const { sb, service } = await serviceWithProfile(API_TOKEN);
    const result = await runMain(['jwt', '--via-api', '--id', 'acme', '--embed', 'sales'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('jwt --via-api is not part of the interface dialect');
    expect(service.requests).toEqual([]);
  });
});

describe('secrets: CI masks, --debug, the history', () => {
  it.each([
    ['GitHub Actions', { GITHUB_ACTIONS: 'true' }, '::add-mask::'],
    ['Azure Pipelines', { TF_BUILD: 'True' }, '##vso[task.setsecret]'],
  ])(
    'under %s the secret and the JWT are masked before anything is printed',
    async (_, ci, mask) => {
      const result = await runMain(['jwt', '--id', 'acme', '--embed', 'sales'], {
        env: { ...ENV, ...ci },
      });
      expect(result.code, describeRun(result)).toBe(0);
      const jwt = result.stdout.trim();
      expect(result.stderr).toContain(`${mask}${SECRET}`);
      expect(result.stderr).toContain(`${mask}${jwt}`);
      const inspect = await runMain(['jwt', 'inspect', '-'], {
        env: { ...ENV, ...ci },
        stdin: jwt,
      });
      expect(inspect.stderr).toContain(`${mask}${jwt}`);
    },
  );

  it('the mask of a minted JWT is written before the JWT itself', async () => {
    const deps = makeDeps({
      io: makeIO({ env: { ...ENV, GITHUB_ACTIONS: 'true' } }),
      profiles: {},
    });
    const order: string[] = [];
    // Every write of either stream, in the order they happen.
    for (const [name, stream] of [
      ['out', deps.io.stdout],
      ['err', deps.io.stderr],
    ] as const) {
      const write = stream.write.bind(stream);
      stream.write = ((chunk: string) => {
        order.push(`${name}:${chunk}`);
        return write(chunk);
      }) as typeof stream.write;
    }
    await runJwt(mintOptions({ kind: 'table' }), deps);
    const jwt = deps.io.stdout.text.trim();
    const masked = order.findIndex(
      (line) => line.startsWith('err:') && line.includes(`::add-mask::${jwt}`),
    );
    const printed = order.findIndex((line) => line.startsWith('out:') && line.includes(jwt));
    expect(masked).toBeGreaterThanOrEqual(0);
    expect(masked).toBeLessThan(printed);
  });

  it('--debug shows the secret and the JWTs by their last 4 only, and the history keeps none', async () => {
    const { sb, service } = await serviceWithProfile(
      API_TOKEN,
      { dialect: 'customer', embedSecrets: [{ kid: KID, secret: SECRET }] },
      { dialect: 'customer' },
    );
    await service.seed('acme', 'Acme');
    const get = await runMain(['get', '--id', 'acme', '--name', 'Acme'], { sandbox: sb });
    expect(get.code, describeRun(get)).toBe(0);
    const history = join(sb.configDir, 'history.ndjson');
    const before = readFileSync(history, 'utf8');
    const result = await runMain(
      ['--debug', 'jwt', '--via-api', '--id', 'acme', '--embed', 'sales'],
      {
        sandbox: sb,
        env: { UGS_EMBED_SECRET: SECRET },
      },
    );
    expect(result.code, describeRun(result)).toBe(0);
    const jwt = result.stdout.trim();
    expect(result.stderr).toContain('[debug] > POST');
    expect(result.stderr).toContain(`"jwt":"…${jwt.slice(-4)}"`);
    expect(result.stderr).not.toContain(jwt);
    expect(result.stderr).not.toContain(SECRET);
    const local = await runMain(['--debug', 'jwt', 'inspect', '-'], {
      sandbox: sb,
      env: ENV,
      stdin: jwt,
    });
    expect(local.code, describeRun(local)).toBe(0);
    expect(local.stderr).not.toContain(jwt);
    // Nothing of the JWT run reached the token history.
    const after = readFileSync(history, 'utf8');
    expect(after).toBe(before);
    expect(after).not.toContain(jwt.slice(-12));
  });

  it('the embed secret in a config file is checked like the rest of the profile', async () => {
    const sb: Sandbox = makeSandbox();
    writeConfig(sb, { profiles: { default: { embedSecret: 42 } } });
    const result = await runMain(['jwt', '--id', 'acme', '--embed', 'sales'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('"embedSecret" of profile "default" must be a string');
  });
});

describe('the fast path of a local mint (src/jwt/fast-mint.ts)', () => {
  const args = ['--id', 'acme', '--embed', 'sales'];
  const env = { ...ENV, UGS_CONFIG_DIR: '/nonexistent-ugs-config' };

  it('takes the plain mint into a pipe, and mints what the command mints', async () => {
    const prepared = prepare([...args, '--expires=2h', '--json'], env, false, 1_000_000_000_000);
    expect(prepared?.claims).toEqual({ cst: 'acme', dsh: 'sales', exp: 1_000_007_200 });
    const text = await mint(prepared as NonNullable<typeof prepared>);
    const printed = JSON.parse(text) as { jwt: string; claims: unknown };
    expect(handOpen(printed.jwt, SECRET)).toEqual({
      header: { alg: 'dir', enc: 'A256GCM', kid: KID },
      claims: printed.claims,
    });
  });

  it.each([
    ['a terminal', args, env, true],
    ['a CI runner', args, { ...env, GITHUB_ACTIONS: 'true' }, false],
    ['a profile', args, { ...env, UGS_PROFILE: 'ci' }, false],
    ['a global option', ['--debug', ...args], env, false],
    ['--via-api', [...args, '--via-api'], env, false],
    ['a flag given twice', [...args, '--id', 'x'], env, false],
    ['no secret', args, { UGS_CONFIG_DIR: '/nonexistent-ugs-config' }, false],
    ['a bad value', [...args, '--expires', 'soon'], env, false],
    ['a short secret', args, { ...env, UGS_EMBED_SECRET: 'short' }, false],
  ])('declines %s: main.cjs runs the command', (_, argv, environment, terminal) => {
    expect(prepare(argv, environment, terminal, Date.now())).toBeUndefined();
  });
});
