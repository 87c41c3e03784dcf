/**
 * `ugs serve --dialect customer` serves the vendor's Customer API: create_customer/ (get or
 * create by provided_id), get_customer/ (read one, never create: DRF's 404 when none) and
 * refresh_customer_token/, with `Explo-Authorization` and DRF-style errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type RunningEmulator, startEmulator, tokenOf, userGroupOf } from '../kit/index.js';

const apiTokens = [{ token: 'customer-token-1234', environment: 'Customer' as const }];
let emulator: RunningEmulator;
let token: string;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, dialect: 'customer', apiTokens });
  token = tokenOf(emulator, 'Customer');
});

afterAll(async () => {
  await emulator.close();
});

const post = (path: string, body: unknown) =>
  call(emulator.url, {
    method: 'POST',
    path,
    token: null,
    headers: { 'explo-authorization': `Token ${token}` },
    body,
  });

describe('ugs serve --dialect customer', () => {
  it('create_customer/ gets or creates by provided_id and answers the customer object', async () => {
    const first = await post('/api/create_customer/', {
      provided_id: 'cust-1',
      name: 'Cust',
      mapping: { sales: 'db1' },
      is_demo_group: true,
    });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      success: 1,
      new_customer: true,
      customer: {
        provided_id: 'cust-1',
        name: 'Cust',
        is_demo_group: true,
        emails: [],
        group_tags: [],
        parent_schema_datasource_mapping: { sales: 'db1' },
        hierarchy_level: null,
      },
    });
    const again = await post('/api/create_customer/', { provided_id: 'cust-1', name: 'Other' });
    expect(again.json).toMatchObject({ new_customer: false, customer: { name: 'Cust' } });
  });

  it('get_customer/ reads one, never creates: 404 {"detail"} for an unknown id', async () => {
    const missing = await post('/api/get_customer/', { provided_id: 'nobody' });
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ detail: 'Not found.' });
    // Still none: the read created nothing.
    expect((await post('/api/get_customer/', { provided_id: 'nobody' })).status).toBe(404);
    const blank = await post('/api/get_customer/', { provided_id: '' });
    expect(blank.status).toBe(400);
    expect(blank.json).toMatchObject({ provided_id: ['This field may not be blank.'] });
    await post('/api/create_customer/', { provided_id: 'cust-2', name: 'Two' });
    const found = await post('/api/get_customer/', { provided_id: 'cust-2' });
    expect(found.json).toMatchObject({ success: 1, customer: { provided_id: 'cust-2' } });
  });

  it('refresh_customer_token/ rotates, and answers 404 {"detail"} for an unknown token', async () => {
    const created = await post('/api/create_customer/', { provided_id: 'cust-3', name: 'Three' });
    const old = userGroupOf(created).token;
    const rotated = await post('/api/refresh_customer_token/', { current_token: old });
    expect(rotated.json).toMatchObject({ success: 1, customer: { provided_id: 'cust-3' } });
    expect(userGroupOf(rotated).token).not.toBe(old);
    const stale = await post('/api/refresh_customer_token/', { current_token: old });
    expect(stale.status).toBe(404);
    expect(stale.json).toMatchObject({ detail: 'Not found.' });
  });

  it("serves only the Customer API's paths, and reads only Explo-Authorization", async () => {
    expect((await post('/api/create_user_group/', { user_group_id: 'x', name: 'X' })).status).toBe(
      404,
    );
    const noSlash = await post('/api/get_customer', { provided_id: 'x' });
    expect(noSlash.status).toBe(301);
    const plain = await call(emulator.url, {
      method: 'POST',
      path: '/api/get_customer/',
      token,
      body: { provided_id: 'x' },
    });
    expect(plain.status).toBe(401);
  });
});
