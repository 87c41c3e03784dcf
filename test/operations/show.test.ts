/**
 * `ugs show --id <id>`: the Customer API's read-one as a command. It reads the group with
 * get_customer/ and prints it as `get` does; a missing id is exit 1 and creates nothing.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { runShow } from '../../src/operations/get-customer/command.js';
import { fakeService, groupResult, makeDeps, makeIO, terminalIO } from '../kit/fakes.js';
import { describeRun, runMain, serviceWithProfile } from '../kit/index.js';

const API_TOKEN = 'apitoken-show-test-9876fedc';

const customerService = () =>
  serviceWithProfile(API_TOKEN, { dialect: 'customer' }, { dialect: 'customer' });

const wire = (service: { requests: { method: string; url: string; body: string }[] }) =>
  service.requests.map((r) => `${r.method} ${r.url} ${r.body}`);

describe('ugs show in the customer dialect', () => {
  it('reads the group with get_customer/ only and prints it as get does', async () => {
    const { sb, service } = await customerService();
    const group = await service.seed('acme', 'Acme');
    const table = await runMain(['show', '--id', 'acme'], { sandbox: sb, tty: true });
    expect(table.code, describeRun(table)).toBe(0);
    expect(table.stdout).toContain('Found user group acme');
    expect(table.stdout).toContain('Acme');
    expect(wire(service)).toEqual(['POST /api/get_customer/ {"provided_id":"acme"}']);

    const field = await runMain(['show', '--id', 'acme', '--field', 'token'], { sandbox: sb });
    expect(field.code, describeRun(field)).toBe(0);
    expect(field.stdout).toBe(`${group.token}\n`);

    const json = await runMain(['show', '--id', 'acme', '--json'], { sandbox: sb });
    expect(json.code, describeRun(json)).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      success: 1,
      customer: { provided_id: 'acme', token: group.token },
    });
    expect(service.createdIds()).toEqual([]);
  });

  it('masks the token for a CI runner, as get does', async () => {
    const { sb, service } = await customerService();
    const group = await service.seed('acme', 'Acme');
    const result = await runMain(['show', '--id', 'acme', '--field', 'token'], {
      sandbox: sb,
      env: { GITHUB_ACTIONS: 'true', CI: 'true' },
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).toContain(`::add-mask::${group.token}`);
  });

  it('a missing id is exit 1 "no user group", with a hint, and nothing is created', async () => {
    const { sb, service } = await customerService();
    const result = await runMain(['show', '--id', 'acmee', '--field', 'token'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('error: no user group "acmee"');
    expect(result.stderr).toMatch(/hint: .*typo/);
    expect(wire(service)).toEqual(['POST /api/get_customer/ {"provided_id":"acmee"}']);
    expect(service.createdIds()).toEqual([]);
  });

  it('without --id and without a terminal: exit 2, nothing sent', async () => {
    const { sb, service } = await customerService();
    const result = await runMain(['show'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('missing --id');
    expect(service.requests).toEqual([]);
  });

  it('--json and --field together are a usage error', async () => {
    const { sb, service } = await customerService();
    const result = await runMain(['show', '--id', 'a', '--json', '--field', 'token'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(service.requests).toEqual([]);
  });
});

describe('ugs show outside the customer dialect', () => {
  it.each([
    ['interface', {}, []],
    ['explo', { dialect: 'explo' }, []],
    ['interface, by --dialect', { dialect: 'customer' }, ['--dialect', 'interface']],
  ] as const)('%s: exit 2 naming the customer dialect, nothing sent', async (_, profile, flags) => {
    const { sb, service } = await serviceWithProfile(API_TOKEN, {}, profile);
    await service.seed('acme', 'Acme');
    const before = service.requests.length;
    const result = await runMain([...flags, 'show', '--id', 'acme'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toMatch(/error: show is not part of the (interface|explo) dialect/);
    expect(result.stderr).toContain('offered by the customer dialect only');
    expect(result.stderr).toContain('hint: pass --dialect customer');
    expect(result.stdout).toBe('');
    expect(service.requests.slice(before)).toEqual([]);
  });

  it('is refused before the id prompt at a terminal', async () => {
    const deps = makeDeps({ io: terminalIO(), service: fakeService() });
    await expect(runShow({ id: undefined, format: { kind: 'table' } }, deps)).rejects.toThrow(
      /offered by the customer dialect only/,
    );
    expect(deps.prompter.asked).toEqual([]);
    expect(deps.targets).toEqual([]);
  });

  it('show --help says it is offered by the customer dialect only', async () => {
    const result = await runMain(['show', '--help']);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout.replace(/\s+/g, ' ')).toContain(
      'Offered by the customer dialect only (--dialect customer',
    );
  });
});

describe('runShow', () => {
  const customer = {
    default: { baseUrl: 'https://ugs.example.com', apiToken: 'k', dialect: 'customer' as const },
  };

  it('asks for a missing --id at a terminal, as get does', async () => {
    const reads: string[] = [];
    const service = fakeService({
      getCustomer: (id: string) => {
        reads.push(id);
        return groupResult({ provided_id: id, name: 'Acme', token: 'tok-acme-1234' });
      },
    });
    const deps = makeDeps({
      io: terminalIO(),
      service,
      profiles: customer,
      prompts: [['User group id', 'acme']],
    });
    await runShow({ id: undefined, format: { kind: 'table' } }, deps);
    deps.prompter.assertDone();
    expect(reads).toEqual(['acme']);
    expect(deps.io.stdout.text).toContain('Found user group acme');
  });

  it('without a terminal, a missing --id is a usage error before any request', async () => {
    const deps = makeDeps({ io: makeIO(), profiles: customer });
    await expect(runShow({ id: undefined, format: { kind: 'table' } }, deps)).rejects.toThrow(
      UsageError,
    );
    expect(deps.targets).toEqual([]);
  });
});
