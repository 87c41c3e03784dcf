/**
 * `ugs list` (`--dialect customer`): List Customers, `GET /v2/api/customers/?page=N&page_size=M`
 * with no body. A table with tokens by their last 4 and a "showing N of TOTAL" line; `--json`
 * and `--ndjson` the customers as sent; `--all` every page; usage errors and the other dialects
 * refused before anything is sent.
 */
import { describe, expect, it } from 'vitest';
import { parseListFlags } from '../../src/operations/list-customers/command.js';
import {
  describeRun,
  makeSandbox,
  runMain,
  type Service,
  serviceWithProfile,
  text,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-list-test-9876wxyz';

const customerService = () =>
  serviceWithProfile(API_TOKEN, { dialect: 'customer' }, { dialect: 'customer' });

/** Creates groups `cust-0001`... straight in the emulator (not through the recorded service). */
async function seed(service: Service, count: number): Promise<void> {
  const ids = Array.from({ length: count }, (_, i) => `cust-${String(i + 1).padStart(4, '0')}`);
  for (let at = 0; at < ids.length; at += 100) {
    await Promise.all(ids.slice(at, at + 100).map((id) => service.seed(id, `Name ${id}`)));
  }
}

describe('ugs list', () => {
  it('shows one page as a table with tokens by their last 4, then "showing N of TOTAL"', async () => {
    const { sb, service } = await customerService();
    await seed(service, 25);
    const first = await service.group('cust-0001');
    const result = await runMain(['list'], { sandbox: sb, tty: true, columns: 120 });
    expect(result.code, describeRun(result)).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+name\s+demo\s+level\s+token$/);
    expect(lines).toHaveLength(21);
    expect(lines[1]).toMatch(
      new RegExp(`^cust-0001\\s+Name cust-0001\\s+no\\s+…${first.token.slice(-4)}$`),
    );
    expect(result.stdout).not.toContain(first.token);
    expect(result.stderr).toContain('showing 20 of 25; --all for every group');
    expect(service.requests.map((r) => `${r.method} ${r.url} [${r.body}]`)).toEqual([
      'GET /v2/api/customers/?page=1&page_size=20 []',
    ]);
    expect(service.requests[0]?.headers['explo-authorization']).toBe(`Token ${API_TOKEN}`);
  });

  it('--page and --page-size choose the page, --parent and --level go in the query', async () => {
    const { sb, service } = await customerService();
    await seed(service, 5);
    const page = await runMain(['list', '--page', '2', '--page-size', '3'], { sandbox: sb });
    expect(page.code, describeRun(page)).toBe(0);
    expect(page.stdout).toContain('cust-0004');
    expect(page.stdout).not.toContain('cust-0001');
    expect(page.stderr).toContain('showing 2 of 5');
    const filtered = await runMain(['list', '--parent', 'acme', '--level', 'Region', '--json'], {
      sandbox: sb,
    });
    expect(filtered.code, describeRun(filtered)).toBe(0);
    // Seeded without a parent or a level: none of them matches.
    expect(JSON.parse(filtered.stdout)).toEqual([]);
    expect(service.requests[1]?.url).toBe(
      '/v2/api/customers/?page=1&page_size=20&parent_provided_id=acme&hierarchy_level=Region',
    );
  });

  it.each([
    ['--page-size', '1001'],
    ['--page-size', '0'],
    ['--page', '0'],
  ])('%s %s is exit 2 with nothing sent', async (flag, value) => {
    const { sb, service } = await customerService();
    const result = await runMain(['list', flag, value], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain(flag);
    expect(service.requests).toEqual([]);
  });

  it.each(['interface', 'explo'])(
    'with the %s dialect is exit 2 naming customer, nothing sent',
    async (dialect) => {
      const { service } = await customerService();
      const sb = makeSandbox();
      writeConfig(sb, {
        profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN, dialect } },
      });
      const result = await runMain(['list'], { sandbox: sb });
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stderr).toContain('customer dialect');
      expect(service.requests).toEqual([]);
    },
  );

  it('--json prints the customers exactly as the service sent them', async () => {
    const { sb, service } = await customerService();
    await seed(service, 3);
    const result = await runMain(['list', '--json'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    const sent = service.answers[0]?.body as { results: { customers: unknown[] } };
    expect(JSON.parse(result.stdout)).toEqual(sent.results.customers);
    expect(sent.results.customers).toHaveLength(3);
    expect(result.stderr).toBe('');
  });

  it('--ndjson and --json print each customer as the service wrote it, numbers exact', async () => {
    const { sb, service } = await customerService();
    // JSON.parse reads 12345678901234567890123 as 1.2345678901234568e22: printing the parsed
    // customer again would change the service's number.
    const customers = [
      '{"token":"t-1","provided_id":"big","properties":{"n":12345678901234567890123,"f":1.50}}',
      '{"token":"t-2","provided_id":"odd","name":"caf\\u00e9"}',
    ];
    const body = `{"total_count":2,"results":{"customers":[${customers.join(',')}]}}`;
    service.failAlways(text(200, body, 'application/json'));
    const ndjson = await runMain(['list', '--ndjson'], { sandbox: sb });
    expect(ndjson.code, describeRun(ndjson)).toBe(0);
    expect(ndjson.stdout).toBe(`${customers.join('\n')}\n`);
    const array = await runMain(['list', '--all', '--json', '--rate', '100/s'], { sandbox: sb });
    expect(array.code, describeRun(array)).toBe(0);
    expect(array.stdout).toBe(`[\n  ${customers.join(',\n  ')}\n]\n`);
  });

  it("--all is paced at the vendor's 180/min unless --rate says otherwise", () => {
    expect(parseListFlags({ all: true }).rate).toEqual({ count: 180, windowMs: 60_000 });
    expect(parseListFlags({ all: true, rate: '100/s' }).rate).toEqual({
      count: 100,
      windowMs: 1000,
    });
    expect(() => parseListFlags({ all: true, rate: '0/s' })).toThrow(/--rate must be/);
  });

  // At 100/s: the vendor's 180/min would make each of these wait a second for its pages. Pages
  // of 10 over 25 groups page as 1000 do over 2,500 (the process test runs that whole case:
  // list-customers.process.test.ts).
  it('--all --json returns every group, following the pages to the short last one', async () => {
    const { sb, service } = await customerService();
    await seed(service, 25);
    const result = await runMain(
      ['list', '--all', '--json', '--page-size', '10', '--rate', '100/s'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    const customers = JSON.parse(result.stdout) as { provided_id: string; token: string }[];
    expect(customers).toHaveLength(25);
    expect(new Set(customers.map((c) => c.provided_id)).size).toBe(25);
    expect(customers[24]?.provided_id).toBe('cust-0025');
    expect(service.requests.map((r) => r.url)).toEqual([
      '/v2/api/customers/?page=1&page_size=10',
      '/v2/api/customers/?page=2&page_size=10',
      '/v2/api/customers/?page=3&page_size=10',
    ]);
    // Whole tokens with --json: a script takes them from here.
    expect(customers[0]?.token).toBe((await service.group('cust-0001')).token);
  });

  it('--all takes pages of 1000 unless --page-size says otherwise', () => {
    expect(parseListFlags({ all: true }).pageSize).toBe(1000);
    expect(parseListFlags({ all: true, pageSize: '10' }).pageSize).toBe(10);
  });

  it('--all --ndjson writes one line per group', async () => {
    const { sb, service } = await customerService();
    await seed(service, 25);
    const result = await runMain(
      ['list', '--all', '--ndjson', '--page-size', '10', '--rate', '100/s'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(25);
    expect(JSON.parse(lines[12] as string)).toMatchObject({ provided_id: 'cust-0013' });
    expect(service.requests).toHaveLength(3);
  });

  it('--json under GitHub Actions masks every token before printing it', async () => {
    const { sb, service } = await customerService();
    await seed(service, 2);
    const result = await runMain(['list', '--json'], {
      sandbox: sb,
      env: { GITHUB_ACTIONS: 'true' },
    });
    expect(result.code, describeRun(result)).toBe(0);
    for (const id of ['cust-0001', 'cust-0002']) {
      const { token } = await service.group(id);
      expect(result.stderr).toContain(`::add-mask::${token}`);
      expect(result.stdout).toContain(token);
    }
  });

  describe('ugs list --field', () => {
    it('prints that field of each group, one a line; --field token under GitHub Actions masks first', async () => {
      const { sb, service } = await customerService();
      await seed(service, 3);
      const ids = await runMain(['list', '--field', 'provided_id'], { sandbox: sb });
      expect(ids.code, describeRun(ids)).toBe(0);
      expect(ids.stdout).toBe('cust-0001\ncust-0002\ncust-0003\n');
      const tokens = await runMain(['list', '--all', '--field', 'token', '--rate', '100/s'], {
        sandbox: sb,
        env: { GITHUB_ACTIONS: 'true' },
      });
      expect(tokens.code, describeRun(tokens)).toBe(0);
      const lines = tokens.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(3);
      for (const [at, id] of ['cust-0001', 'cust-0002', 'cust-0003'].entries()) {
        const { token } = await service.group(id);
        expect(lines[at]).toBe(token);
        expect(tokens.stderr.indexOf(`::add-mask::${token}`)).toBeGreaterThanOrEqual(0);
      }
    });

    it('a field the groups lack is exit 1 naming the fields they have; with --json exit 2', async () => {
      const { sb, service } = await customerService();
      await seed(service, 1);
      const missing = await runMain(['list', '--field', 'Token'], { sandbox: sb });
      expect(missing.code, describeRun(missing)).toBe(1);
      expect(missing.stderr).toContain('has no field "Token"');
      expect(missing.stderr).toContain('provided_id');
      expect(missing.stdout).toBe('');
      const both = await runMain(['list', '--field', 'token', '--json'], { sandbox: sb });
      expect(both.code, describeRun(both)).toBe(2);
      expect(both.stderr).toContain('--json and --field cannot be used together');
    });
  });
});
