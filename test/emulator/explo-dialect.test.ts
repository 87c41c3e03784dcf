/**
 * The emulator speaks both dialects. `ugs serve --dialect explo` routes only
 * the vendor's paths (without the trailing slash: Django's 301), reads `Explo-Authorization`
 * (only `Authorization` is no credentials at all), stores and returns `is_demo_group`;
 * `ugs serve --rate-limit n/<s|min>` throttles per client IP as DRF does, in both dialects.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServeFlags } from '../../src/commands/serve.js';
import { SlidingWindowThrottle } from '../../src/emulator/throttle.js';
import { UsageError } from '../../src/errors.js';
import {
  call,
  type RunningEmulator,
  startEmulator,
  tempDir,
  tokenOf,
  userGroupOf,
} from '../kit/index.js';

const apiTokens = [{ token: 'explo-token-1234', environment: 'Customer' as const }];
let explo: RunningEmulator;
let token: string;

beforeAll(async () => {
  explo = await startEmulator({ port: 0, dialect: 'explo', apiTokens });
  token = tokenOf(explo, 'Customer');
});

afterAll(async () => {
  await explo.close();
});

const create = (body: unknown, headers?: Record<string, string>) =>
  call(explo.url, {
    method: 'POST',
    path: '/api/create_user_group/',
    token: null,
    headers: headers ?? { 'explo-authorization': `Token ${token}` },
    body,
  });

describe('ugs serve --dialect explo', () => {
  it("get-or-create at POST /api/create_user_group/, with the vendor's is_demo_group", async () => {
    const first = await create({ user_group_id: 'demo-1', name: 'Demo', is_demo_group: true });
    expect(first.json).toMatchObject({ success: 1, new_user_group: true });
    expect(userGroupOf(first)).toMatchObject({ provided_id: 'demo-1', is_demo_group: true });
    // An existing group keeps what it was created with.
    const again = await create({ user_group_id: 'demo-1', name: 'Demo', is_demo_group: false });
    expect(again.json).toMatchObject({ new_user_group: false });
    expect(userGroupOf(again)).toMatchObject({ is_demo_group: true });
    const plain = await create({ user_group_id: 'plain-1', name: 'Plain' });
    expect(userGroupOf(plain)).toMatchObject({ is_demo_group: false });
  });

  it('rotates at POST /api/refresh_user_group_token/ with the environment tag', async () => {
    const group = userGroupOf(await create({ user_group_id: 'rot-1', name: 'Rot' }));
    const reply = await call(explo.url, {
      method: 'POST',
      path: '/api/refresh_user_group_token/',
      token: null,
      headers: { 'explo-authorization': `Token ${token}` },
      body: { current_token: group.token },
    });
    expect(userGroupOf(reply)).toMatchObject({
      provided_id: 'rot-1',
      api_environment_tag: 'Customer',
    });
    expect(userGroupOf(reply).token).not.toBe(group.token);
  });

  it.each([
    ['/api/create_user_group', '/api/create_user_group/'],
    ['/api/refresh_user_group_token?x=1', '/api/refresh_user_group_token/?x=1'],
  ])('POST %s without the slash gets a 301 to %s, as Django answers', async (path, location) => {
    const reply = await call(explo.url, {
      method: 'POST',
      path,
      token: null,
      headers: { 'explo-authorization': `Token ${token}` },
      body: { user_group_id: 'never', name: 'n' },
    });
    expect(reply.status).toBe(301);
    expect(reply.headers.location).toBe(location);
    expect(reply.text).toBe('');
  });

  it('routes only the vendor paths: /api/user is a 404 page, GET is a 405 with Allow: POST', async () => {
    const user = await call(explo.url, { method: 'GET', path: '/api/user', token, body: {} });
    expect(user.status).toBe(404);
    expect(user.headers['content-type']).toBe('text/html');
    const get = await call(explo.url, {
      method: 'GET',
      path: '/api/create_user_group/',
      token: null,
      headers: { 'explo-authorization': `Token ${token}` },
      body: {},
    });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
  });

  it('a request with only Authorization is unauthenticated (401); a bad is_demo_group is a 400', async () => {
    const refused = await create(
      { user_group_id: 'x', name: 'x' },
      { authorization: `Token ${token}` },
    );
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ detail: 'Authentication credentials were not provided.' });
    const bad = await create({ user_group_id: 'x', name: 'x', is_demo_group: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ is_demo_group: ['Must be a valid boolean.'] });
    // {} is refused for its fields once the token was accepted.
    const empty = await create({});
    expect(empty.status).toBe(400);
  });

  it('answers the probe (an empty token refresh) as DRF: 401 for a bad token, else 400 naming current_token', async () => {
    const refresh = (apiToken: string) =>
      call(explo.url, {
        method: 'POST',
        path: '/api/refresh_user_group_token/',
        token: null,
        headers: { 'explo-authorization': `Token ${apiToken}` },
        body: {},
      });
    const bad = await refresh('not-a-known-token');
    expect(bad.status).toBe(401);
    expect(bad.json).toMatchObject({ detail: 'Invalid token.' });
    const good = await refresh(token);
    expect(good.status).toBe(400);
    expect(good.headers['content-type']).toBe('application/json');
    expect(good.json).toEqual({ success: 0, current_token: ['This field is required.'] });
  });

  it('keeps is_demo_group in its data file across a restart', async () => {
    const dataFile = join(tempDir('explo-data'), 'state.json');
    const first = await startEmulator({ port: 0, dialect: 'explo', apiTokens, dataFile });
    const headers = { 'explo-authorization': `Token ${apiTokens[0]?.token}` };
    const body = { user_group_id: 'kept', name: 'Kept', is_demo_group: true };
    const path = '/api/create_user_group/';
    await call(first.url, { method: 'POST', path, token: null, headers, body });
    await first.close();
    const second = await startEmulator({ port: 0, dialect: 'explo', apiTokens, dataFile });
    try {
      const reply = await call(second.url, { method: 'POST', path, token: null, headers, body });
      expect(reply.json).toMatchObject({ new_user_group: false });
      expect(userGroupOf(reply)).toMatchObject({ is_demo_group: true });
    } finally {
      await second.close();
    }
  });
});

describe('ugs serve --rate-limit (DRF SimpleRateThrottle)', () => {
  it('a sliding window per key: the wait is until the oldest request leaves it', () => {
    let now = 0;
    const throttle = new SlidingWindowThrottle({ count: 3, windowMs: 60_000 }, () => now);
    expect([1, 2, 3].map(() => throttle.check('1.2.3.4').allowed)).toEqual([true, true, true]);
    now = 20_000;
    expect(throttle.check('1.2.3.4')).toEqual({ allowed: false, waitSeconds: 40 });
    // Another client IP has its own window.
    expect(throttle.check('5.6.7.8')).toEqual({ allowed: true });
    now = 59_999.5;
    expect(throttle.check('1.2.3.4')).toEqual({ allowed: false, waitSeconds: 1 });
    // The refused requests were not counted: once the three leave the window, three fit again.
    now = 60_000;
    expect([1, 2, 3, 4].map(() => throttle.check('1.2.3.4').allowed)).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });

  it.each(['interface', 'explo'] as const)(
    '%s: over the limit, 429 with Retry-After and DRF words',
    async (dialect) => {
      const limited = await startEmulator({
        port: 0,
        dialect,
        apiTokens,
        rateLimit: { count: 2, windowMs: 60_000 },
      });
      const send = () =>
        dialect === 'explo'
          ? call(limited.url, {
              method: 'POST',
              path: '/api/create_user_group/',
              token: null,
              headers: { 'explo-authorization': `Token ${apiTokens[0]?.token}` },
              body: { user_group_id: 'a', name: 'A' },
            })
          : call(limited.url, {
              token: apiTokens[0]?.token,
              body: { user_group_id: 'a', name: 'A' },
            });
      try {
        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push(await send());
        expect(statuses.map((reply) => reply.status)).toEqual([200, 200, 429]);
        const refused = statuses[2];
        expect(refused?.headers['retry-after']).toMatch(/^(59|60)$/);
        expect(refused?.json?.detail).toMatch(
          /^Request was throttled\. Expected available in (59|60) seconds\.$/,
        );
      } finally {
        await limited.close();
      }
    },
  );

  it('parses --rate-limit and --dialect; anything else is a usage error', () => {
    const base = { port: '0', host: '127.0.0.1', apiToken: [], fault: [] };
    expect(
      parseServeFlags({ ...base, rateLimit: '180/min', dialect: 'explo' }, false),
    ).toMatchObject({ rateLimit: { count: 180, windowMs: 60_000 }, dialect: 'explo' });
    expect(parseServeFlags(base, false, { UGS_DIALECT: 'explo' }).dialect).toBe('explo');
    expect(parseServeFlags(base, false).dialect).toBe('interface');
    expect(() => parseServeFlags({ ...base, rateLimit: '180' }, false)).toThrow(UsageError);
    expect(() => parseServeFlags({ ...base, dialect: 'django' }, false)).toThrow(UsageError);
  });
});
