/**
 * `--dialect customer`: the vendor's Customer API. Each operation goes to its own path as a POST
 * with `Explo-Authorization`; the id is `provided_id` and the group is answered as `customer`;
 * `get --must-exist` and `rotate --id` read with get_customer/, so a missing id creates nothing;
 * login and doctor's probe read an empty id, never create_customer/.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  call,
  describeRun,
  makeSandbox,
  readConfig,
  runMain,
  serviceForTest,
  serviceWithProfile,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-customer-test-5432abcd';

const customerService = (profile: Record<string, string> = { dialect: 'customer' }) =>
  serviceWithProfile(API_TOKEN, { dialect: 'customer' }, profile);

const wire = (service: { requests: { method: string; url: string; body: string }[] }) =>
  service.requests.map((r) => `${r.method} ${r.url} ${r.body}`);

describe('--dialect customer on the wire', () => {
  it('login --dialect customer saves the dialect and checks the key with get_customer/', async () => {
    const service = await serviceForTest([API_TOKEN], { dialect: 'customer' });
    const sb = makeSandbox();
    const good = await runMain(
      ['--dialect', 'customer', 'login', '--base-url', service.url, '--with-token'],
      { sandbox: sb, stdin: `${API_TOKEN}\n` },
    );
    expect(good.code, describeRun(good)).toBe(0);
    expect(wire(service)).toEqual(['POST /api/get_customer/ {"provided_id":""}']);
    expect(service.requests[0]?.headers['explo-authorization']).toBe(`Token ${API_TOKEN}`);
    expect(service.requests[0]?.headers.authorization).toBeUndefined();
    expect(service.answers[0]?.status).toBe(400);
    expect(readConfig(sb)).toMatchObject({ profiles: { default: { dialect: 'customer' } } });
    const status = await runMain(['status', '--json'], { sandbox: sb });
    expect(JSON.parse(status.stdout)).toMatchObject({ dialect: 'customer' });

    const other = makeSandbox();
    const refused = await runMain(
      ['--dialect', 'customer', 'login', '--base-url', service.url, '--with-token'],
      { sandbox: other, stdin: 'not-the-key\n' },
    );
    expect(refused.code, describeRun(refused)).toBe(3);
  });

  it('doctor --probe reads an empty id and never calls create_customer/', async () => {
    const { sb, service } = await customerService();
    const result = await runMain(['doctor', '--probe'], { sandbox: sb });
    expect(result.stdout + result.stderr).toContain('the token was accepted');
    expect(wire(service)).toEqual(['POST /api/get_customer/ {"provided_id":""}']);
    expect(service.requests.some((r) => r.url.includes('create_customer'))).toBe(false);
    expect(service.createdIds()).toEqual([]);
  });

  it('get creates the customer, then finds it: POST /api/create_customer/ with provided_id', async () => {
    const { sb, service } = await customerService();
    const first = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--json'], {
      sandbox: sb,
    });
    expect(first.code, describeRun(first)).toBe(0);
    expect(wire(service)).toEqual([
      'POST /api/create_customer/ {"provided_id":"acme","name":"Acme"}',
    ]);
    expect(service.requests[0]?.headers['explo-authorization']).toBe(`Token ${API_TOKEN}`);
    const created = JSON.parse(first.stdout);
    expect(created).toMatchObject({ success: 1, new_customer: true });
    expect(created.customer).toMatchObject({ provided_id: 'acme', name: 'Acme', emails: [] });
    const again = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--field', 'token'], {
      sandbox: sb,
    });
    expect(again.code, describeRun(again)).toBe(0);
    expect(again.stdout.trim()).toBe(created.customer.token);
    expect(service.createdIds()).toEqual(['acme']);
  });

  it('rotate: POST /api/refresh_customer_token/ {current_token}', async () => {
    const { sb, service } = await customerService();
    const before = await service.seed('acme', 'Acme');
    const result = await runMain(['rotate', '--current-token-stdin', '--yes', '--field', 'token'], {
      sandbox: sb,
      stdin: `${before.token}\n`,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(wire(service)).toEqual([
      `POST /api/refresh_customer_token/ ${JSON.stringify({ current_token: before.token })}`,
    ]);
    const after = await service.group('acme');
    expect(after.token).not.toBe(before.token);
    expect(result.stdout.trim()).toBe(after.token);
  });

  it('get --must-exist of a missing id is exit 1 "no user group", and nothing is created', async () => {
    const { sb, service } = await customerService();
    const result = await runMain(
      ['get', '--id', 'acmee', '--name', 'Acme', '--must-exist', '--field', 'token'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain('no user group "acmee"');
    expect(result.stdout).toBe('');
    expect(wire(service)).toEqual(['POST /api/get_customer/ {"provided_id":"acmee"}']);
    const token = service.emulator.tokenFor('Customer');
    const held = await call(service.emulator.url, {
      method: 'POST',
      path: '/api/get_customer/',
      token: null,
      headers: { 'explo-authorization': `Token ${token}` },
      body: { provided_id: 'acmee' },
    });
    expect(held.status).toBe(404);
  });

  it('get --must-exist of an existing id reads it with get_customer/ only', async () => {
    const { sb, service } = await customerService();
    const group = await service.seed('acme', 'Acme');
    const result = await runMain(
      ['get', '--id', 'acme', '--name', 'Acme', '--must-exist', '--field', 'token'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout.trim()).toBe(group.token);
    expect(wire(service)).toEqual(['POST /api/get_customer/ {"provided_id":"acme"}']);
  });

  it('rotate --id reads the token with get_customer/, then refreshes it', async () => {
    const { sb, service } = await customerService();
    const before = await service.seed('acme', 'Acme');
    const result = await runMain(
      ['rotate', '--id', 'acme', '--name', 'Acme', '--yes', '--field', 'token'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(wire(service)).toEqual([
      'POST /api/get_customer/ {"provided_id":"acme"}',
      `POST /api/refresh_customer_token/ ${JSON.stringify({ current_token: before.token })}`,
    ]);
    const missing = await runMain(['rotate', '--id', 'nobody', '--name', 'N', '--yes'], {
      sandbox: sb,
    });
    expect(missing.code, describeRun(missing)).toBe(1);
    expect(missing.stderr).toContain('no user group "nobody"');
    expect(service.createdIds()).toEqual([]);
  });

  it('rotate --id needs no --name: the group is read by its id alone', async () => {
    const { sb, service } = await customerService();
    const before = await service.seed('acme', 'Acme');
    const result = await runMain(['rotate', '--id', 'acme', '--yes', '--field', 'token'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(wire(service)).toEqual([
      'POST /api/get_customer/ {"provided_id":"acme"}',
      `POST /api/refresh_customer_token/ ${JSON.stringify({ current_token: before.token })}`,
    ]);
    expect(result.stdout.trim()).toBe((await service.group('acme')).token);
  });

  it('get --from --must-exist reads each row with get_customer/ and creates nothing', async () => {
    const { sb, service } = await customerService();
    const group = await service.seed('acme', 'Acme');
    const from = join(sb.root, 'rows.csv');
    writeFileSync(from, 'user_group_id,name\nacme,Acme\nacmee,Acme\n');
    const result = await runMain(['get', '--from', from, '--must-exist'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    expect([...wire(service)].sort()).toEqual([
      'POST /api/get_customer/ {"provided_id":"acme"}',
      'POST /api/get_customer/ {"provided_id":"acmee"}',
    ]);
    const records = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { user_group_id: string; status: string; token: unknown });
    expect(records.find((r) => r.user_group_id === 'acme')).toMatchObject({
      status: 'found',
      token: group.token,
    });
    expect(records.find((r) => r.user_group_id === 'acmee')).toMatchObject({ status: 'failed' });
    expect(service.createdIds()).toEqual([]);
  });

  it('whois --check reads the group with get_customer/, never create_customer/', async () => {
    const { sb, service } = await customerService();
    const first = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--field', 'token'], {
      sandbox: sb,
    });
    expect(first.code, describeRun(first)).toBe(0);
    const token = first.stdout.trim();
    const sent = service.requests.length;
    const check = await runMain(['whois', '-', '--check'], { sandbox: sb, stdin: token });
    expect(check.code, describeRun(check)).toBe(0);
    expect(check.stdout).toContain("IS the group's current token");
    expect(wire(service).slice(sent)).toEqual(['POST /api/get_customer/ {"provided_id":"acme"}']);
    expect(service.createdIds()).toEqual(['acme']);
  });

  it('UGS_DIALECT=customer is accepted, and --api-path is refused with it', async () => {
    const { sb, service } = await customerService({});
    const viaEnv = await runMain(['get', '--id', 'a', '--name', 'A', '--field', 'token'], {
      sandbox: sb,
      env: { UGS_DIALECT: 'customer' },
    });
    expect(viaEnv.code, describeRun(viaEnv)).toBe(0);
    expect(service.requests[0]?.url).toBe('/api/create_customer/');
    const withPath = await runMain(
      ['--dialect', 'customer', '--api-path', '/x', 'get', '--id', 'a', '--name', 'A'],
      { sandbox: sb },
    );
    expect(withPath.code, describeRun(withPath)).toBe(2);
    expect(service.requests).toHaveLength(1);
  });
});
