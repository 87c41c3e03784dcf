import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServeFlags } from '../../src/commands/serve.js';
import { call, type RunningEmulator, startEmulator, tokenOf, userGroupOf } from '../kit/index.js';

let slash: RunningEmulator;
let plain: RunningEmulator;
let token: string;

beforeAll(async () => {
  const apiTokens = [{ token: 'slash-token', environment: 'Customer' as const }];
  [slash, plain] = await Promise.all([
    startEmulator({ port: 0, trailingSlash: true, apiTokens }),
    startEmulator({ port: 0, apiTokens }),
  ]);
  token = tokenOf(slash, 'Customer');
});

afterAll(async () => {
  await Promise.all([slash.close(), plain.close()]);
});

describe('--trailing-slash (Django APPEND_SLASH)', () => {
  it.each([
    ['GET', '/api/user', '/api/user/'],
    ['POST', '/api/user', '/api/user/'],
    ['GET', '/api/user?x=1&y=%2F', '/api/user/?x=1&y=%2F'],
    ['POST', '/api/user?q', '/api/user/?q'],
  ])('answers %s %s with a 301 to %s and an empty body', async (method, path, location) => {
    const reply = await call(slash.url, {
      method,
      path,
      token,
      body: { user_group_id: 'redirected', name: 'r', current_token: 'x' },
    });
    expect(reply.status).toBe(301);
    expect(reply.headers.location).toBe(location);
    expect(reply.headers['content-length']).toBe('0');
    expect(reply.text).toBe('');
  });

  it('redirects before authentication, as Django middleware does', async () => {
    const reply = await call(slash.url, { path: '/api/user', token: null, body: {} });
    expect(reply.status).toBe(301);
  });

  it('does not run the redirected request', async () => {
    await call(slash.url, { path: '/api/user', token, body: { user_group_id: 'nr', name: 'n' } });
    const reply = await call(slash.url, {
      path: '/api/user/',
      token,
      body: { user_group_id: 'nr', name: 'n' },
    });
    expect(reply.json?.new_user_group).toBe(true);
  });

  it('serves Get User and Create User on /api/user/', async () => {
    const created = userGroupOf(
      await call(slash.url, { path: '/api/user/', token, body: { user_group_id: 'a', name: 'A' } }),
    );
    const rotated = await call(slash.url, {
      method: 'POST',
      path: '/api/user/?v=1',
      token,
      body: { current_token: created.token },
    });
    expect(userGroupOf(rotated).team_id).toBe(created.team_id);
  });

  it.each(['/', '/api', '/api/users', '/api/users/', '/api/user//'])(
    'answers 404 for %s',
    async (path) => {
      const reply = await call(slash.url, { path, token, body: {} });
      expect(reply.status).toBe(404);
    },
  );
});

describe('without --trailing-slash', () => {
  it('serves /api/user and answers /api/user/ with a 404, not a redirect', async () => {
    const ok = await call(plain.url, { token, body: { user_group_id: 'p', name: 'P' } });
    expect(ok.status).toBe(200);
    const slashed = await call(plain.url, {
      path: '/api/user/',
      token,
      body: { user_group_id: 'p', name: 'P' },
    });
    expect(slashed.status).toBe(404);
    expect(slashed.headers.location).toBeUndefined();
  });
});

describe('the --trailing-slash flag', () => {
  const base = { port: '0', host: '127.0.0.1', apiToken: [], fault: [] };
  it('is off by default and on when given', () => {
    expect(parseServeFlags(base, false).trailingSlash).toBe(false);
    expect(parseServeFlags({ ...base, trailingSlash: true }, false).trailingSlash).toBe(true);
  });
});
