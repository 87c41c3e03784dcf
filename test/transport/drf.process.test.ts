/**
 * The real service is Django REST Framework. These drive the real HTTP client and
 * service client against the real DRF service (test/kit/drf.ts), in both routings (APPEND_SLASH's
 * 301 and an exact path), and against scripted answers for the rest. Where Django is missing, the
 * tests against it skip (a failure under CI).
 */
import { describe, expect, it } from 'vitest';
import { operations } from '../../src/commands/operations.js';
import { ApiError, AuthError, OutcomeUnknownError } from '../../src/errors.js';
import { controlCharacters } from '../../src/platform/io.js';
import { HttpServiceClient } from '../../src/service/service.js';
import type { Target } from '../../src/service/target.js';
import { createHttpClient } from '../../src/transport/http.js';
import { djangoRequiredInCi, drfSites, hasRealDrf } from '../kit/drf.js';
import { failure, GET_REQUEST, USER_AGENT, useHttpClients } from '../kit/http-client.js';
import { json, type Reply, text } from '../kit/server.js';

const API_TOKEN = 'drf0123456789abcdef0123456789abcdef0123';
const h = useHttpClients();
const drf = drfSites(API_TOKEN);
const withDrf = it.skipIf(!hasRealDrf());
djangoRequiredInCi();

async function client(baseUrl: string, target: Partial<Target> = {}) {
  const notes: string[] = [];
  const http = await createHttpClient({ timeoutMs: 5_000, env: {}, sleep: async () => {} });
  h.track(http);
  const service = new HttpServiceClient(
    http,
    { baseUrl: new URL(baseUrl), apiToken: API_TOKEN, ...target },
    USER_AGENT,
    { operations, notify: (message) => notes.push(message) },
  );
  return { service, notes };
}

describe('APPEND_SLASH: the one redirect that is followed', () => {
  withDrf('get: a 301 to the same path plus "/" is followed once, with a note', async () => {
    const server = await drf('api/user/');
    const { service, notes } = await client(server.url);

    const result = await service.getUser(GET_REQUEST);

    expect(result.created).toBe(true);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /api/user',
      'GET /api/user/',
    ]);
    // Same method, headers and body at the new address.
    expect(server.requests[1]?.body).toBe(server.requests[0]?.body);
    expect(JSON.parse(server.requests[1]?.body ?? '')).toEqual(GET_REQUEST);
    expect(server.requests[1]?.headers.authorization).toBe(`Token ${API_TOKEN}`);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain('redirected /api/user to /api/user/');
    expect(notes[0]).toContain('--api-path /api/user/');
  });

  withDrf('rotate: the POST goes to the new address once, the token is rotated once', async () => {
    const server = await drf('api/user/');
    const { service, notes } = await client(server.url);
    const created = await service.getUser(GET_REQUEST);
    const old = created.userGroup.token;

    const rotated = await service.rotateToken(old);

    expect(rotated.userGroup.token).not.toBe(old);
    expect((await server.group('acme-1')).token).toBe(rotated.userGroup.token);
    const posts = server.requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => r.url)).toEqual(['/api/user', '/api/user/']);
    expect(JSON.parse(posts[1]?.body ?? '')).toEqual({ current_token: old });
    expect(notes).toHaveLength(2);
  });

  withDrf(
    'a base-URL prefix is kept, and --api-path with the slash skips the redirect',
    async () => {
      const server = await drf('ugs/api/user/');
      const { service, notes } = await client(server.url, { apiPath: '/api/user/' });

      await service.getUser(GET_REQUEST);

      expect(server.requests.map((r) => r.url)).toEqual(['/ugs/api/user/']);
      expect(notes).toEqual([]);
    },
  );

  withDrf(
    'the exact routing works without any redirect; its slash path is an HTML 404',
    async () => {
      const server = await drf('api/user');
      const plain = await client(server.url);
      await plain.service.getUser(GET_REQUEST);
      expect(plain.notes).toEqual([]);

      const slashed = await client(server.url, { apiPath: '/api/user/' });
      const error = await failure(slashed.service.getUser(GET_REQUEST));
      expect(error).toBeInstanceOf(ApiError);
      expect(error.exitCode).toBe(1);
      expect(error.message).toBe(
        `the service answered HTTP 404 to GET ${server.url}/api/user/: a text/html body`,
      );
      expect(error.hint).toContain('--base-url');
      expect(error.message + (error.hint ?? '')).not.toContain('<h1>');
    },
  );

  it.each([301, 302, 307, 308])('%i to the slash path is followed', async (status) => {
    const server = await h.server(
      ({ res }) => {
        res.writeHead(status, { location: '/api/user/' });
        res.end();
      },
      json(200, {
        success: 1,
        user_group: { token: 'ugt_after_redirect', provided_id: 'acme-1' },
      }),
    );
    const { service, notes } = await client(server.url);
    const result = await service.rotateToken('ugt_old_token_abcd');
    expect(result.userGroup.token).toBe('ugt_after_redirect');
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /api/user',
      'POST /api/user/',
    ]);
    expect(notes).toHaveLength(1);
  });

  it('a relative Location is resolved against the request URL', async () => {
    const server = await h.server(
      ({ res }) => {
        res.writeHead(301, { location: 'user/' });
        res.end();
      },
      json(200, { success: 1, user_group: { token: 'ugt_rel' } }),
    );
    const { service } = await client(`${server.url}/p`);
    await service.getUser(GET_REQUEST);
    expect(server.requests.map((r) => r.url)).toEqual(['/p/api/user', '/p/api/user/']);
  });
});

describe('every other redirect is an error, never followed', () => {
  const redirect =
    (status: number, location: string | undefined): Reply =>
    ({ res }) => {
      res.writeHead(status, location === undefined ? {} : { location });
      res.end();
    };

  it.each([
    [301, 'https://evil.example/api/user/'],
    [301, 'http://127.0.0.2:1/api/user/'],
    [302, '/api/other/'],
    [301, '/api/user/?x=1'],
    [301, '/api/user//'],
    [303, '/api/user/'],
    [308, '/login?next=/api/user'],
  ])('%i to %s: exit 1, the Location named, the rotation not done', async (status, location) => {
    const server = await h.server(redirect(status, location));
    const { service, notes } = await client(server.url);

    const error = await failure(service.rotateToken('ugt_old_token_abcd'));

    expect(error).toBeInstanceOf(ApiError);
    expect(error.exitCode).toBe(1);
    expect(error.message).toContain(`HTTP ${status}`);
    // Named as every URL is shown: query values cut (test/transport/url-secrets.process.test.ts).
    expect(error.message).toContain(location.replace(/=[^&]*/g, '=***'));
    expect(error.message).toContain('the token was not rotated');
    expect(server.requests).toHaveLength(1);
    expect(notes).toEqual([]);
  });

  it('a redirect without Location, and one whose Location carries escapes', async () => {
    const server = await h.server(redirect(301, undefined));
    const { service } = await client(server.url);
    const error = await failure(service.getUser(GET_REQUEST));
    expect(error.message).toContain('HTTP 301, a redirect without a Location');

    // Raw bytes: node:http would refuse to send such a header.
    const hostile = await h.server(({ req }) => {
      req.socket.end(
        Buffer.from(
          'HTTP/1.1 302 Found\r\nLocation: /x\u009b31m\u0085\r\nContent-Length: 0\r\n\r\n',
          'latin1',
        ),
      );
    });
    const other = await client(hostile.url);
    const escaped = await failure(other.service.getUser(GET_REQUEST));
    expect(escaped.message).not.toMatch(controlCharacters());
    expect(escaped.message).toContain('/x\\u009b31m\\u0085');
  });

  it('never a second redirect, even to the slash path once more', async () => {
    const server = await h.server(redirect(301, '/api/user/'), redirect(301, '/api/user//'));
    const { service, notes } = await client(server.url);
    const error = await failure(service.rotateToken('ugt_old_token_abcd'));
    expect(error.exitCode).toBe(1);
    expect(error.message).toContain('the token was not rotated');
    expect(server.requests).toHaveLength(2);
    expect(notes).toHaveLength(1);
  });
});

describe("DRF's answers, read properly", () => {
  withDrf('an unknown token: 401 "Invalid token.", a hint naming the profile', async () => {
    const server = await drf('api/user');
    const { service } = await client(server.url, {
      apiToken: 'wrong0123456789',
      profile: 'staging',
      tokenSource: 'profile',
    });
    const error = await failure(service.getUser(GET_REQUEST));
    expect(error).toBeInstanceOf(AuthError);
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe('the API token was not accepted (HTTP 401: Invalid token.)');
    // Bulk records take their http_status from here, not from the message's wording.
    expect((error as AuthError).status).toBe(401);
    expect(error.hint).toContain('`ugs login --profile staging`');
  });

  withDrf('an unknown token of the default profile: the hint names that profile too', async () => {
    const server = await drf('api/user');
    const { service } = await client(server.url, {
      apiToken: 'wrong0123456789',
      profile: 'default',
      tokenSource: 'profile',
    });
    const error = await failure(service.getUser(GET_REQUEST));
    expect(error.hint).toContain('`ugs login`');
    expect(error.hint).toContain('profile "default"');
  });

  withDrf(
    'a token from UGS_API_TOKEN: the hint names the variable, not `ugs login` alone',
    async () => {
      const server = await drf('api/user');
      const { service } = await client(server.url, {
        apiToken: 'wrong0123456789',
        tokenSource: 'env UGS_API_TOKEN',
      });
      const error = await failure(service.rotateToken('ugt_old_token_abcd'));
      expect(error.exitCode).toBe(3);
      expect(error.hint).toMatch(/^the token comes from UGS_API_TOKEN/);
    },
  );

  withDrf('field errors: every field, in order, "field: message" joined with "; "', async () => {
    const server = await drf('api/user');
    const { service } = await client(server.url);
    const long = await failure(service.getUser({ name: 'n'.repeat(300), user_group_id: 'a' }));
    expect(long.exitCode).toBe(1);
    expect(long.message).toBe(
      'the service answered HTTP 400: name: Ensure this field has no more than 255 characters.',
    );
    const both = await failure(
      service.getUser({ name: 'n'.repeat(300), user_group_id: 'u'.repeat(256) }),
    );
    expect(both.message).toBe(
      'the service answered HTTP 400: name: Ensure this field has no more than 255 characters.; user_group_id: Ensure this field has no more than 255 characters.',
    );
  });

  it('non_field_errors and nested serializer errors', async () => {
    const server = await h.server(
      json(400, {
        non_field_errors: ['Invalid data.'],
        mapping: { sales: ['Not a valid string.'] },
        'bad\u001bfield': ['x'],
      }),
    );
    const { service } = await client(server.url);
    const error = await failure(service.getUser(GET_REQUEST));
    expect(error.message).toBe(
      'the service answered HTTP 400: Invalid data.; mapping.sales: Not a valid string.; bad\\u001bfield: x',
    );
  });

  withDrf(
    'rotate with an unknown token: a JSON 404 gets the token hint, not the base-URL one',
    async () => {
      const server = await drf('api/user');
      const { service } = await client(server.url);
      const error = await failure(service.rotateToken('ugt_nobody_has_this'));
      expect(error).toBeInstanceOf(ApiError);
      expect(error.exitCode).toBe(1);
      expect(error.message).toBe(
        `the service answered HTTP 404 to POST ${server.url}/api/user: Not found.`,
      );
      expect(error.hint).toContain('rotated already');
      expect(error.hint).toContain('--field token');
      expect(error.hint).not.toContain('--base-url');
    },
  );

  it('rotate with an unknown token: a JSON 404 in the success envelope gets the token hint too', async () => {
    const server = await h.server(json(404, { success: 0, detail: 'Not found.' }));
    const { service } = await client(server.url);
    const error = await failure(service.rotateToken('ugt_nobody_has_this'));
    expect(error.exitCode).toBe(1);
    expect(error.hint).toContain('rotated already');
    expect(error.hint).not.toContain('--base-url');
  });

  it('405 in the success envelope to a path without a trailing slash hints at the slash too', async () => {
    const server = await h.server(json(405, { success: 0, detail: 'Method not allowed' }));
    const { service } = await client(server.url);
    const error = await failure(service.getUser(GET_REQUEST));
    expect(error.hint).toContain('--api-path /api/user/');
  });

  withDrf('rotate and an HTML 404 keeps the base-URL hint', async () => {
    const server = await drf('ugs/api/user');
    const { service } = await client(server.url.replace('/ugs', '/wrong'));
    const error = await failure(service.rotateToken('ugt_old_token_abcd'));
    expect(error.exitCode).toBe(1);
    expect(error.hint).toContain('--base-url');
  });

  withDrf(
    'rotate and an HTML 500 after the commit: outcome unknown (exit 5), how to recover',
    async () => {
      const server = await drf('api/user');
      const { service } = await client(server.url);
      const created = await service.getUser(GET_REQUEST);
      await server.failNextRotation();
      const error = await failure(service.rotateToken(created.userGroup.token));
      expect(error).toBeInstanceOf(OutcomeUnknownError);
      expect(error.exitCode).toBe(5);
      expect(error.message).toContain('HTTP 500');
      expect(error.message).not.toContain('<');
      expect(error.hint).toContain('ugs get --id');
      // It did rotate: exit 5 was the honest answer.
      expect((await server.group('acme-1')).token).not.toBe(created.userGroup.token);
    },
  );

  it('405 to a path without a trailing slash hints at --api-path with the slash', async () => {
    const server = await h.server(json(405, { detail: 'Method "GET" not allowed.' }));
    const { service } = await client(server.url, { apiPath: '/v2/user' });
    const error = await failure(service.getUser(GET_REQUEST));
    expect(error.message).toBe('the service answered HTTP 405: Method "GET" not allowed.');
    expect(error.hint).toContain('--api-path /v2/user/');
  });

  it('429: "rate limited", with the wait from Retry-After', async () => {
    const server = await h.server(
      json(
        429,
        { detail: 'Request was throttled. Expected available in 7 seconds.' },
        {
          'retry-after': '7',
        },
      ),
    );
    const { service } = await client(server.url);
    const error = await failure(service.rotateToken('ugt_old_token_abcd'));
    expect(error.exitCode).toBe(1);
    expect(error.message).toContain('HTTP 429 (rate limited)');
    expect(error.hint).toBe('the service is rate limiting; try again in 7 s');
  });

  it('a text/plain error body shows its first non-empty line, escaped and short', async () => {
    const line = `\u001b]0;owned\u0007Bad ${'y'.repeat(300)}`;
    const server = await h.server(text(502, `\r\n   \r\n${line}\nsecond`, 'text/plain'));
    const { service } = await client(server.url);
    const error = await failure(service.getUser(GET_REQUEST));
    expect(error.message).toMatch(
      /^the service answered HTTP 502: \\u001b\]0;owned\\u0007Bad y+…$/,
    );
    expect(error.message).not.toContain('second');
    expect(error.message).not.toMatch(controlCharacters());
    expect(error.message.length).toBeLessThan(300);
  });
});

describe('an unsolicited 100 Continue before the real answer', () => {
  const answer = JSON.stringify({ success: 1, user_group: { token: 'ugt_after_continue' } });
  const final = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${answer.length}\r\n\r\n${answer}`;

  it('node:http writeContinue(): get and rotate read the answer after it', async () => {
    const server = await h.server(({ res }) => {
      res.writeContinue();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    });
    const { service } = await client(server.url);
    expect((await service.getUser(GET_REQUEST)).userGroup.token).toBe('ugt_after_continue');
    expect((await service.rotateToken('ugt_old_token_abcd')).userGroup.token).toBe(
      'ugt_after_continue',
    );
  });

  it('raw: two 100s and the answer in one write, or the 100 alone first', async () => {
    const server = await h.server(
      ({ req }) => {
        req.socket.end(
          `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\n${final}`,
        );
      },
      ({ req }) => {
        req.socket.write('HTTP/1.1 100 Continue\r\n\r\n');
        setTimeout(() => req.socket.end(final), 50);
      },
    );
    const { service } = await client(server.url);
    expect((await service.rotateToken('ugt_old_token_abcd')).userGroup.token).toBe(
      'ugt_after_continue',
    );
    expect((await service.rotateToken('ugt_old_token_abcd')).userGroup.token).toBe(
      'ugt_after_continue',
    );
  });
});

describe('server text in messages, escaped', () => {
  it('a hostile Content-Type is escaped and cut short in the message', async () => {
    const server = await h.server(({ req }) => {
      req.socket.end(
        Buffer.from(
          `HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\u009b31m${'z'.repeat(300)}\r\nContent-Length: 2\r\n\r\nhi`,
          'latin1',
        ),
      );
    });
    const { service } = await client(server.url);
    const error = await failure(service.rotateToken('ugt_old_token_abcd'));
    expect(error.exitCode).toBe(5);
    expect(error.message).toContain('text/html\\u009b31m');
    expect(error.message).not.toMatch(controlCharacters());
    expect(error.message.length).toBeLessThan(250);
  });

  it('login hints quote a profile name a shell would split', async () => {
    const server = await h.server(json(401, { detail: 'Invalid token.' }));
    const { service } = await client(server.url, { profile: "team a's" });
    const error = await failure(service.getUser(GET_REQUEST));
    expect(error.hint).toContain(`\`ugs login --profile 'team a'\\''s'\``);
  });
});
