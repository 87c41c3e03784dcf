import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ANSI,
  describeRun,
  json as jsonReply,
  PACKAGE_VERSION,
  runMain,
  type Sandbox,
  type Service,
  serviceWithProfile,
  text as textReply,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-get-test-5678efgh';

function setup(prefix = ''): Promise<{ sb: Sandbox; service: Service }> {
  return serviceWithProfile(API_TOKEN, { prefix });
}

describe('ugs get (main in-process)', () => {
  it('--json prints exactly the service body and sends the documented GET', async () => {
    const { sb, service } = await setup();
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme Corp', '--json'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr.trim()).toBe('');

    const sent = service.answers.at(-1)?.body;
    expect(JSON.parse(result.stdout)).toEqual(sent);
    expect(result.stdout).toBe(`${JSON.stringify(sent, null, 2)}\n`);

    expect(service.requests).toHaveLength(1);
    const request = service.requests[0];
    expect(request?.method).toBe('GET');
    expect(request?.url).toBe('/api/user');
    expect(request?.json).toEqual({ name: 'Acme Corp', user_group_id: 'acme' });
    expect(request?.headers.authorization).toBe(`Token ${API_TOKEN}`);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.accept).toBe('application/json');
    expect(request?.headers['user-agent']).toBe(
      `ugs/${PACKAGE_VERSION} node/${process.versions.node}`,
    );
  });

  it('--field token prints only the token and a newline', async () => {
    const { sb, service } = await setup();
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--field', 'token'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(0);
    const token = (await service.group('acme')).token;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(result.stdout).toBe(`${token}\n`);
    expect(result.stderr.trim()).toBe('');

    const teamId = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--field', 'team_id'], {
      sandbox: sb,
    });
    expect(teamId.code, describeRun(teamId)).toBe(0);
    expect(teamId.stdout).toBe(`${(await service.group('acme')).team_id}\n`);

    const props = await runMain(
      ['get', '--id', 'acme', '--name', 'Acme', '--field', 'properties'],
      {
        sandbox: sb,
      },
    );
    expect(props.code, describeRun(props)).toBe(0);
    expect(props.stdout).toBe('null\n');
  });

  it('a --field the answer does not have is exit 1', async () => {
    const { sb } = await setup();
    const result = await runMain(['get', '--id', 'a', '--name', 'A', '--field', 'nope'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: .*nope/m);
  });

  it('default output into a pipe: Created, then Found on stderr, every field as key<TAB>value', async () => {
    const { sb, service } = await setup();
    const first = await runMain(['get', '--id', 'acme', '--name', 'Acme Corp'], { sandbox: sb });
    expect(first.code, describeRun(first)).toBe(0);
    expect(first.stderr).toBe('Created user group acme\n');
    expect(first.stdout).not.toMatch(ANSI);
    expect(first.stdout).not.toMatch(/[│┌─]/);
    const group = await service.group('acme');
    for (const text of ['provided_id', 'name', 'team_id', 'token', 'properties', 'Acme Corp']) {
      expect(first.stdout).toContain(text);
    }
    expect(first.stdout).toContain(group?.token);
    expect(first.stdout).toContain(String(group?.team_id));
    expect(first.stdout).toMatch(/^properties\tnull$/m);
    // Known fields in a stable order.
    const order = ['provided_id', 'name', 'team_id', 'token', 'properties'].map((f) =>
      first.stdout.search(new RegExp(`^${f}\t`, 'm')),
    );
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);

    const second = await runMain(['get', '--id', 'acme', '--name', 'Acme Corp'], { sandbox: sb });
    expect(second.code, describeRun(second)).toBe(0);
    expect(second.stderr).toMatch(/^Found user group acme\n/);
    expect(second.stderr).not.toContain('Created');
    expect(service.requests).toHaveLength(2);
  });

  it('shows unknown fields after the known ones', async () => {
    const { sb, service } = await setup();
    service.fail(
      jsonReply(200, {
        success: 1,
        new_user_group: false,
        user_group: {
          zz_extra: 'Testing',
          token: 'ugt_abcdef',
          provided_id: 'acme',
          name: 'Acme',
          team_id: 7,
          properties: { plan: 'pro' },
        },
      }),
    );
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toContain('{"plan":"pro"}');
    expect(result.stdout.indexOf('zz_extra')).toBeGreaterThan(result.stdout.indexOf('properties'));
    expect(result.stdout).toContain('Testing');
  });

  it('builds mapping and properties from flags, JSON, files and stdin', async () => {
    const { sb, service } = await setup();
    const file = join(sb.root, 'props.json');
    writeFileSync(file, '{"seats": 5, "tags": ["a"]}');
    const fromFlags = await runMain(
      [
        'get',
        '--id',
        'acme',
        '--name',
        'Acme',
        '--mapping',
        'sales=acme_db',
        '--mapping',
        'hr=conn=x',
        '--property',
        'plan=pro',
        '--properties',
        `@${file}`,
        '--json',
      ],
      { sandbox: sb },
    );
    expect(fromFlags.code, describeRun(fromFlags)).toBe(0);
    expect(service.requests[0]?.json).toEqual({
      name: 'Acme',
      user_group_id: 'acme',
      mapping: { sales: 'acme_db', hr: 'conn=x' },
      properties: { seats: 5, tags: ['a'], plan: 'pro' },
    });

    const fromStdin = await runMain(
      ['get', '--id', 'b', '--name', 'B', '--mapping-json', '{"s":"d"}', '--properties', '-'],
      { sandbox: sb, stdin: '{"region": "eu", "n": null}' },
    );
    expect(fromStdin.code, describeRun(fromStdin)).toBe(0);
    expect(service.requests[1]?.json).toEqual({
      name: 'B',
      user_group_id: 'b',
      mapping: { s: 'd' },
      properties: { region: 'eu', n: null },
    });
  });

  it('rejects a non-string mapping and a duplicate key before any request (exit 2)', async () => {
    const { sb, service } = await setup();
    const results = await Promise.all([
      runMain(['get', '--id', 'a', '--name', 'A', '--mapping-json', '{"s": 1}'], { sandbox: sb }),
      runMain(['get', '--id', 'a', '--name', 'A', '--mapping', 'nokey'], { sandbox: sb }),
      runMain(['get', '--id', 'a', '--name', 'A', '--property', 'k=1', '--property', 'k=2'], {
        sandbox: sb,
      }),
      runMain(['get', '--id', 'a', '--name', 'A', '--properties', '{bad'], { sandbox: sb }),
      runMain(['get', '--id', 'a', '--name', 'A', '--properties', '@/nonexistent/x.json'], {
        sandbox: sb,
      }),
      runMain(['get', '--id', 'a', '--name', 'A', '--json', '--field', 'token'], { sandbox: sb }),
      runMain(['get', '--id', '', '--name', 'A'], { sandbox: sb }),
    ]);
    for (const result of results) {
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stderr).toMatch(/^error: /m);
    }
    expect(service.requests).toHaveLength(0);
  });

  it('keeps a base URL path prefix (trailing slash handled)', async () => {
    const { sb, service } = await setup('/prefix');
    const result = await runMain(
      ['get', '--id', 'acme', '--name', 'Acme', '--base-url', `${service.url}/`, '--json'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests[0]?.url).toBe('/prefix/api/user');
  });

  it('retries a 503 and succeeds', async () => {
    const { sb, service } = await setup();
    service.fail(jsonReply(503, { detail: 'busy' }, { 'retry-after': '0' }));
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--json'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests.map((r) => r.method)).toEqual(['GET', 'GET']);
    expect(JSON.parse(result.stdout)).toEqual(service.answers.at(-1)?.body);
  });

  it('reports a non-JSON error page by status and content type, without dumping it (exit 1)', async () => {
    const { sb, service } = await setup();
    service.failAlways(
      textReply(500, '<html><body>SECRET-INTERNAL-STACK</body></html>', 'text/html'),
    );
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toMatch(/^error: .*500.*text\/html/m);
    expect(result.stderr + result.stdout).not.toContain('SECRET-INTERNAL-STACK');
  });

  it("a gateway's HTML 413: the request was too large for the service or a proxy (exit 1)", async () => {
    const { sb, service } = await setup();
    service.failAlways(
      textReply(413, '<html><body>413 Request Entity Too Large</body></html>', 'text/html'),
    );
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toMatch(
      /^hint: the request was too large for the service or a proxy in front of it.*: send smaller --properties or --mapping$/m,
    );
  });

  it('a 2xx answer that is not JSON is exit 1', async () => {
    const { sb, service } = await setup();
    service.failAlways(textReply(200, '<html></html>', 'text/html'));
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toMatch(/^error: .*not JSON/m);
  });
});
