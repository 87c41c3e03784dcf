/**
 * The emulator and embed JWTs: `ugs serve --embed-secret KID:SECRET` serves generate_jwt/ in the
 * customer dialect with those keys, and POST /api/embed/check/ (the emulator's own route, no API
 * token) plays the dashboard shown a JWT: each one logged as valid, expired, wrong key or wrong
 * customer, by its last 4 only.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { compactDecrypt } from 'jose';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseServeFlags } from '../../src/commands/serve.js';
import { UsageError } from '../../src/errors.js';
import { call, logLines, startEmulator } from '../kit/index.js';

const SECRET = 'emulator-secret-0123456789abcdef'; // 32 bytes
const OTHER = 'other-secret-0123456789abcdefghi'; // 32 bytes
const KID = 'emu-1';

async function emulator(embedSecrets = [{ kid: KID, secret: SECRET }]) {
  const notices: string[] = [];
  const log: string[] = [];
  const running = await startEmulator({
    dialect: 'customer',
    embedSecrets,
    notice: (line) => notices.push(line),
    log: (line) => log.push(line),
  });
  onTestFinished(() => running.close());
  const customer = running.tokenFor('Customer');
  const post = (path: string, body: unknown, token: string | null = customer) =>
    call(running.url, {
      method: 'POST',
      path,
      token: null,
      headers: token === null ? {} : { 'explo-authorization': `Token ${token}` },
      body,
    });
  await post('/api/create_customer/', { provided_id: 'acme', name: 'Acme' });
  return { running, notices, log, post };
}

function jwe(claims: unknown, secret: string, kid: string): string {
  const b64 = (buffer: Buffer) => buffer.toString('base64url');
  const header = b64(Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid })));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(secret), iv);
  cipher.setAAD(Buffer.from(header, 'ascii'));
  const body = Buffer.concat([cipher.update(JSON.stringify(claims)), cipher.final()]);
  return [header, '', b64(iv), b64(body), b64(cipher.getAuthTag())].join('.');
}

const soon = () => Math.floor(Date.now() / 1000) + 3600;

describe('ugs serve --embed-secret', () => {
  it('parses KID:SECRET, repeatable; a secret of another length or a key id twice is exit 2', () => {
    const base = { port: '0', host: '127.0.0.1', apiToken: [], fault: [] };
    const parsed = parseServeFlags(
      { ...base, embedSecret: [`${KID}:${SECRET}`, `k2:${OTHER}`] },
      false,
    );
    expect(parsed.embedSecrets).toEqual([
      { kid: KID, secret: SECRET },
      { kid: 'k2', secret: OTHER },
    ]);
    expect(() => parseServeFlags({ ...base, embedSecret: ['k:short'] }, false)).toThrow(
      /is 5 bytes; an A256GCM key is exactly 32/,
    );
    expect(() =>
      parseServeFlags({ ...base, embedSecret: [`k:${SECRET}`, `k:${OTHER}`] }, false),
    ).toThrow(UsageError);
    expect(() => parseServeFlags({ ...base, embedSecret: [SECRET] }, false)).toThrow(
      /expects KID:SECRET/,
    );
  });
});

describe('generate_jwt/ in the customer dialect', () => {
  it('mints with the key of key_id (the first without it), ISO 8601 expiration, embed_origin as iss', async () => {
    const { post } = await emulator([
      { kid: KID, secret: SECRET },
      { kid: 'k2', secret: OTHER },
    ]);
    const before = Math.floor(Date.now() / 1000);
    const reply = await post('/api/generate_jwt/', {
      provided_id: 'acme',
      embed_id: 'sales',
      key_id: 'k2',
      expiration: 'PT2H',
      embed_origin: 'https://app.example.com',
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json).toMatchObject({ success: 1, jwt: expect.any(String) });
    const opened = await compactDecrypt(reply.json?.jwt as string, Buffer.from(OTHER));
    expect(opened.protectedHeader).toEqual({ alg: 'dir', enc: 'A256GCM', kid: 'k2' });
    const claims = JSON.parse(Buffer.from(opened.plaintext).toString()) as Record<string, number>;
    expect(claims).toMatchObject({ cst: 'acme', dsh: 'sales', iss: 'https://app.example.com/' });
    expect(claims.exp).toBeGreaterThanOrEqual(before + 7200);

    const defaults = await post('/api/generate_jwt/', { provided_id: 'acme', embed_id: 'sales' });
    const first = await compactDecrypt(defaults.json?.jwt as string, Buffer.from(SECRET));
    expect(first.protectedHeader.kid).toBe(KID);
    const exp = (JSON.parse(Buffer.from(first.plaintext).toString()) as { exp: number }).exp;
    expect(exp).toBeGreaterThanOrEqual(before + 86400);
  });

  it('refuses as DRF would: missing fields, a bad duration, an unknown key id, an unknown customer', async () => {
    const { post } = await emulator();
    const missing = await post('/api/generate_jwt/', { embed_id: 'sales', expiration: 'soon' });
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({
      provided_id: ['This field is required.'],
      expiration: ['Enter a valid duration.'],
    });
    const key = await post('/api/generate_jwt/', {
      provided_id: 'acme',
      embed_id: 'sales',
      key_id: 'nope',
    });
    expect(key.status).toBe(400);
    expect(key.json).toMatchObject({ key_id: ['No embed secret with key id "nope".'] });
    const ghost = await post('/api/generate_jwt/', { provided_id: 'ghost', embed_id: 'sales' });
    expect(ghost.status).toBe(404);
    const anonymous = await post(
      '/api/generate_jwt/',
      { provided_id: 'acme', embed_id: 'x' },
      null,
    );
    expect(anonymous.status).toBe(401);
  });

  it('without --embed-secret it answers 400 saying how to start it', async () => {
    const { post } = await emulator([]);
    const reply = await post('/api/generate_jwt/', { provided_id: 'acme', embed_id: 'sales' });
    expect(reply.status).toBe(400);
    expect(reply.json?.detail).toContain('--embed-secret KID:SECRET');
  });
});

describe('POST /api/embed/check/: the emulator shown a JWT', () => {
  it.each([
    [
      'valid',
      () => jwe({ cst: 'acme', dsh: 'sales', exp: soon() }, SECRET, KID),
      200,
      'expires in',
    ],
    [
      'expired',
      () => jwe({ cst: 'acme', dsh: 'sales', exp: soon() - 3 * 3600 - 7200 }, SECRET, KID),
      401,
      'expired 4h',
    ],
    [
      'wrong-key',
      () => jwe({ cst: 'acme', dsh: 'sales', exp: soon() }, OTHER, KID),
      401,
      'not encrypted',
    ],
    [
      'wrong-key',
      () => jwe({ cst: 'acme', dsh: 'sales', exp: soon() }, SECRET, 'old'),
      401,
      'no embed secret has kid old',
    ],
    [
      'wrong-customer',
      () => jwe({ cst: 'ghost', dsh: 'sales', exp: soon() }, SECRET, KID),
      401,
      'no customer "ghost"',
    ],
    ['not-a-jwe', () => 'not-a-jwt-at-all-xyz', 401, 'first part'],
  ])(
    '%s: answered and logged, with the JWT by its last 4 only',
    async (verdict, make, status, why) => {
      const { post, notices, log } = await emulator();
      const jwt = make();
      // No API token: a dashboard is shown the JWT alone.
      const reply = await post('/api/embed/check/', { jwt }, null);
      expect(reply.status, reply.text).toBe(status);
      expect(reply.json).toMatchObject({ verdict });
      expect(String(reply.json?.reason)).toContain(why);
      await logLines(notices, 1);
      expect(notices).toHaveLength(1);
      expect(notices[0]).toContain(`embed JWT …${jwt.slice(-4)}: ${verdict} (`);
      expect(notices.join('\n')).not.toContain(jwt);
      await logLines(log, 2);
      expect(log.join('\n')).toContain(`/api/embed/check/ ${status}`);
      expect(log.join('\n')).not.toContain(jwt);
    },
  );

  it('wrong customer or dashboard against the ones the page expects', async () => {
    const { post } = await emulator();
    const jwt = jwe({ cst: 'acme', dsh: 'sales', exp: soon() }, SECRET, KID);
    const customer = await post('/api/embed/check/', { jwt, provided_id: 'globex' }, null);
    expect(customer.json).toMatchObject({ verdict: 'wrong-customer' });
    const dashboard = await post('/api/embed/check/', { jwt, embed_id: 'ops' }, null);
    expect(dashboard.json).toMatchObject({ verdict: 'wrong-dashboard' });
    const missing = await post('/api/embed/check/', {}, null);
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ jwt: ['This field is required.'] });
  });
});
