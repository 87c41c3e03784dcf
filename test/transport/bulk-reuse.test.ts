/**
 * A bulk run's transport keeps its connections after a GET with a body (one connection serves
 * many rows), while the single-row default still closes them; and 429/503 come back at once for
 * the bulk scheduler to handle instead of being retried per row.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { getUser } from '../../src/operations/get-user/operation.js';
import { createHttpClient, type HttpClient } from '../../src/transport/http.js';
import { json, okBody, startServer, type TestServer } from '../kit/server.js';

let server: TestServer | undefined;
let client: HttpClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function sendGets(http: HttpClient, origin: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await http.send(
      {
        method: 'GET',
        url: new URL('/api/user', origin),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_group_id: `g${i}`, name: 'G' }),
      },
      getUser.retry,
    );
    statuses.push(response.status);
  }
  return statuses;
}

describe('bulk transport', () => {
  it('reuses one connection for GETs with a body when asked to', async () => {
    server = await startServer(json(200, okBody()));
    client = await createHttpClient({ timeoutMs: 5_000, env: {}, reuseConnections: true });
    await sendGets(client, server.url, 5);
    // undici may open a second connection while the first is being released; never one per row.
    expect(new Set(server.requests.map((r) => r.remotePort)).size).toBeLessThanOrEqual(2);
    expect(server.requests.map((r) => JSON.parse(r.body).user_group_id)).toEqual([
      'g0',
      'g1',
      'g2',
      'g3',
      'g4',
    ]);
  });

  it('opens no more connections than connectionsPerHost, however many requests are in flight', async () => {
    server = await startServer(json(200, okBody()));
    const http = await createHttpClient({
      timeoutMs: 5_000,
      env: {},
      reuseConnections: true,
      connectionsPerHost: 3,
    });
    client = http;
    // Eight chains at once, each sending its next request as soon as an answer is in: undici
    // frees a connection a tick after its answer, so without a bound it opens new ones meanwhile.
    const origin = server.url;
    await Promise.all(Array.from({ length: 8 }, () => sendGets(http, origin, 15)));
    expect(server.requests).toHaveLength(120);
    expect(server.connections).toBeLessThanOrEqual(3);
  });

  it('opens a connection per GET with a body by default (the single-row guard)', async () => {
    server = await startServer(json(200, okBody()));
    client = await createHttpClient({ timeoutMs: 5_000, env: {} });
    await sendGets(client, server.url, 3);
    expect(new Set(server.requests.map((r) => r.remotePort)).size).toBe(3);
  });

  it('returns a 429 at once when it is a pass-through status, instead of retrying it', async () => {
    server = await startServer(
      json(429, { success: 0, detail: 'slow down' }, { 'Retry-After': '0' }),
    );
    client = await createHttpClient({
      timeoutMs: 5_000,
      env: {},
      passStatuses: new Set([429, 503]),
      sleep: async () => {},
    });
    expect(await sendGets(client, server.url, 1)).toEqual([429]);
    expect(server.requests.length).toBe(1);
  });
});
