/** What comes back: every answer is validated, and every failure becomes the right typed error. */
import { describe, expect, it } from 'vitest';
import { ApiError, AuthError, OutcomeUnknownError } from '../../src/errors.js';
import { failure, GET_REQUEST, useHttpClients } from '../kit/http-client.js';
import { type HugeBodyStats, huge, json, okBody, text } from '../kit/server.js';

const h = useHttpClients();
const MiB = 1024 * 1024;

async function getVia(reply: Parameters<typeof h.server>[0]) {
  const server = await h.server(reply);
  const { service } = await h.client(server.url);
  return { server, call: () => service.getUser(GET_REQUEST) };
}

async function getFails(reply: Parameters<typeof h.server>[0]) {
  const { call } = await getVia(reply);
  return failure(call());
}

describe('bodies that are not the documented JSON', () => {
  it('an HTML page with 200 is an ApiError (exit 1) naming status and content type', async () => {
    const error = await getFails(
      text(200, '<!doctype html><html><title>Login</title></html>', 'text/html'),
    );

    expect(error).toBeInstanceOf(ApiError);
    expect(error.exitCode).toBe(1);
    expect(error.message).toBe(
      'the service answered HTTP 200 with a body that is not JSON (text/html)',
    );
    expect(error.message).not.toContain('<html');
    expect(error.hint).toContain('--base-url');
    expect((error as ApiError).status).toBe(200);
  });

  it('a body without a content type says so', async () => {
    const error = await getFails(({ res }) => {
      res.writeHead(200, { 'content-length': 5 });
      res.end('hello');
    });

    expect(error.message).toBe(
      'the service answered HTTP 200 with a body that is not JSON (no content type)',
    );
  });

  it('an empty 200 body is not JSON', async () => {
    const error = await getFails(text(200, '', 'application/json'));

    expect(error.exitCode).toBe(1);
    expect(error.message).toContain('not JSON');
  });

  it('truncated JSON is not JSON', async () => {
    const error = await getFails(text(200, '{"success": 1, "user_group": {', 'application/json'));

    expect(error.exitCode).toBe(1);
    expect(error.message).toContain('not JSON (application/json)');
  });

  it.each([['[]'], ['[{"success":1}]'], ['"ok"'], ['42'], ['null'], ['true']])(
    'JSON that is not an object (%s) is an ApiError',
    async (body) => {
      const error = await getFails(text(200, body, 'application/json'));

      expect(error).toBeInstanceOf(ApiError);
      expect(error.exitCode).toBe(1);
      expect(error.message).toBe('the service answered HTTP 200 with JSON that is not an object');
    },
  );
});

describe('the success flag', () => {
  it.each([
    [{ error: 'name is required' }, 'name is required'],
    [{ message: 'user group is archived' }, 'user group is archived'],
    [{ detail: 'quota exceeded' }, 'quota exceeded'],
    [{ error: { message: 'nested reason' } }, 'nested reason'],
    [{ error: '', message: 'second choice' }, 'second choice'],
    [{}, 'the service reported a failure (success: 0) without a message'],
    [{ error: 42 }, 'the service reported a failure (success: 0) without a message'],
  ])('success 0 with %j -> %j', async (extra, message) => {
    const body = { success: 0, ...extra };
    const error = await getFails(json(200, body));

    expect(error).toBeInstanceOf(ApiError);
    expect(error.exitCode).toBe(1);
    expect(error.message).toBe(message);
    expect(error.body).toEqual(body);
  });

  it('success "0" and false are failures too', async () => {
    for (const success of ['0', false]) {
      const error = await getFails(json(200, { ...okBody(), success, error: 'nope' }));
      expect(error.message).toBe('nope');
    }
  });

  it('server text is cleaned of control characters and shortened', async () => {
    const long = `bad\u001b[31m\u0007 ${'x'.repeat(400)}`;
    const error = await getFails(json(200, { success: 0, error: long }));

    const control = [...error.message].filter((c) => {
      const code = c.charCodeAt(0);
      return code < 0x20 || (code >= 0x7f && code <= 0x9f);
    });
    expect(control).toEqual([]);
    // Shown, never obeyed: each control character as a visible escape.
    expect(error.message.startsWith('bad\\u001b[31m\\u0007 xxx')).toBe(true);
    expect(error.message.length).toBeLessThanOrEqual(301);
    expect(error.message.endsWith('…')).toBe(true);
  });

  it.each([[1], ['1'], [true]])('success %j is accepted', async (success) => {
    const { call } = await getVia(json(200, okBody({ success })));

    const result = await call();

    expect(result.body.success).toBe(success);
    expect(result.userGroup.token).toBe('ugt_group_token_1234');
  });

  it.each([[undefined], [2], ['yes'], [null], ['true']])(
    'success %j is not an answer we understand',
    async (success) => {
      const body = okBody();
      if (success === undefined) delete body.success;
      else body.success = success;
      const error = await getFails(json(200, body));

      expect(error).toBeInstanceOf(ApiError);
      expect(error.exitCode).toBe(1);
      expect(error.message).toBe('the answer has no valid "success" field');
    },
  );
});

describe('the user_group object', () => {
  it.each([[undefined], [null], [[]], ['acme'], [7]])(
    'user_group %j is an ApiError',
    async (userGroup) => {
      const body = okBody({ user_group: userGroup });
      if (userGroup === undefined) delete body.user_group;
      const error = await getFails(json(200, body));

      expect(error).toBeInstanceOf(ApiError);
      expect(error.exitCode).toBe(1);
      expect(error.message).toBe('the answer has no "user_group" object');
      expect(error.body).toEqual(body);
    },
  );

  it.each([[undefined], [1234], [''], [null], [['t']]])(
    'token %j is an ApiError',
    async (token) => {
      const group: Record<string, unknown> = { team_id: 1, name: 'Acme', provided_id: 'acme-1' };
      if (token !== undefined) group.token = token;
      const error = await getFails(json(200, { success: 1, user_group: group }));

      expect(error).toBeInstanceOf(ApiError);
      expect(error.exitCode).toBe(1);
      expect(error.message).toBe('the answer\'s "user_group" has no "token" string');
    },
  );

  it('keeps every field the server sent, unknown ones included', async () => {
    const body = {
      success: 1,
      new_user_group: false,
      request_id: 'req-42',
      meta: { region: 'eu', list: [1, 2] },
      user_group: {
        team_id: 9,
        token: 'ugt_tok_5678',
        name: 'Acme',
        provided_id: 'acme-1',
        properties: { plan: 'gold' },
        environment: 'Testing',
        created_at: '2030-01-01T00:00:00Z',
        flags: null,
      },
    };
    const { call } = await getVia(json(200, body));

    const result = await call();

    expect(result.body).toEqual(body);
    expect(result.userGroup).toEqual(body.user_group);
    expect(result.created).toBe(false);
  });

  it.each([
    [true, true],
    [false, false],
    [undefined, undefined],
    ['true', undefined],
    [1, undefined],
  ])('new_user_group %j -> created %j', async (value, created) => {
    const body = okBody({ new_user_group: value });
    if (value === undefined) delete body.new_user_group;
    const { call } = await getVia(json(200, body));

    expect((await call()).created).toBe(created);
  });

  it('accepts a UTF-8 byte order mark before the JSON', async () => {
    const payload = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(JSON.stringify(okBody({ note: 'Zoë' })), 'utf8'),
    ]);
    const { call } = await getVia(text(200, payload, 'application/json'));

    const result = await call();

    expect(result.userGroup.token).toBe('ugt_group_token_1234');
    expect(result.body.note).toBe('Zoë');
  });

  it('accepts any 2xx status', async () => {
    const { call } = await getVia(json(201, okBody({ new_user_group: true })));

    expect((await call()).created).toBe(true);
  });
});

describe('oversized bodies', () => {
  it('an endless body is cut off at 1 MiB with an ApiError (exit 1), not buffered', async () => {
    const stats: HugeBodyStats[] = [];
    const { server, call } = await getVia(huge(undefined, stats));

    const error = await failure(call());

    expect(error).toBeInstanceOf(ApiError);
    expect(error.exitCode).toBe(1);
    expect(error.message).toBe(
      `the response from 127.0.0.1:${server.port} is larger than 1 MiB (HTTP 200)`,
    );
    expect(error.hint).toContain('--base-url');
    // The client hung up: the server stops writing, far short of what an unbounded read would take.
    await stats[0]?.closed;
    expect(stats[0]?.written).toBeLessThan(16 * MiB);
    // Not a transient failure: not retried.
    expect(server.requests).toHaveLength(1);
  });

  it('a declared 8 MiB body is refused too', async () => {
    const stats: HugeBodyStats[] = [];
    const error = await getFails(huge(8 * MiB, stats, { contentLength: true }));

    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toContain('larger than 1 MiB');
    await stats[0]?.closed;
    expect(stats[0]?.written).toBeLessThan(8 * MiB);
  });

  it('a body of exactly 1 MiB is still read', async () => {
    const head = JSON.stringify(okBody());
    const payload = Buffer.alloc(MiB, 0x20);
    payload.write(head, 0, 'utf8');
    const { call } = await getVia(text(200, payload, 'application/json'));

    const result = await call();

    expect(result.userGroup.token).toBe('ugt_group_token_1234');
  });

  it('one byte over 1 MiB is refused', async () => {
    const head = JSON.stringify(okBody());
    const payload = Buffer.alloc(MiB + 1, 0x20);
    payload.write(head, 0, 'utf8');

    const error = await getFails(text(200, payload, 'application/json'));

    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toContain('larger than 1 MiB');
  });

  it('rotate: an oversized 2xx answer is an unknown outcome (exit 5) after one request', async () => {
    const server = await h.server(huge(undefined));
    const { service, sleeps } = await h.client(server.url);

    const error = await failure(service.rotateToken('ugt_old_token_abcd'));

    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.exitCode).toBe(5);
    expect(error.message).toContain('larger than 1 MiB');
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });
});

describe('HTTP error statuses', () => {
  it.each([
    [401, 'the API token was not accepted (HTTP 401: Invalid token.)'],
    [403, 'the API token may not do this (HTTP 403: Invalid token.)'],
  ])('Get User %i -> AuthError (exit 3) with the server message', async (status, message) => {
    const { server, call } = await getVia(json(status, { detail: 'Invalid token.' }));

    const error = await failure(call());

    expect(error).toBeInstanceOf(AuthError);
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe(message);
    expect(error.hint).toContain('ugs login');
    expect(error.hint).toContain(`127.0.0.1:${server.port}`);
    expect(error.body).toEqual({ detail: 'Invalid token.' });
    expect(server.requests).toHaveLength(1);
  });

  it.each([401, 403])('rotate %i -> AuthError (exit 3) after one request', async (status) => {
    const server = await h.server(json(status, { success: 0, error: 'Authentication failed' }));
    const { service } = await h.client(server.url);

    const error = await failure(service.rotateToken('ugt_old_token_abcd'));

    expect(error).toBeInstanceOf(AuthError);
    expect(error.exitCode).toBe(3);
    expect(error.message).toContain('Authentication failed');
    expect(error.hint).toContain('ugs login');
    expect(server.requests).toHaveLength(1);
  });

  it('a 401 without a JSON body is still an AuthError, with its text/plain line', async () => {
    const error = await getFails(text(401, '\n  \nUnauthorized\nsecond line', 'text/plain'));

    expect(error).toBeInstanceOf(AuthError);
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe('the API token was not accepted (HTTP 401: Unauthorized)');
    expect(error.hint).toContain('ugs login');
  });

  it.each([404])('%i -> ApiError (exit 1) pointing at --base-url', async (status) => {
    const error = await getFails(text(status, '<h1>Not here</h1>', 'text/html'));

    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(AuthError);
    expect(error.exitCode).toBe(1);
    // A 404 names the full URL that was requested.
    expect(error.message).toMatch(
      new RegExp(
        `^the service answered HTTP ${status} to GET http://127\\.0\\.0\\.1:\\d+/api/user: a text/html body$`,
      ),
    );
    expect(error.hint).toContain('--base-url');
    expect((error as ApiError).status).toBe(status);
  });

  it('a JSON error body: the server message, and the body kept for --json', async () => {
    const body = { success: 0, error: 'user_group_id is too long' };
    const error = await getFails(json(400, body));

    expect(error.exitCode).toBe(1);
    expect(error.message).toBe('the service answered HTTP 400: user_group_id is too long');
    expect(error.body).toEqual(body);
  });

  it('a JSON error body without a message', async () => {
    const error = await getFails(json(500, { code: 'E_INTERNAL', detail: '' }));

    expect(error.exitCode).toBe(1);
    expect(error.message).toBe('the service answered HTTP 500: no message');
    expect(error.hint).toContain('try again later');
    expect(error.body).toEqual({ code: 'E_INTERNAL', detail: '' });
  });
});

describe('rotate answers', () => {
  it('returns the new token and keeps the environment tag', async () => {
    const body = {
      success: 1,
      user_group: {
        team_id: 7,
        token: 'ugt_new_token_9999',
        name: 'Acme',
        provided_id: 'acme-1',
        environment: 'Customer',
      },
    };
    const server = await h.server(json(200, body));
    const { service } = await h.client(server.url);

    const result = await service.rotateToken('ugt_old_token_abcd');

    expect(result.userGroup.token).toBe('ugt_new_token_9999');
    expect(result.userGroup.environment).toBe('Customer');
    expect(result.body).toEqual(body);
    expect(result.created).toBeUndefined();
  });

  it('an unreadable 2xx answer: outcome unknown (exit 5), and how to check', async () => {
    const server = await h.server(text(200, '<html>ok</html>', 'text/html'));
    const { service } = await h.client(server.url);

    const error = await failure(service.rotateToken('ugt_old_token_abcd'));

    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.exitCode).toBe(5);
    expect(error.message).toContain('may or may not have been rotated');
    expect(error.hint).toContain('may have happened');
    expect(error.hint).toContain('ugs get --id');
    expect(error.hint).toContain('--field token');
  });

  it('a 2xx answer without a token string says the rotation may have happened', async () => {
    const server = await h.server(json(200, { success: 1, user_group: { name: 'Acme' } }));
    const { service } = await h.client(server.url);

    const error = await failure(service.rotateToken('ugt_old_token_abcd'));

    expect(error.exitCode).toBe(5);
    expect(error.hint).toContain('--field token');
  });

  it('success 0 is the service saying it did not rotate: its message, no "may have happened"', async () => {
    const body = { success: 0, error: 'current_token does not match any user group' };
    const server = await h.server(json(200, body));
    const { service } = await h.client(server.url);

    const error = await failure(service.rotateToken('ugt_old_token_abcd'));

    expect(error).toBeInstanceOf(ApiError);
    expect(error.exitCode).toBe(1);
    expect(error.message).toBe('current_token does not match any user group');
    expect(error.hint ?? '').not.toContain('may have happened');
    expect(error.body).toEqual(body);
  });
});

describe('the answer headers', () => {
  it('names in lower case, a repeated header joined with ", ", a __proto__ header kept as a field', async () => {
    const server = await h.server(({ res }) => {
      res.setHeader('X-Repeated', ['one', 'two']);
      res.setHeader('__proto__', 'polluted');
      res.setHeader('Retry-After', '7');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const { http } = await h.client(server.url);
    const response = await http.send(
      {
        method: 'GET',
        url: new URL('/api/user', server.url),
        headers: { accept: 'application/json' },
        body: '',
      },
      { maxRetries: 0, retryStatuses: new Set(), retryErrorCodes: new Set() },
    );
    expect(response.status).toBe(200);
    expect(response.headers['x-repeated']).toBe('one, two');
    expect(response.headers['retry-after']).toBe('7');
    expect(Object.hasOwn(response.headers, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(response.headers, '__proto__')?.value).toBe('polluted');
    expect(Object.getPrototypeOf(response.headers)).toBe(Object.prototype);
    expect(response.text).toBe('{}');
  });
});
