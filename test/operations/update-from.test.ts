/**
 * `ugs update --from`: one group's changes per row. Its rows (header variants, `|` lists, empty
 * cells left unchanged, nothing to change refused up front), and runs through `runMain` against
 * the emulator in the customer and explo dialects: only the cells given are sent, a 404 is the
 * row's failure, a lost answer is settled by reading the group back (customer) or left `unknown`
 * for `--resume` to send again (explo), and every update is a history event.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ByteSource } from '../../src/bulk/input-source.js';
import { UsageError } from '../../src/errors.js';
import {
  holdsChanges,
  lastByRow,
  openUpdateInput,
  readRecords,
  type UpdateRow,
} from '../kit/bulk.js';
import {
  describeRun,
  destroy,
  forwardTo,
  type Reply,
  runMain,
  type Sandbox,
  type Service,
  serviceWithProfile,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-update-from-13579ace';

function source(text: string): ByteSource {
  return async function* () {
    yield Buffer.from(text);
  };
}

async function rows(text: string, format: 'csv' | 'ndjson' = 'csv'): Promise<UpdateRow[]> {
  const input = await openUpdateInput(source(text), format);
  const found: UpdateRow[] = [];
  for await (const row of input.rows()) found.push(row);
  return found;
}

async function refusal(text: string, format: 'csv' | 'ndjson' = 'csv'): Promise<string> {
  const error = await rows(text, format).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UsageError);
  return (error as UsageError).message;
}

describe('update --from rows', () => {
  it('reads header variants and a semicolon CSV; an empty cell leaves its field out', async () => {
    const found = await rows(
      [
        'User Group ID;Name;Group Tags;Properties;is-demo-group;Owner',
        'acme;Acme Corp;eu | paying;"{""plan"":""pro""}";TRUE;ann',
        'globex;;;;false;bob',
        'initech;;[];;;',
      ].join('\n'),
    );
    expect(found.map((row) => [row.user_group_id, row.changes])).toEqual([
      [
        'acme',
        {
          name: 'Acme Corp',
          properties: { plan: 'pro' },
          is_demo_group: true,
          group_tags: ['eu', 'paying'],
        },
      ],
      ['globex', { is_demo_group: false }],
      // A JSON array in the cell: `[]` clears the tags.
      ['initech', { group_tags: [] }],
    ]);
  });

  it('NDJSON rows take lists as arrays and properties.<key> columns merge in CSV', async () => {
    expect(
      (
        await rows(
          '{"user_group_id":"acme","emails":["a@x.io","b@x.io"],"hierarchy_level":"Team","new_provided_id":"acme-2"}\n',
          'ndjson',
        )
      )[0]?.changes,
    ).toEqual({ new_provided_id: 'acme-2', emails: ['a@x.io', 'b@x.io'], hierarchy_level: 'Team' });
    expect(
      (await rows('user_group_id,properties.plan,mapping.sales\nacme,pro,acme_db\n'))[0]?.changes,
    ).toEqual({ mapping: { sales: 'acme_db' }, properties: { plan: 'pro' } });
  });

  it('refuses the whole file before anything is sent: nothing to change, a bad flag, a repeated id', async () => {
    const message = await refusal(
      [
        'user_group_id,name,is_demo_group,group_tags',
        'acme,,,',
        'globex,,maybe,',
        'hooli,Hooli,,a||b',
        'initech,Initech,,',
        'initech,Initech 2,,',
      ].join('\n'),
    );
    expect(message).toContain('has nothing to change');
    expect(message).toContain('is_demo_group must be true or false (or yes/no, 1/0), got "maybe"');
    expect(message).toContain('group_tags has an empty item');
    expect(message).toContain('user_group_id "initech" is also in row 4');
    expect(await refusal('name\nAcme\n')).toContain('no "user_group_id" column');
  });

  it('reading back: every value the row sets is there (keys of objects, lists as sets)', () => {
    const group = {
      token: 't',
      name: 'Acme',
      properties: { plan: 'pro', seats: 5 },
      group_tags: ['b', 'a'],
      parent_schema_datasource_mapping: { sales: 'db' },
    };
    expect(holdsChanges(group, { name: 'Acme', properties: { plan: 'pro' } })).toBe(true);
    expect(holdsChanges(group, { group_tags: ['a', 'b'], mapping: { sales: 'db' } })).toBe(true);
    expect(holdsChanges(group, { properties: { plan: 'free' } })).toBe(false);
    expect(holdsChanges(group, { group_tags: ['a'] })).toBe(false);
    // A field the read does not show counts as not set: the row is sent again.
    expect(holdsChanges(group, { hierarchy_level: 'Team' })).toBe(false);
  });
});

function setup(dialect: 'explo' | 'customer'): Promise<{ sb: Sandbox; service: Service }> {
  return serviceWithProfile(API_TOKEN, { dialect }, { dialect });
}

function write(sb: Sandbox, name: string, text: string): string {
  const path = join(sb.root, name);
  writeFileSync(path, text);
  return path;
}

interface Rec {
  row: number;
  user_group_id: string;
  name: string | null;
  status: string;
  changed: string | null;
  settled_by?: string | null;
  error: string | null;
}

const updates = (service: Service) =>
  service.requests.filter((r) => r.url.startsWith('/api/update_')).map((r) => r.json);

/** Commits the request in the emulator, then drops the connection without its answer. */
function committedThenDropped(service: Service): Reply {
  return async (ctx) => {
    const ignored = { writeHead: () => ignored, end: () => ignored };
    await forwardTo(service.emulator.url)({ ...ctx, res: ignored as never });
    ctx.req.socket.destroy();
  };
}

describe('ugs update --from in the customer dialect', () => {
  it('sends only the cells given, renames, records every row updated and each in the history', async () => {
    const { sb, service } = await setup('customer');
    const acme = await service.seed('acme', 'Acme');
    await service.seed('globex', 'Globex');
    const from = write(
      sb,
      'changes.csv',
      'user_group_id,name,group_tags,new_provided_id\nacme,Acme Corp,eu|paying,\nglobex,,,globex-2\n',
    );
    const out = join(sb.root, 'updated.ndjson');
    const result = await runMain(['update', '--from', from, '--output', out], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    expect(updates(service)).toEqual([
      { provided_id: 'acme', name: 'Acme Corp', group_tags: ['eu', 'paying'] },
      { provided_id: 'globex', new_provided_id: 'globex-2' },
    ]);
    const last = lastByRow(readRecords<Rec>(out));
    expect([...last.values()].map((r) => [r.user_group_id, r.status, r.name, r.changed])).toEqual([
      ['acme', 'updated', 'Acme Corp', 'name group_tags'],
      ['globex', 'updated', 'Globex', 'new_provided_id'],
    ]);
    expect((await service.group('acme')).token).toBe(acme.token);
    expect((await service.group('globex-2')).name).toBe('Globex');
    const history = await runMain(['history', '--json'], { sandbox: sb });
    const events = history.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.map((e) => [e.user_group_id, e.outcome])).toEqual(
      expect.arrayContaining([
        ['acme', 'updated'],
        ['globex-2', 'updated'],
      ]),
    );
  });

  it('an unknown id is that row failed "no user group" (exit 1); the others are updated', async () => {
    const { sb, service } = await setup('customer');
    await service.seed('acme', 'Acme');
    const from = write(sb, 'c.csv', 'user_group_id,name\nacme,A\nacmee,B\n');
    const out = join(sb.root, 'u.ndjson');
    const result = await runMain(['update', '--from', from, '--output', out], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    const last = lastByRow(readRecords<Rec>(out));
    expect(last.get(1)?.status).toBe('updated');
    expect(last.get(2)).toMatchObject({ status: 'failed', user_group_id: 'acmee' });
    expect(last.get(2)?.error).toContain('no user group "acmee"');
    expect(result.stderr).toContain('1 of 2 rows failed');
    expect(service.createdIds()).toEqual([]);
  });

  it('an answer lost after the update committed: read back, updated once, settled_by show', async () => {
    const { sb, service } = await setup('customer');
    await service.seed('acme', 'Acme');
    const from = write(sb, 'c.ndjson', '{"user_group_id":"acme","properties":{"plan":"pro"}}\n');
    const out = join(sb.root, 'u.ndjson');
    service.fail(committedThenDropped(service));
    const result = await runMain(['update', '--from', from, '--output', out], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    expect(updates(service)).toHaveLength(1);
    const [sending, done] = readRecords<Rec>(out);
    expect(sending?.status).toBe('sending');
    expect(done).toMatchObject({ status: 'updated', settled_by: 'show' });
  });

  it('an answer lost before the update reached the service: read back, sent once more', async () => {
    const { sb, service } = await setup('customer');
    await service.seed('acme', 'Acme');
    const from = write(sb, 'c.ndjson', '{"user_group_id":"acme","name":"Acme Corp"}\n');
    const out = join(sb.root, 'u.ndjson');
    service.fail(destroy());
    const result = await runMain(['update', '--from', from, '--output', out], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.answers.filter((a) => a.status === 200)).toHaveLength(2);
    expect(readRecords<Rec>(out).map((r) => r.status)).toEqual(['sending', 'sending', 'updated']);
    expect((await service.group('acme')).name).toBe('Acme Corp');
  });

  it('refuses the single flags beside --from (exit 2), and --from without --output', async () => {
    const { sb, service } = await setup('customer');
    const from = write(sb, 'c.csv', 'user_group_id,name\nacme,A\n');
    const demo = await runMain(['update', '--from', from, '--output', 'o.csv', '--demo'], {
      sandbox: sb,
    });
    expect(demo.code, describeRun(demo)).toBe(2);
    expect(demo.stderr).toContain('--from cannot be combined with --demo');
    const noOutput = await runMain(['update', '--from', from], { sandbox: sb });
    expect(noOutput.code, describeRun(noOutput)).toBe(2);
    expect(noOutput.stderr).toContain('update --from needs --output FILE');
    expect(service.requests).toEqual([]);
  });
});

describe('ugs update --from in the explo dialect', () => {
  it('posts each row to update_user_group/ with only its cells', async () => {
    const { sb, service } = await setup('explo');
    await service.seed('acme', 'Acme');
    await service.seed('globex', 'Globex');
    const from = write(
      sb,
      'c.csv',
      'user_group_id;is_demo_group;name\nacme;true;\nglobex;;Globex Inc\n',
    );
    const out = join(sb.root, 'u.csv');
    const result = await runMain(['update', '--from', from, '--output', out], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests.map((r) => [r.url, r.json])).toEqual([
      ['/api/update_user_group/', { user_group_id: 'acme', is_demo_group: true }],
      ['/api/update_user_group/', { user_group_id: 'globex', name: 'Globex Inc' }],
    ]);
    expect(result.stderr).toMatch(/2 rows in .*: 2 updated/);
  });

  it('a Customer API column with a value is exit 2 before anything is sent', async () => {
    const { sb, service } = await setup('explo');
    const from = write(sb, 'c.csv', 'user_group_id,name,group_tags\nacme,Acme,eu\n');
    const result = await runMain(['update', '--from', from, '--output', 'u.csv'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('group_tags needs --dialect customer');
    expect(service.requests).toEqual([]);
  });

  it('a lost answer is unknown (exit 5), not sent again; --resume sends it once more', async () => {
    const { sb, service } = await setup('explo');
    await service.seed('acme', 'Acme');
    const from = write(sb, 'c.ndjson', '{"user_group_id":"acme","name":"Acme Corp"}\n');
    const out = join(sb.root, 'u.ndjson');
    service.fail(committedThenDropped(service));
    const args = ['update', '--from', from, '--output', out];
    const first = await runMain(args, { sandbox: sb });
    expect(first.code, describeRun(first)).toBe(5);
    expect(first.stderr).toContain('1 update has an unknown outcome');
    expect(first.stderr).toContain('--resume');
    expect(updates(service)).toHaveLength(1);
    expect(readRecords<Rec>(out).at(-1)?.status).toBe('unknown');
    const resumed = await runMain([...args, '--resume', '--timeout', '1'], { sandbox: sb });
    expect(resumed.code, describeRun(resumed)).toBe(0);
    expect(updates(service)).toHaveLength(2);
    expect(readRecords<Rec>(out).at(-1)?.status).toBe('updated');
  });
});

describe('ugs update --from in the interface dialect', () => {
  it('is exit 2, nothing read or sent', async () => {
    const { sb, service } = await serviceWithProfile(API_TOKEN);
    const result = await runMain(['update', '--from', 'missing.csv', '--output', 'u.csv'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('update is not part of the interface dialect');
    expect(service.requests).toEqual([]);
  });
});
