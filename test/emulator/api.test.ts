import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedOperations } from '../../src/commands/operations.js';
import { startEmulator as startServedEmulator } from '../../src/emulator/server.js';
import {
  call,
  getUser,
  type RunningEmulator,
  rotate,
  startEmulator,
  tokenOf,
  userGroupOf,
} from '../kit/index.js';

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
    const created = userGroupOf(first);
    expect(created).toEqual({
      team_id: expect.any(Number),
      token: expect.stringMatching(/^[0-9a-f]{64}$/),
      name: 'Acme',
      provided_id: id,
      properties: { plan: 'gold', seats: 5 },
    });

    // Rules 1 and 3: the answer's name and properties are the request's, the rest is stored.
    const second = await getUser(emu.url, customer, {
      user_group_id: id,
      name: 'Other name',
      properties: { plan: 'free' },
    });
    expect(second.json?.new_user_group).toBe(false);
    expect(userGroupOf(second)).toEqual({
      ...created,
      name: 'Other name',
      properties: { plan: 'free' },
    });
    const third = await getUser(emu.url, customer, { user_group_id: id, name: 'Third' });
    expect(userGroupOf(third)).toEqual({ ...created, name: 'Third', properties: null });
  });

  it('never changes the stored group on a later get (the rotation answer shows it)', async () => {
    const id = freshId('kept');
    await getUser(emu.url, customer, { user_group_id: id, name: 'First', properties: { a: 1 } });
    const later = userGroupOf(
      await getUser(emu.url, customer, { user_group_id: id, name: 'Later', properties: { b: 2 } }),
    );
    expect(userGroupOf(await rotate(emu.url, customer, later.token)).name).toBe('First');
  });

  it('answers properties null when none were given', async () => {
    const reply = await getUser(emu.url, customer, { user_group_id: freshId(), name: 'NoProps' });
    expect(reply.json?.new_user_group).toBe(true);
    expect(userGroupOf(reply).properties).toBeNull();
  });

  it('counts team_id up from the previous group', async () => {
    const a = userGroupOf(
      await getUser(emu.url, customer, { user_group_id: freshId(), name: 'a' }),
    );
    const b = userGroupOf(await getUser(emu.url, testing, { user_group_id: freshId(), name: 'b' }));
    expect(b.team_id).toBe(a.team_id + 1);
  });

  it('keeps ids unique per environment, not globally', async () => {
    const id = freshId('shared');
    const c = await getUser(emu.url, customer, { user_group_id: id, name: 'Prod' });
    const t = await getUser(emu.url, testing, { user_group_id: id, name: 'Test' });
    expect(c.json?.new_user_group).toBe(true);
    expect(t.json?.new_user_group).toBe(true);
    const cg = userGroupOf(c);
    const tg = userGroupOf(t);
    expect(cg.team_id).not.toBe(tg.team_id);
    expect(cg.token).not.toBe(tg.token);
    expect(cg.name).toBe('Prod');
    expect(tg.name).toBe('Test');
    // Each environment then finds its own.
    const again = await getUser(emu.url, testing, { user_group_id: id, name: 'Test' });
    expect(userGroupOf(again)).toEqual(tg);
  });

  it('creates exactly one group under 200 concurrent get-or-create calls', async () => {
    const id = freshId('race');
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        getUser(emu.url, customer, { user_group_id: id, name: `n${i}` }),
      ),
    );
    const groups = replies.map(userGroupOf);
    expect(replies.filter((r) => r.json?.new_user_group === true)).toHaveLength(1);
    expect(new Set(groups.map((g) => g.team_id)).size).toBe(1);
    expect(new Set(groups.map((g) => g.token)).size).toBe(1);
    groups.forEach((g, i) => {
      expect(g.name).toBe(`n${i}`);
    });
  });
});

describe('Create User (rotation)', () => {
  it('replaces the token and rejects the old one', async () => {
    const id = freshId('rot');
    const before = userGroupOf(await getUser(emu.url, customer, { user_group_id: id, name: 'R' }));
    const reply = await rotate(emu.url, customer, before.token);
    expect(reply.status).toBe(200);
    expect(reply.json?.success).toBe(1);
    const after = userGroupOf(reply);
    expect(after).toEqual({
      team_id: before.team_id,
      token: expect.stringMatching(/^[0-9a-f]{64}$/),
      name: 'R',
      provided_id: id,
      api_environment_tag: 'Customer',
    });
    expect(after.token).not.toBe(before.token);

    const stale = await rotate(emu.url, customer, before.token);
    expect(stale.status).toBe(404);
    expect(stale.json?.success).toBe(0);
    expect(stale.json).toEqual({ success: 0, detail: 'Not found.' });

    // Get User now shows the new token.
    const found = userGroupOf(await getUser(emu.url, customer, { user_group_id: id, name: 'R' }));
    expect(found.token).toBe(after.token);
  });

  it('answers api_environment_tag Testing for a Testing group', async () => {
    const g = userGroupOf(await getUser(emu.url, testing, { user_group_id: freshId(), name: 'T' }));
    expect(userGroupOf(await rotate(emu.url, testing, g.token)).api_environment_tag).toBe(
      'Testing',
    );
  });

  it('refuses to rotate a token of another environment', async () => {
    const g = userGroupOf(
      await getUser(emu.url, customer, { user_group_id: freshId(), name: 'C' }),
    );
    const reply = await rotate(emu.url, testing, g.token);
    expect(reply.status).toBe(404);
    expect(reply.json?.success).toBe(0);
    // The group is untouched and still rotatable in its own environment.
    expect(userGroupOf(await rotate(emu.url, customer, g.token)).team_id).toBe(g.team_id);
  });

  it.each([
    ['missing', {}, 'This field is required.'],
    ['empty', { current_token: '' }, 'This field may not be blank.'],
    ['null', { current_token: null }, 'This field may not be null.'],
    ['not a string', { current_token: 42 }, 'Not a valid string.'],
  ])('answers a 400 field error for a %s current_token', async (_label, body, message) => {
    const reply = await call(emu.url, { method: 'POST', token: customer, body });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ success: 0, current_token: [message] });
  });

  it('keeps all tokens distinct under 100 concurrent rotations and creations', async () => {
    const groups = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        getUser(emu.url, i % 2 ? customer : testing, {
          user_group_id: freshId('many'),
          name: `m${i}`,
        }).then(userGroupOf),
      ),
    );
    const [rotated, created] = await Promise.all([
      Promise.all(
        groups.map((g, i) =>
          rotate(emu.url, i % 2 ? customer : testing, g.token).then(userGroupOf),
        ),
      ),
      Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          getUser(emu.url, customer, { user_group_id: freshId('more'), name: `x${i}` }).then(
            userGroupOf,
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
    ['missing', undefined, 'Authentication credentials were not provided.'],
    ['wrong token', { authorization: 'Token nope' }, 'Invalid token.'],
    [
      'wrong scheme',
      { authorization: `Bearer ${'x'.repeat(64)}` },
      'Authentication credentials were not provided.',
    ],
    ['empty token', { authorization: 'Token ' }, 'Invalid token header. No credentials provided.'],
    [
      'spaced token',
      { authorization: 'Token a b' },
      'Invalid token header. Token string should not contain spaces.',
    ],
  ])('answers 401 like DRF for a %s Authorization header', async (_label, headers, detail) => {
    for (const method of ['GET', 'POST', 'PUT']) {
      const reply = await call(emu.url, {
        method,
        token: null,
        body: { user_group_id: 'a', name: 'b' },
        ...(headers ? { headers } : {}),
      });
      expect(reply.status).toBe(401);
      expect(reply.headers['content-type']).toBe('application/json');
      expect(reply.headers['www-authenticate']).toBe('Token');
      expect(reply.json).toEqual({ success: 0, detail });
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
  const required = ['This field is required.'];
  it.each([
    [
      'an array',
      '[{"user_group_id":"a","name":"b"}]',
      {
        non_field_errors: ['Invalid data. Expected a dictionary, but got list.'],
      },
    ],
    [
      'a string',
      '"hello"',
      {
        non_field_errors: ['Invalid data. Expected a dictionary, but got str.'],
      },
    ],
    [
      'null',
      'null',
      { non_field_errors: ['Invalid data. Expected a dictionary, but got NoneType.'] },
    ],
    ['empty', '', { name: required, user_group_id: required }],
    ['missing user_group_id', { name: 'b' }, { user_group_id: required }],
    [
      'empty user_group_id',
      { user_group_id: '', name: 'b' },
      {
        user_group_id: ['This field may not be blank.'],
      },
    ],
    [
      'numeric user_group_id',
      { user_group_id: 7, name: 'b' },
      {
        user_group_id: ['Not a valid string.'],
      },
    ],
    ['missing name', { user_group_id: 'a' }, { name: required }],
    ['blank name', { user_group_id: 'a', name: '  ' }, { name: ['This field may not be blank.'] }],
    [
      'mapping array',
      { user_group_id: 'a', name: 'b', mapping: ['x'] },
      {
        mapping: ['Expected a dictionary of items but got type "list".'],
      },
    ],
    [
      'mapping with a number value',
      { user_group_id: 'a', name: 'b', mapping: { good: 'x', bad: 1 } },
      {
        mapping: { bad: ['Not a valid string.'] },
      },
    ],
    [
      'properties array',
      { user_group_id: 'a', name: 'b', properties: [1] },
      {
        properties: ['Expected a dictionary of items but got type "list".'],
      },
    ],
    [
      'properties null',
      { user_group_id: 'a', name: 'b', properties: null },
      {
        properties: ['This field may not be null.'],
      },
    ],
    [
      'properties string',
      { user_group_id: 'a', name: 'b', properties: 'x' },
      {
        properties: ['Expected a dictionary of items but got type "str".'],
      },
    ],
    [
      'wrong in every field',
      { user_group_id: 1, mapping: 2, properties: 3 },
      {
        name: required,
        user_group_id: ['Not a valid string.'],
        mapping: ['Expected a dictionary of items but got type "int".'],
        properties: ['Expected a dictionary of items but got type "int".'],
      },
    ],
  ])('refuses a GET body that is %s with DRF field errors', async (_label, body, errors) => {
    const reply = await call(emu.url, { method: 'GET', token: customer, body });
    expect(reply.status).toBe(400);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.json).toEqual({ success: 0, ...errors });
  });

  it.each([
    ['not JSON', '{"user_group_id":', 'JSON parse error - '],
    ['whitespace', '  \n', 'JSON parse error - '],
    ['over 1 MiB', big, 'limit'],
  ])('refuses a GET body that is %s with a detail', async (_label, body, fragment) => {
    const reply = await call(emu.url, { method: 'GET', token: customer, body });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ success: 0, detail: expect.stringContaining(fragment) });
  });

  it('refuses a GET without any body with the required fields', async () => {
    const reply = await call(emu.url, { method: 'GET', token: customer });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({
      success: 0,
      name: ['This field is required.'],
      user_group_id: ['This field is required.'],
    });
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['form', 'application/x-www-form-urlencoded'],
    ['none', ''],
  ])('answers 415 for a body with a %s content type', async (_label, type) => {
    const reply = await call(emu.url, {
      token: customer,
      body: { user_group_id: freshId('media'), name: 'm' },
      headers: { 'content-type': type },
    });
    expect(reply.status).toBe(415);
    expect(reply.json).toEqual({
      success: 0,
      detail: `Unsupported media type "${type}" in request.`,
    });
  });

  it('accepts application/json with a charset', async () => {
    const reply = await call(emu.url, {
      token: customer,
      body: { user_group_id: freshId('charset'), name: 'c' },
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
    });
    expect(reply.status).toBe(200);
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
  it.each(['/', '/api/users', '/api/user/', '/api'])(
    "answers Django's HTML 404 for %s",
    async (path) => {
      const reply = await call(emu.url, { path, token: customer, body: {} });
      expect(reply.status).toBe(404);
      // Django's bare text/html, as test/emulator/django-parity.process.test.ts measures it.
      expect(reply.headers['content-type']).toBe('text/html');
      expect(reply.text).toContain('<h1>Not Found</h1>');
    },
  );

  it('ignores a query string', async () => {
    const reply = await call(emu.url, {
      path: '/api/user?x=1',
      token: customer,
      body: { user_group_id: freshId(), name: 'q' },
    });
    expect(reply.status).toBe(200);
  });

  // The methods of the operations with a route, from their registry: an operation added there
  // changes this test through it, not by an edit here.
  // (Only those of the interface: the Customer API's read-one has no interface method.)
  const served = servedOperations.flatMap((operation) =>
    operation.route === undefined || operation.method === undefined ? [] : [operation.method],
  );

  it('serves Get User (GET) and Create User (POST), and every registered route', () => {
    expect(served).toEqual(expect.arrayContaining(['GET', 'POST']));
  });

  it.each(
    ['PUT', 'DELETE', 'PATCH', 'OPTIONS'].filter((method) => !served.includes(method as never)),
  )('answers 405 for %s', async (method) => {
    const reply = await call(emu.url, { method, token: customer, body: {} });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe(served.join(', '));
    expect(reply.json).toEqual({ success: 0, detail: `Method "${method}" not allowed.` });
  });

  it('logs method, path and status, never a token', () => {
    expect(
      logLines.some((l) => / GET \/api\/user 200 \d+ms (created|found) id="[^"]+"$/.test(l)),
    ).toBe(true);
    expect(logLines.some((l) => / [A-Z]+ \/api\/user 405 \d+ms refused$/.test(l))).toBe(true);
    for (const line of logLines) {
      expect(line).not.toContain(customer);
      expect(line).not.toContain(testing);
    }
  });
});

const customerToken = { token: 'foreign-route-token', environment: 'Customer' as const };

describe('routes from another bundle', () => {
  it("a route's refusal is a refusal even when its RequestError class is another copy", async () => {
    // `ugs serve` passes the operations of ugs's own bundle: their routes throw the RequestError
    // of that bundle's validation.ts, not of the emulator bundle's, which the handler imports.
    const foreign = Object.assign(new Error('Not found.'), {
      [Symbol.for('ugs.emulator.RequestError')]: true,
      status: 404,
      body: { detail: 'Not found.' },
      headers: {},
    });
    const served = [
      {
        method: 'GET' as const,
        explo: { method: 'POST' as const, path: '/api/create_user_group/' },
        writes: true,
        route: async () => ({
          route: {
            handle: async (): Promise<never> => {
              throw foreign;
            },
          },
        }),
      },
    ];
    const emulator = await startServedEmulator({ port: 0, apiTokens: [customerToken] }, served);
    try {
      const reply = await call(emulator.url, { token: customerToken.token, body: {} });
      expect(reply.status).toBe(404);
      expect(reply.json).toEqual({ success: 0, detail: 'Not found.' });
    } finally {
      await emulator.close();
    }
  });
});
