/**
 * `ugs update --id <id>`: the vendor's update (customer: update_customer/, explo:
 * update_user_group/), sending only the fields given; refused (exit 2, nothing sent) in the
 * interface dialect, with nothing to change, and with a customer-only flag in explo.
 */
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  runMain,
  type Sandbox,
  type Service,
  serviceWithProfile,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-update-test-2468bdf0';

function setup(
  dialect: 'interface' | 'explo' | 'customer',
): Promise<{ sb: Sandbox; service: Service }> {
  return serviceWithProfile(API_TOKEN, { dialect }, dialect === 'interface' ? {} : { dialect });
}

/** The requests sent after the seeding, as method, path and JSON body. */
const sent = (service: Service) => service.requests.map((r) => [r.method, r.url, r.json]);

describe('ugs update in the customer dialect', () => {
  it('--name sends only provided_id and name, and the table shows the group as answered', async () => {
    const { sb, service } = await setup('customer');
    const group = await service.seed('acme', 'Acme');
    const result = await runMain(['update', '--id', 'acme', '--name', 'Acme Corp'], {
      sandbox: sb,
      tty: true,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(sent(service)).toEqual([
      ['POST', '/api/update_customer/', { provided_id: 'acme', name: 'Acme Corp' }],
    ]);
    expect(result.stdout).toMatch(/name\S*: Acme Corp/);
    const now = await service.group('acme');
    expect(now.token).toBe(group.token);
    expect(now.name).toBe('Acme Corp');
  });

  it('--tag twice sends group_tags with both; --no-tags sends an empty list', async () => {
    const { sb, service } = await setup('customer');
    await service.seed('acme', 'Acme');
    const tags = await runMain(['update', '--id', 'acme', '--tag', 'eu', '--tag', 'paying'], {
      sandbox: sb,
    });
    expect(tags.code, describeRun(tags)).toBe(0);
    const cleared = await runMain(['update', '--id', 'acme', '--no-tags'], { sandbox: sb });
    expect(cleared.code, describeRun(cleared)).toBe(0);
    expect(service.requests.map((r) => r.json)).toEqual([
      { provided_id: 'acme', group_tags: ['eu', 'paying'] },
      { provided_id: 'acme', group_tags: [] },
    ]);
  });

  it('the emulator keeps --tag, --email, --level and --parent: show --json answers them', async () => {
    const { sb, service } = await setup('customer');
    await service.seed('org', 'Org');
    await service.seed('acme', 'Acme');
    const result = await runMain(
      ['update', '--id', 'acme', '--tag', 'eu', '--email', 'a@b.c', '--level', 'Team'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    const parent = await runMain(['update', '--id', 'acme', '--parent', 'org'], { sandbox: sb });
    expect(parent.code, describeRun(parent)).toBe(0);
    const shown = await runMain(['show', '--id', 'acme', '--json'], { sandbox: sb });
    expect(shown.code, describeRun(shown)).toBe(0);
    expect(JSON.parse(shown.stdout).customer).toMatchObject({
      provided_id: 'acme',
      group_tags: ['eu'],
      emails: ['a@b.c'],
      hierarchy_level: 'Team',
    });
    const children = await runMain(['list', '--parent', 'org', '--json'], { sandbox: sb });
    expect(children.code, describeRun(children)).toBe(0);
    const listed: { provided_id: string }[] = JSON.parse(children.stdout);
    expect(listed.map((c) => c.provided_id)).toEqual(['acme']);
    const unknown = await runMain(['update', '--id', 'acme', '--parent', 'nobody'], {
      sandbox: sb,
    });
    expect(unknown.code, describeRun(unknown)).toBe(1);
    expect(unknown.stderr).toContain('parent_provided_id');
  });

  it('--new-id renames the group: the old id is gone, the token stays', async () => {
    const { sb, service } = await setup('customer');
    const group = await service.seed('acme', 'Acme');
    const result = await runMain(
      ['update', '--id', 'acme', '--new-id', 'acme-corp', '--field', 'provided_id'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe('acme-corp\n');
    expect(service.requests[0]?.json).toEqual({
      provided_id: 'acme',
      new_provided_id: 'acme-corp',
    });
    expect((await service.group('acme-corp')).token).toBe(group.token);
    const old = await runMain(['show', '--id', 'acme'], { sandbox: sb });
    expect(old.code, describeRun(old)).toBe(1);
  });

  it('nothing to change is exit 2, nothing sent', async () => {
    const { sb, service } = await setup('customer');
    const result = await runMain(['update', '--id', 'acme'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('nothing to update');
    expect(service.requests).toEqual([]);
  });

  it('an unknown id is exit 1 "no user group", and nothing is created', async () => {
    const { sb, service } = await setup('customer');
    const result = await runMain(['update', '--id', 'acmee', '--name', 'Acme'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain('error: no user group "acmee"');
    expect(result.stdout).toBe('');
    expect(service.createdIds()).toEqual([]);
    expect(service.answers.map((answer) => answer.status)).toEqual([404]);
  });

  it('history records the update as updated, by fingerprint only', async () => {
    const { sb, service } = await setup('customer');
    const group = await service.seed('acme', 'Acme');
    const result = await runMain(['update', '--id', 'acme', '--name', 'Acme Corp'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(0);
    const history = await runMain(['history', '--json'], { sandbox: sb });
    expect(history.code, describeRun(history)).toBe(0);
    const [event] = history.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(event).toMatchObject({
      user_group_id: 'acme',
      name: 'Acme Corp',
      outcome: 'updated',
      token_last4: group.token.slice(-4),
    });
    expect(history.stdout).not.toContain(group.token);
  });
});

describe('ugs update in the explo dialect', () => {
  it('posts user_group_id and the fields to update_user_group/', async () => {
    const { sb, service } = await setup('explo');
    await service.seed('acme', 'Acme');
    const result = await runMain(
      ['update', '--id', 'acme', '--name', 'Acme Corp', '--property', 'plan=pro', '--no-demo'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(sent(service)).toEqual([
      [
        'POST',
        '/api/update_user_group/',
        {
          user_group_id: 'acme',
          name: 'Acme Corp',
          properties: { plan: 'pro' },
          is_demo_group: false,
        },
      ],
    ]);
    // The vendor's create echoes the name sent, so the stored one shows in the answer only.
    expect(service.answers[0]?.body).toMatchObject({ user_group: { name: 'Acme Corp' } });
  });

  it('--new-id is exit 2, nothing sent: explo has no rename', async () => {
    const { sb, service } = await setup('explo');
    const result = await runMain(['update', '--id', 'acme', '--new-id', 'acme-corp'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('--new-id');
    expect(service.requests).toEqual([]);
  });
});

describe('ugs update in the interface dialect', () => {
  it('is exit 2 naming the dialects that offer it, nothing sent', async () => {
    const { sb, service } = await setup('interface');
    const result = await runMain(['update', '--id', 'acme', '--name', 'Acme'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('error: update is not part of the interface dialect');
    expect(result.stderr).toContain('offered by the explo and customer dialects only');
    expect(service.requests).toEqual([]);
  });

  it('update --help says where it is offered and that merging is undocumented', async () => {
    const result = await runMain(['update', '--help']);
    expect(result.code, describeRun(result)).toBe(0);
    const help = result.stdout.replace(/\s+/g, ' ');
    expect(help).toContain('Offered by the explo and customer dialects only');
    expect(help).toContain('The vendor does not document whether');
  });
});
