import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/server.js';
import { call, getUser, rotate, tokenOf, userGroup } from './client.js';

let emu: RunningEmulator;
let customer: string;
let testing: string;
const logLines: string[] = [];

beforeAll(async () => {
  emu = await startEmulator({ port: 0, log: (line) => logLines.push(line) });
  customer = tokenOf(emu, 'Customer');
  testing = tokenOf(emu, 'Testing');
});

afterAll(async () => {
  await emu.close();
});

let counter = 0;
function freshId(prefix = 'grp'): string {
  counter += 1;
  return `${prefix}-${counter}-${Date.now()}`;
}

describe('Get User', () => {
  it('creates a group, then finds it unchanged', async () => {
    const id = freshId();
    const first = await getUser(emu.url, customer, {
      user_group_id: id,
      name: 'Acme',
      mapping: { schema1: 'ds1' },
      properties: { plan: 'gold', seats: 5 },
    });
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.json?.success).toBe(1);
    expect(first.json?.new_user_group).toBe(true);
    const created = userGroup(first);
    expect(created).toEqual({
      team_id: expect.any(Number),
      token: expect.stringMatching(/^[0-9a-f]{64}$/),
      name: 'Acme',
      provided_id: id,
      properties: { plan: 'gold', seats: 5 },
    });

    // A different name and properties do not change a stored group.
    const second = await getUser(emu.url, customer, {
      user_group_id: id,
      name: 'Other name',
      properties: { plan: 'free' },
    });
    expect(second.json?.new_user_group).toBe(false);
    expect(userGroup(second)).toEqual(created);
  });

  it('answers properties null when none were given', async () => {
    const reply = await getUser(emu.url, customer, { user_group_id: freshId(), name: 'NoProps' });
    expect(reply.json?.new_user_group).toBe(true);
    expect(userGroup(reply).properties).toBeNull();
  });

  it('counts team_id up from the previous group', async () => {
    const a = userGroup(await getUser(emu.url, customer, { user_group_id: freshId(), name: 'a' }));
    const b = userGroup(await getUser(emu.url, testing, { user_group_id: freshId(), name: 'b' }));
    expect(b.team_id).toBe(a.team_id + 1);
  });

  it('keeps ids unique per environment, not globally', async () => {
    const id = freshId('shared');
    const c = await getUser(emu.url, customer, { user_group_id: id, name: 'Prod' });
    const t = await getUser(emu.url, testing, { user_group_id: id, name: 'Test' });
    expect(c.json?.new_user_group).toBe(true);
    expect(t.json?.new_user_group).toBe(true);
    const cg = userGroup(c);
    const tg = userGroup(t);
    expect(cg.team_id).not.toBe(tg.team_id);
    expect(cg.token).not.toBe(tg.token);
    expect(cg.name).toBe('Prod');
    expect(tg.name).toBe('Test');
    // Each environment then finds its own.
    const again = await getUser(emu.url, testing, { user_group_id: id, name: 'x' });
    expect(userGroup(again)).toEqual(tg);
  });

  it('creates exactly one group under 200 concurrent get-or-create calls', async () => {
    const id = freshId('race');
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        getUser(emu.url, customer, { user_group_id: id, name: `n${i}` }),
      ),
    );
    const groups = replies.map(userGroup);
    expect(replies.filter((r) => r.json?.new_user_group === true)).toHaveLength(1);
    expect(new Set(groups.map((g) => g.team_id)).size).toBe(1);
    expect(new Set(groups.map((g) => g.token)).size).toBe(1);
    expect(new Set(groups.map((g) => g.name)).size).toBe(1);
  });
});

describe('Create User (rotation)', () => {
  it('replaces the token and rejects the old one', async () => {
    const id = freshId('rot');
    const before = userGroup(await getUser(emu.url, customer, { user_group_id: id, name: 'R' }));
    const reply = await rotate(emu.url, customer, before.token);
    expect(reply.status).toBe(200);
    expect(reply.json?.success).toBe(1);
    const after = userGroup(reply);
    expect(after).toEqual({
      team_id: before.team_id,
      token: expect.stringMatching(/^[0-9a-f]{64}$/),
      name: 'R',
      provided_id: id,
      environment: 'Customer',
    });
    expect(after.token).not.toBe(before.token);

    const stale = await rotate(emu.url, customer, before.token);
    expect(stale.status).toBe(404);
    expect(stale.json?.success).toBe(0);
    expect(stale.json?.error).toEqual(expect.stringContaining('current_token'));

    // Get User now shows the new token.
    const found = userGroup(await getUser(emu.url, customer, { user_group_id: id, name: 'R' }));
    expect(found.token).toBe(after.token);
  });

  it('answers environment Testing for a Testing group', async () => {
    const g = userGroup(await getUser(emu.url, testing, { user_group_id: freshId(), name: 'T' }));
    expect(userGroup(await rotate(emu.url, testing, g.token)).environment).toBe('Testing');
  });

  it('refuses to rotate a token of another environment', async () => {
    const g = userGroup(await getUser(emu.url, customer, { user_group_id: freshId(), name: 'C' }));
    const reply = await rotate(emu.url, testing, g.token);
    expect(reply.status).toBe(404);
    expect(reply.json?.success).toBe(0);
    // The group is untouched and still rotatable in its own environment.
    expect(userGroup(await rotate(emu.url, customer, g.token)).team_id).toBe(g.team_id);
  });

  it.each([
    ['missing', {}],
    ['empty', { current_token: '' }],
    ['not a string', { current_token: 42 }],
  ])('answers 400 for a %s current_token', async (_label, body) => {
    const reply = await call(emu.url, { method: 'POST', token: customer, body });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ success: 0, error: expect.stringContaining('current_token') });
  });

  it('keeps all tokens distinct under 100 concurrent rotations and creations', async () => {
    const groups = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        getUser(emu.url, i % 2 ? customer : testing, {
          user_group_id: freshId('many'),
          name: `m${i}`,
        }).then(userGroup),
      ),
    );
    const [rotated, created] = await Promise.all([
      Promise.all(
        groups.map((g, i) => rotate(emu.url, i % 2 ? customer : testing, g.token).then(userGroup)),
      ),
      Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          getUser(emu.url, customer, { user_group_id: freshId('more'), name: `x${i}` }).then(
            userGroup,
          ),
        ),
      ),
    ]);
    const all = [...groups, ...rotated, ...created].map((g) => g.token);
    expect(new Set(all).size).toBe(300);
    expect(new Set(created.map((g) => g.team_id)).size).toBe(100);
  });
});

describe('authentication', () => {
  it.each([
    ['missing', undefined],
    ['wrong token', { authorization: 'Token nope' }],
    ['wrong scheme', { authorization: `Bearer ${'x'.repeat(64)}` }],
    ['empty token', { authorization: 'Token ' }],
  ])('answers 401 JSON for a %s Authorization header', async (_label, headers) => {
    for (const method of ['GET', 'POST']) {
      const reply = await call(emu.url, {
        method,
        token: null,
        body: { user_group_id: 'a', name: 'b' },
        ...(headers ? { headers } : {}),
      });
      expect(reply.status).toBe(401);
      expect(reply.headers['content-type']).toBe('application/json');
      expect(reply.json).toEqual({ success: 0, error: expect.stringContaining('API token') });
    }
  });

  it('accepts the real token with the right scheme', async () => {
    const reply = await call(emu.url, {
      token: null,
      headers: { authorization: `Token ${customer}` },
      body: { user_group_id: freshId(), name: 'ok' },
    });
    expect(reply.status).toBe(200);
  });
});

describe('request validation', () => {
  const big = `{"user_group_id":"a","name":"b","properties":{"pad":"${'x'.repeat(1024 * 1024)}"}}`;
  it.each([
    ['not JSON', '{"user_group_id":', 400, 'not valid JSON'],
    ['an array', '[{"user_group_id":"a","name":"b"}]', 400, 'JSON object'],
    ['a string', '"hello"', 400, 'JSON object'],
    ['null', 'null', 400, 'JSON object'],
    ['empty', '', 400, 'empty'],
    ['whitespace', '  \n', 400, 'empty'],
    ['missing user_group_id', { name: 'b' }, 400, 'user_group_id'],
    ['empty user_group_id', { user_group_id: '', name: 'b' }, 400, 'user_group_id'],
    ['numeric user_group_id', { user_group_id: 7, name: 'b' }, 400, 'user_group_id'],
    ['missing name', { user_group_id: 'a' }, 400, 'name'],
    ['empty name', { user_group_id: 'a', name: '' }, 400, 'name'],
    ['mapping array', { user_group_id: 'a', name: 'b', mapping: ['x'] }, 400, 'mapping'],
    [
      'mapping with a number value',
      { user_group_id: 'a', name: 'b', mapping: { good: 'x', bad: 1 } },
      400,
      'mapping value for key "bad"',
    ],
    ['properties array', { user_group_id: 'a', name: 'b', properties: [1] }, 400, 'properties'],
    ['properties null', { user_group_id: 'a', name: 'b', properties: null }, 400, 'properties'],
    ['properties string', { user_group_id: 'a', name: 'b', properties: 'x' }, 400, 'properties'],
    ['over 1 MiB', big, 400, 'limit'],
  ])('refuses a GET body that is %s', async (_label, body, status, fragment) => {
    const reply = await call(emu.url, { method: 'GET', token: customer, body });
    expect(reply.status).toBe(status);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.json?.success).toBe(0);
    expect(reply.json?.error).toEqual(expect.stringContaining(fragment));
  });

  it('refuses a GET without any body', async () => {
    const reply = await call(emu.url, { method: 'GET', token: customer });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ success: 0, error: expect.stringContaining('empty') });
  });

  it('refuses an over-long chunked body without a declared length', async () => {
    const reply = await call(emu.url, {
      method: 'POST',
      token: customer,
      body: big,
      chunked: true,
    });
    expect(reply.status).toBe(400);
    expect(reply.json?.success).toBe(0);
  });

  it('creates nothing for a refused body', async () => {
    const id = freshId('refused');
    await call(emu.url, { token: customer, body: { user_group_id: id, name: 'b', mapping: 1 } });
    const reply = await getUser(emu.url, customer, { user_group_id: id, name: 'b' });
    expect(reply.json?.new_user_group).toBe(true);
  });
});

describe('routing', () => {
  it.each(['/', '/api/users', '/api/user/', '/api'])('answers 404 JSON for %s', async (path) => {
    const reply = await call(emu.url, { path, token: customer, body: {} });
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.json?.success).toBe(0);
  });

  it('ignores a query string', async () => {
    const reply = await call(emu.url, {
      path: '/api/user?x=1',
      token: customer,
      body: { user_group_id: freshId(), name: 'q' },
    });
    expect(reply.status).toBe(200);
  });

  it.each(['PUT', 'DELETE', 'PATCH', 'OPTIONS'])('answers 405 for %s', async (method) => {
    const reply = await call(emu.url, { method, token: customer, body: {} });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('GET, POST');
    expect(reply.json).toEqual({ success: 0, error: expect.stringContaining(method) });
  });

  it('logs method, path and status, never a token', () => {
    expect(logLines.some((l) => /^GET \/api\/user 200 \d+ms$/.test(l))).toBe(true);
    expect(logLines.some((l) => /^PUT \/api\/user 405 \d+ms$/.test(l))).toBe(true);
    for (const line of logLines) {
      expect(line).not.toContain(customer);
      expect(line).not.toContain(testing);
    }
  });
});
