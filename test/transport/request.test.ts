/** What goes on the wire: method, path, headers and the JSON body, GET included. */
import { describe, expect, it } from 'vitest';
import { API_TOKEN, GET_REQUEST, USER_AGENT, useHttpClients } from '../kit/http-client.js';
import { json, okBody } from '../kit/server.js';

const h = useHttpClients();

describe('the Get User request', () => {
  it('sends GET /api/user with the JSON body and every documented header', async () => {
    const server = await h.server(json(200, okBody()));
    const { service } = await h.client(server.url);
    const request = {
      name: 'Acme Corp',
      user_group_id: 'acme-1',
      mapping: { '12': 'warehouse', '13': 'source-7' },
      properties: { plan: 'gold', seats: 12, tags: ['a', 'b'], nested: { on: true }, none: null },
    };

    await service.getUser(request);

    expect(server.requests).toHaveLength(1);
    const [got] = server.requests;
    expect(got?.method).toBe('GET');
    expect(got?.url).toBe('/api/user');
    expect(JSON.parse(got?.body ?? '')).toEqual(request);
    expect(got?.headers['content-type']).toBe('application/json');
    expect(got?.headers.accept).toBe('application/json');
    expect(got?.headers.authorization).toBe(`Token ${API_TOKEN}`);
    expect(got?.headers['user-agent']).toBe(USER_AGENT);
    // Without a content-length (or chunked framing) a GET body would be read as a new request.
    expect(Number(got?.headers['content-length'])).toBe(Buffer.byteLength(got?.body ?? ''));
  });

  it('sends only the fields given: no mapping or properties keys when absent', async () => {
    const server = await h.server(json(200, okBody()));
    const { service } = await h.client(server.url);

    await service.getUser(GET_REQUEST);

    expect(server.requests[0]?.body).toBe('{"name":"Acme","user_group_id":"acme-1"}');
  });

  it('keeps non-ASCII text intact and counts content-length in bytes', async () => {
    const server = await h.server(json(200, okBody()));
    const { service } = await h.client(server.url);
    const request = { name: 'Zoë & Søn 🚀', user_group_id: 'ß-1', properties: { city: 'Kraków' } };

    await service.getUser(request);

    const got = server.requests[0];
    expect(JSON.parse(got?.body ?? '')).toEqual(request);
    expect(Number(got?.headers['content-length'])).toBe(
      Buffer.byteLength(JSON.stringify(request), 'utf8'),
    );
  });

  it('returns the parsed answer', async () => {
    const server = await h.server(json(200, okBody({ new_user_group: true })));
    const { service } = await h.client(server.url);

    const result = await service.getUser(GET_REQUEST);

    expect(result.created).toBe(true);
    expect(result.userGroup.token).toBe('ugt_group_token_1234');
    expect(result.body).toEqual(okBody({ new_user_group: true }));
  });
});

describe('the rotate request', () => {
  it('sends POST /api/user with {current_token} and the same headers', async () => {
    const server = await h.server(json(200, okBody()));
    const { service } = await h.client(server.url);

    await service.rotateToken('ugt_old_token_abcd');

    expect(server.requests).toHaveLength(1);
    const [got] = server.requests;
    expect(got?.method).toBe('POST');
    expect(got?.url).toBe('/api/user');
    expect(got?.body).toBe('{"current_token":"ugt_old_token_abcd"}');
    expect(got?.headers['content-type']).toBe('application/json');
    expect(got?.headers.accept).toBe('application/json');
    expect(got?.headers.authorization).toBe(`Token ${API_TOKEN}`);
    expect(got?.headers['user-agent']).toBe(USER_AGENT);
  });
});

describe('base URLs', () => {
  const cases: Array<[string, string]> = [
    ['', '/api/user'],
    ['/', '/api/user'],
    ['/prefix', '/prefix/api/user'],
    ['/prefix/', '/prefix/api/user'],
    ['/prefix//', '/prefix/api/user'],
    ['/a/b/c', '/a/b/c/api/user'],
    ['/a/b/c/', '/a/b/c/api/user'],
  ];
  it.each(cases)('base path %j -> %s', async (suffix, expected) => {
    const server = await h.server(json(200, okBody()));
    const { service } = await h.client(`${server.url}${suffix}`);

    await service.getUser(GET_REQUEST);
    await service.rotateToken('ugt_old_token_abcd');

    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET ${expected}`,
      `POST ${expected}`,
    ]);
  });

  it('sends the Host header of the base URL', async () => {
    const server = await h.server(json(200, okBody()));
    const { service } = await h.client(`${server.url}/p`);

    await service.getUser(GET_REQUEST);

    expect(server.requests[0]?.headers.host).toBe(`127.0.0.1:${server.port}`);
  });
});

describe('connections', () => {
  it('reuses kept-alive connections for successive calls on one client', async () => {
    const server = await h.server(json(200, okBody()));
    const { service } = await h.client(server.url);

    for (let i = 0; i < 5; i++) await service.rotateToken(`ugt_old_token_${i}`);

    expect(server.requests).toHaveLength(5);
    const ports = new Set(server.requests.map((r) => r.remotePort));
    expect(ports.size).toBeLessThan(5);
  });

  it('a GET with a body gets a fresh connection each time (undici closes them after a GET body)', async () => {
    // undici marks the socket for reset after a GET that carried a body, unless `reset: false`;
    // the request must still arrive whole each time.
    const server = await h.server(json(200, okBody()));
    const { service } = await h.client(server.url);

    for (let i = 0; i < 3; i++) await service.getUser({ name: 'A', user_group_id: `g${i}` });

    expect(server.requests.map((r) => JSON.parse(r.body).user_group_id)).toEqual([
      'g0',
      'g1',
      'g2',
    ]);
  });

  it('close() releases the connection', async () => {
    const server = await h.server(json(200, okBody()));
    const { http, service } = await h.client(server.url);

    await service.getUser(GET_REQUEST);
    await http.close();

    await expect(service.getUser(GET_REQUEST)).rejects.toThrow();
    expect(server.requests).toHaveLength(1);
  });
});
