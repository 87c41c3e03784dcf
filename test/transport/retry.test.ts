/**
 * Retries: Get User is repeated on transient failures with backoff and Retry-After; rotation is
 * repeated only when the connection was refused, since anything else may have rotated the token.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError, OutcomeUnknownError } from '../../src/errors.js';
import { retryAfterMs, TransportError } from '../../src/transport/http.js';
import { failure, GET_REQUEST, useHttpClients } from '../kit/http-client.js';
import {
  closedPort,
  destroy,
  headersThen,
  json,
  okBody,
  startServer,
  type TestServer,
  text,
} from '../kit/server.js';

const h = useHttpClients();

const failed = (status: number, headers: Record<string, string> = {}) =>
  json(status, { success: 0, error: `busy (${status})` }, headers);

describe('Get User retries', () => {
  it.each([429, 502, 503, 504])(
    'HTTP %i is retried twice (3 requests), then the last answer is the error',
    async (status) => {
      const server = await h.server(failed(status));
      const { service, sleeps } = await h.client(server.url);

      const error = await failure(service.getUser(GET_REQUEST));

      expect(server.requests).toHaveLength(3);
      expect(sleeps).toHaveLength(2);
      expect(error).toBeInstanceOf(ApiError);
      expect(error.exitCode).toBe(1);
      expect((error as ApiError).status).toBe(status);
      expect(error.message).toBe(
        `the service answered HTTP ${status}${status === 429 ? ' (rate limited)' : ''}: busy (${status})`,
      );
      expect(error.body).toEqual({ success: 0, error: `busy (${status})` });
      // every attempt sent the same request
      expect(new Set(server.requests.map((r) => r.body)).size).toBe(1);
    },
  );

  it.each([400, 404, 500, 501])('HTTP %i is not retried', async (status) => {
    const server = await h.server(failed(status));
    const { service, sleeps } = await h.client(server.url);

    const error = await failure(service.getUser(GET_REQUEST));

    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(error.exitCode).toBe(1);
  });

  it('a 503 then a 200 succeeds on the second request', async () => {
    const server = await h.server(failed(503), json(200, okBody()));
    const { service, sleeps } = await h.client(server.url);

    const result = await service.getUser(GET_REQUEST);

    expect(result.userGroup.token).toBe('ugt_group_token_1234');
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toHaveLength(1);
  });

  it('two failures then a 200 succeeds on the third and last request', async () => {
    const server = await h.server(failed(502), failed(504), json(200, okBody()));
    const { service, sleeps } = await h.client(server.url);

    await service.getUser(GET_REQUEST);

    expect(server.requests).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
  });

  it('backs off exponentially with jitter: half to all of 300 ms, then of 600 ms', async () => {
    for (const [random, expected] of [
      [0, [150, 300]],
      [0.5, [225, 450]],
      [0.999, [299.85, 599.7]],
    ] as const) {
      const server = await h.server(failed(503));
      const { service, sleeps } = await h.client(server.url, { random: () => random });
      await failure(service.getUser(GET_REQUEST));
      expect(sleeps.map((ms) => Math.round(ms * 100) / 100)).toEqual(expected);
    }
  });

  it('uses real randomness by default, within the jitter bounds', async () => {
    const server = await h.server(failed(503));
    const { service, sleeps } = await h.client(server.url);

    await failure(service.getUser(GET_REQUEST));

    expect(sleeps).toHaveLength(2);
    expect(sleeps[0]).toBeGreaterThanOrEqual(150);
    expect(sleeps[0]).toBeLessThanOrEqual(300);
    expect(sleeps[1]).toBeGreaterThanOrEqual(300);
    expect(sleeps[1]).toBeLessThanOrEqual(600);
  });

  it('honours Retry-After in seconds', async () => {
    const server = await h.server(
      failed(503, { 'retry-after': '7' }),
      failed(429, { 'retry-after': '2' }),
      json(200, okBody()),
    );
    const { service, sleeps } = await h.client(server.url, { random: () => 0 });

    await service.getUser(GET_REQUEST);

    expect(sleeps).toEqual([7000, 2000]);
  });

  it('honours Retry-After: 0 as "now"', async () => {
    const server = await h.server(failed(503, { 'retry-after': '0' }), json(200, okBody()));
    const { service, sleeps } = await h.client(server.url);

    await service.getUser(GET_REQUEST);

    expect(sleeps).toEqual([0]);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const server = await h.server(
      ({ res }) => {
        const when = new Date(Date.now() + 10_000).toUTCString();
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': when });
        res.end('{"success":0}');
      },
      json(200, okBody()),
    );
    const { service, sleeps } = await h.client(server.url, { random: () => 0 });

    await service.getUser(GET_REQUEST);

    expect(sleeps).toHaveLength(1);
    // HTTP dates have whole seconds: 10 s ahead, less the truncated fraction and the round trip.
    expect(sleeps[0]).toBeGreaterThan(8_000);
    expect(sleeps[0]).toBeLessThanOrEqual(10_000);
  });

  it('caps Retry-After at 30 s, in seconds and as a date', async () => {
    const server = await h.server(
      failed(503, { 'retry-after': '3600' }),
      failed(503, { 'retry-after': new Date(Date.now() + 86_400_000).toUTCString() }),
      json(200, okBody()),
    );
    const { service, sleeps } = await h.client(server.url);

    await service.getUser(GET_REQUEST);

    expect(sleeps).toEqual([30_000, 30_000]);
  });

  it('falls back to backoff when Retry-After cannot be read', async () => {
    const server = await h.server(
      failed(503, { 'retry-after': 'soon' }),
      failed(503, { 'retry-after': '1.5' }),
      json(200, okBody()),
    );
    const { service, sleeps } = await h.client(server.url, { random: () => 0.5 });

    await service.getUser(GET_REQUEST);

    expect(sleeps).toEqual([225, 450]);
  });

  it('an HTML 502 page from a proxy is retried, then reported by status and content type', async () => {
    const page = '<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>';
    const server = await h.server(text(502, page, 'text/html; charset=utf-8'));
    const { service } = await h.client(server.url);

    const error = await failure(service.getUser(GET_REQUEST));

    expect(server.requests).toHaveLength(3);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.exitCode).toBe(1);
    expect(error.message).toBe('the service answered HTTP 502: a text/html; charset=utf-8 body');
    expect(error.message).not.toContain('<html');
    expect(error.body).toBeUndefined();
  });

  it('a refused connection is retried twice, then is a NetworkError (exit 4)', async () => {
    const port = await closedPort();
    const { service, sleeps } = await h.client(`http://127.0.0.1:${port}`);

    const error = await failure(service.getUser(GET_REQUEST));

    expect(sleeps).toHaveLength(2);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toBeInstanceOf(TransportError);
    expect(error.exitCode).toBe(4);
    expect((error as NetworkError).code).toBe('ECONNREFUSED');
    expect((error as TransportError).maybeDelivered).toBe(false);
    expect(error.message).toBe(`could not connect to 127.0.0.1:${port}: connection refused`);
    expect(error.hint).toContain('--base-url');
  });

  it('a refused connection is retried until the service comes up', async () => {
    const port = await closedPort();
    let server: TestServer | undefined;
    const { service, sleeps } = await h.client(`http://127.0.0.1:${port}`, {
      onSleep: async (_ms, call) => {
        if (call === 2) {
          server = await startServer({ port: port }, json(200, okBody()));
          h.track(server);
        }
      },
    });

    const result = await service.getUser(GET_REQUEST);

    expect(result.userGroup.token).toBe('ugt_group_token_1234');
    expect(sleeps).toHaveLength(2);
    expect(server?.requests).toHaveLength(1);
  });

  it('a connection closed before the answer is retried', async () => {
    const server = await h.server(destroy(), destroy(), json(200, okBody()));
    const { service, sleeps } = await h.client(server.url);

    const result = await service.getUser(GET_REQUEST);

    expect(result.userGroup.name).toBe('Acme');
    expect(server.requests).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
  });

  it('a connection closed before every answer ends as a NetworkError (exit 4)', async () => {
    const server = await h.server(destroy());
    const { service } = await h.client(server.url);

    const error = await failure(service.getUser(GET_REQUEST));

    expect(server.requests).toHaveLength(3);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.exitCode).toBe(4);
    expect(error.message).toContain(`127.0.0.1:${server.port}`);
  });

  it('a connection that breaks mid-body is a NetworkError (exit 4) for Get User', async () => {
    const server = await h.server(headersThen('destroy'));
    const { service } = await h.client(server.url);

    const error = await failure(service.getUser(GET_REQUEST));

    expect(error).toBeInstanceOf(NetworkError);
    expect(error.exitCode).toBe(4);
    expect(error.message).toContain('broke while reading the answer');
    // The contract retries connection errors before a response only; this one came after.
    expect(server.requests).toHaveLength(1);
  });
});

describe('rotate is not retried once the request may have reached the server', () => {
  it('HTTP 429: exactly one request, ApiError (exit 1): a rate limit comes before any work', async () => {
    const server = await h.server(failed(429, { 'retry-after': '1' }), json(200, okBody()));
    const { service, sleeps } = await h.client(server.url);

    const error = await failure(service.rotateToken('ugt_old_token_abcd'));

    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.exitCode).toBe(1);
    expect(error.message).toBe(
      'the token was not rotated: the service answered HTTP 429 (rate limited): busy (429)',
    );
    expect(error.hint).toBe('the service is rate limiting; try again in 1 s');
  });

  it.each([500, 502, 503, 504])(
    'HTTP %i: exactly one request, outcome unknown (exit 5): it may have failed after the commit',
    async (status) => {
      const server = await h.server(failed(status, { 'retry-after': '1' }), json(200, okBody()));
      const { service, sleeps } = await h.client(server.url);

      const error = await failure(service.rotateToken('ugt_old_token_abcd'));

      expect(server.requests).toHaveLength(1);
      expect(sleeps).toEqual([]);
      expect(error).toBeInstanceOf(OutcomeUnknownError);
      expect(error.exitCode).toBe(5);
      expect(error.message).toBe(
        `the service answered HTTP ${status}: busy (${status}); the token may or may not have been rotated`,
      );
      expect(error.hint).toContain('--field token');
    },
  );

  it('a connection reset before the answer: one request, outcome unknown (exit 5)', async () => {
    const server = await h.server(destroy(), json(200, okBody()));
    const { service, sleeps } = await h.client(server.url);

    const error = await failure(service.rotateToken('ugt_old_token_abcd'));

    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.exitCode).toBe(5);
    expect(error.message).toContain('may or may not have been rotated');
    expect(error.hint).toContain('ugs get --id');
    expect(error.hint).toContain('--field token');
  });

  it('a connection that breaks mid-body: one request, outcome unknown (exit 5)', async () => {
    const server = await h.server(headersThen('destroy'), json(200, okBody()));
    const { service, sleeps } = await h.client(server.url);

    const error = await failure(service.rotateToken('ugt_old_token_abcd'));

    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.exitCode).toBe(5);
    expect(error.hint).toContain('ugs get --id');
    expect(error.hint).toContain('--field token');
  });

  it('a refused connection is retried (nothing reached the server), then exit 4', async () => {
    const port = await closedPort();
    const { service, sleeps } = await h.client(`http://127.0.0.1:${port}`);

    const error = await failure(service.rotateToken('ugt_old_token_abcd'));

    expect(sleeps).toHaveLength(2);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).not.toBeInstanceOf(OutcomeUnknownError);
    expect(error.exitCode).toBe(4);
    expect((error as NetworkError).code).toBe('ECONNREFUSED');
  });

  it('a refused connection is retried until the service comes up, which then sees one request', async () => {
    const port = await closedPort();
    let server: TestServer | undefined;
    const { service, sleeps } = await h.client(`http://127.0.0.1:${port}`, {
      onSleep: async (_ms, call) => {
        if (call === 1) {
          server = await startServer({ port: port }, json(200, okBody()));
          h.track(server);
        }
      },
    });

    const result = await service.rotateToken('ugt_old_token_abcd');

    expect(result.userGroup.token).toBe('ugt_group_token_1234');
    expect(sleeps).toHaveLength(1);
    expect(server?.requests).toHaveLength(1);
    expect(server?.requests[0]?.body).toBe('{"current_token":"ugt_old_token_abcd"}');
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');

  it('reads whole seconds', () => {
    expect(retryAfterMs('0', now)).toBe(0);
    expect(retryAfterMs('1', now)).toBe(1000);
    expect(retryAfterMs('12', now)).toBe(12_000);
    expect(retryAfterMs(' 5 ', now)).toBe(5000);
  });

  it('reads an HTTP date relative to now', () => {
    expect(retryAfterMs('Tue, 01 Jan 2030 00:00:10 GMT', now)).toBe(10_000);
    expect(retryAfterMs(new Date(now + 25_000).toUTCString(), now)).toBe(25_000);
  });

  it('reads the obsolete RFC 850 and asctime date forms too', () => {
    expect(retryAfterMs('Tuesday, 01-Jan-30 00:00:20 GMT', now)).toBe(20_000);
    expect(retryAfterMs('Tue Jan  1 00:00:15 2030', now)).toBeGreaterThanOrEqual(0);
  });

  it('treats a date in the past as "now"', () => {
    expect(retryAfterMs('Mon, 31 Dec 2029 23:59:00 GMT', now)).toBe(0);
  });

  it('caps both forms at 30 s', () => {
    expect(retryAfterMs('30', now)).toBe(30_000);
    expect(retryAfterMs('31', now)).toBe(30_000);
    expect(retryAfterMs('86400', now)).toBe(30_000);
    expect(retryAfterMs('99999999999999999999999', now)).toBe(30_000);
    expect(retryAfterMs('Wed, 01 Jan 2031 00:00:00 GMT', now)).toBe(30_000);
  });

  it('returns undefined when absent or unreadable, so backoff applies', () => {
    for (const value of [
      undefined,
      '',
      '   ',
      'soon',
      '5s',
      '1e3',
      '0x10',
      'NaN',
      '1.5',
      '-5',
      '+5',
      '5 May',
    ]) {
      expect(retryAfterMs(value, now), JSON.stringify(value)).toBeUndefined();
    }
  });
});
