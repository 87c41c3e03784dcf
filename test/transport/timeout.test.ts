/** `--timeout` bounds each request as a whole, from connect to the last byte of the answer. */
import { describe, expect, it } from 'vitest';
import { NetworkError, OutcomeUnknownError } from '../../src/errors.js';
import { TransportError } from '../../src/transport/http.js';
import { failure, GET_REQUEST, useHttpClients } from '../kit/http-client.js';
import { delay, headersThen, json, okBody, stall, trickle } from '../kit/server.js';

const h = useHttpClients();
const TIMEOUT_MS = 300;

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

/**
 * "After about the timeout" as a ratio, not a wall-clock bound a loaded runner can fail: the
 * failed request may take at most twice as long as a request this test sends next, answered
 * after TIMEOUT_MS (as slow as the deadline, plus what the machine adds right now). A deadline
 * that did not fire at once, or one per retry (3x), overruns it.
 */
async function expectAboutTheTimeout(ms: number): Promise<void> {
  const server = await h.server(delay(TIMEOUT_MS, json(200, okBody())));
  const { service } = await h.client(server.url, { timeoutMs: 20 * TIMEOUT_MS });
  const { ms: baseline } = await timed(() => service.getUser(GET_REQUEST));
  expect(
    ms,
    `${Math.round(ms)} ms; an answer after the deadline took ${Math.round(baseline)} ms`,
  ).toBeLessThan(2 * baseline);
}

describe('Get User timeouts', () => {
  it('a server that never answers: NetworkError (exit 4) after about the timeout', async () => {
    const server = await h.server(stall());
    const { service, sleeps } = await h.client(server.url, { timeoutMs: TIMEOUT_MS });

    const { value: error, ms } = await timed(() => failure(service.getUser(GET_REQUEST)));

    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    await expectAboutTheTimeout(ms);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).not.toBeInstanceOf(OutcomeUnknownError);
    expect(error.exitCode).toBe(4);
    expect((error as NetworkError).code).toBe('TIMEOUT');
    expect(error.message).toBe(`no complete answer from 127.0.0.1:${server.port} within 0.3 s`);
    expect(error.hint).toContain('--timeout');
    // A timeout is not retried: three times the deadline would overrun what the user asked for.
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('headers then a stalled body also time out', async () => {
    const server = await h.server(headersThen('stall'));
    const { service } = await h.client(server.url, { timeoutMs: TIMEOUT_MS });

    const { value: error, ms } = await timed(() => failure(service.getUser(GET_REQUEST)));

    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    await expectAboutTheTimeout(ms);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.exitCode).toBe(4);
    expect(error.message).toContain('no complete answer');
  });

  it('a body that trickles in for ever is cut off by the whole-request deadline', async () => {
    const server = await h.server(trickle(40));
    const { service } = await h.client(server.url, { timeoutMs: TIMEOUT_MS });

    const { value: error, ms } = await timed(() => failure(service.getUser(GET_REQUEST)));

    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    await expectAboutTheTimeout(ms);
    expect(error.exitCode).toBe(4);
    expect(error.message).toContain('no complete answer');
  });

  it('an answer that is slow but inside the deadline succeeds', async () => {
    const server = await h.server(delay(150, json(200, okBody())));
    const { service } = await h.client(server.url, { timeoutMs: 2_000 });

    const { value: result, ms } = await timed(() => service.getUser(GET_REQUEST));

    expect(result.userGroup.token).toBe('ugt_group_token_1234');
    expect(ms).toBeGreaterThanOrEqual(140);
  });

  it('the deadline applies to each attempt, not to all of them together', async () => {
    // 200 ms per answer, 300 ms deadline: three attempts take 600 ms and all fit.
    const server = await h.server(
      delay(200, json(503, { success: 0 })),
      delay(200, json(503, { success: 0 })),
      delay(200, json(200, okBody())),
    );
    const { service } = await h.client(server.url, { timeoutMs: TIMEOUT_MS });

    const result = await service.getUser(GET_REQUEST);

    expect(result.userGroup.name).toBe('Acme');
    expect(server.requests).toHaveLength(3);
  });
});

describe('rotate timeouts', () => {
  it('a server that never answers: outcome unknown (exit 5) after about the timeout', async () => {
    const server = await h.server(stall());
    const { service, sleeps } = await h.client(server.url, { timeoutMs: TIMEOUT_MS });

    const { value: error, ms } = await timed(() =>
      failure(service.rotateToken('ugt_old_token_abcd')),
    );

    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    await expectAboutTheTimeout(ms);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.exitCode).toBe(5);
    expect(error.message).toContain('no complete answer');
    expect(error.message).toContain('may or may not have been rotated');
    expect(error.hint).toContain('ugs get --id');
    expect(error.hint).toContain('--field token');
    expect(error.cause).toBeInstanceOf(TransportError);
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('headers then a stalled body: outcome unknown (exit 5)', async () => {
    const server = await h.server(headersThen('stall'));
    const { service } = await h.client(server.url, { timeoutMs: TIMEOUT_MS });

    const { value: error, ms } = await timed(() =>
      failure(service.rotateToken('ugt_old_token_abcd')),
    );

    await expectAboutTheTimeout(ms);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.exitCode).toBe(5);
    expect(server.requests).toHaveLength(1);
  });
});
