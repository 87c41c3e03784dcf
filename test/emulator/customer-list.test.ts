/**
 * `ugs serve --dialect customer` lists customers as DRF's PageNumberPagination does:
 * `GET /v2/api/customers/?page=N&page_size=M` over the API key's environment, in a stable order,
 * with `total_count`; `page_size` above 1000 is a 400 field error and a page past the end DRF's
 * 404 `{"detail": "Invalid page."}`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type RunningEmulator, startEmulator, tokenOf } from '../kit/index.js';

let emulator: RunningEmulator;
let customerToken: string;
let testingToken: string;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, dialect: 'customer' });
  customerToken = tokenOf(emulator, 'Customer');
  testingToken = tokenOf(emulator, 'Testing');
  for (let i = 1; i <= 25; i++) {
    await post(customerToken, { provided_id: `c${i}`, name: `C${i}` });
  }
  await post(testingToken, { provided_id: 'only-in-testing', name: 'T' });
});

afterAll(async () => {
  await emulator.close();
});

function post(token: string, body: unknown) {
  return call(emulator.url, {
    method: 'POST',
    path: '/api/create_customer/',
    token: null,
    headers: { 'explo-authorization': `Token ${token}` },
    body,
  });
}

function list(query: string, token = customerToken) {
  return call(emulator.url, {
    method: 'GET',
    path: `/v2/api/customers/${query}`,
    token: null,
    headers: { 'explo-authorization': `Token ${token}` },
  });
}

type Customer = Record<string, unknown> & { provided_id: string };
const customersOf = (reply: { json?: Record<string, unknown> | undefined }) =>
  (reply.json?.results as { customers: Customer[] } | undefined)?.customers ?? [];
const ids = (reply: { json?: Record<string, unknown> | undefined }) =>
  customersOf(reply).map((c) => c.provided_id);

describe('the Customer API list in the emulator', () => {
  it('pages the groups of the key environment in creation order, with total_count', async () => {
    const first = await list('');
    expect(first.status).toBe(200);
    expect(first.json?.total_count).toBe(25);
    // The vendor's default page size is 20.
    expect(ids(first)).toEqual(Array.from({ length: 20 }, (_, i) => `c${i + 1}`));
    const second = await list('?page=2&page_size=10');
    expect(ids(second)).toEqual(Array.from({ length: 10 }, (_, i) => `c${i + 11}`));
    expect(ids(await list('?page=2&page_size=10'))).toEqual(ids(second));
    const testing = await list('?page_size=1000', testingToken);
    expect(testing.json?.total_count).toBe(1);
    expect(ids(testing)).toEqual(['only-in-testing']);
    // The customer object is the one get_customer/ answers.
    const customer = customersOf(first)[0];
    expect(customer).toMatchObject({ provided_id: 'c1', name: 'C1', hierarchy_level: null });
    expect(typeof customer?.token).toBe('string');
  });

  it('refuses page_size above 1000 with a DRF field error', async () => {
    const accepted = await list('?page_size=1000');
    expect(accepted.status).toBe(200);
    const refused = await list('?page_size=1001');
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({
      page_size: ['Ensure this value is less than or equal to 1000.'],
    });
  });

  it('answers a page past the end with 404 {"detail": "Invalid page."}', async () => {
    expect((await list('?page=2&page_size=20')).status).toBe(200);
    const past = await list('?page=3&page_size=20');
    expect(past.status).toBe(404);
    expect(past.json).toMatchObject({ detail: 'Invalid page.' });
    expect((await list('?page=0')).status).toBe(404);
  });

  it('filters by parent_provided_id and hierarchy_level: groups created without either match neither', async () => {
    const filtered = await list('?hierarchy_level=Region');
    expect(filtered.status).toBe(200);
    expect(filtered.json).toMatchObject({ total_count: 0, results: { customers: [] } });
    expect((await list('?parent_provided_id=c1')).json?.total_count).toBe(0);
  });

  it('redirects the path without its slash, query kept, and wants Explo-Authorization', async () => {
    const noSlash = await call(emulator.url, {
      method: 'GET',
      path: '/v2/api/customers?page=2',
      token: null,
      headers: { 'explo-authorization': `Token ${customerToken}` },
    });
    expect(noSlash.status).toBe(301);
    expect(noSlash.headers.location).toBe('/v2/api/customers/?page=2');
    const anonymous = await call(emulator.url, { method: 'GET', path: '/v2/api/customers/' });
    expect(anonymous.status).toBe(401);
  });
});
