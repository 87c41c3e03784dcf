/**
 * A found group is shown as the service vouches for it: Get User echoes the
 * request's name and properties (rules 1 and 3), so for an existing group the table does not
 * show them as the group's values; `--json` stays the server's text.
 */
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  json as jsonReply,
  runMain,
  type Sandbox,
  type Service,
  serviceWithProfile,
  stripAnsi,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-found-group-4321';
const ARGS = ['get', '--id', 'café-brûlé', '--name', 'Cafe Brule SA', '--property', 'plan=free'];

async function setup(): Promise<{ sb: Sandbox; service: Service }> {
  const { sb, service } = await serviceWithProfile(API_TOKEN);
  // The group as it was stored: another name, and a plan.
  await runMain(['get', '--id', 'café-brûlé', '--name', 'Café Brûlé', '--property', 'plan=pro'], {
    sandbox: sb,
  });
  return { sb, service };
}

describe('get of an existing group', () => {
  it('into a pipe: no name or properties line; the note says they were sent, not applied', async () => {
    const { sb, service } = await setup();
    const result = await runMain(ARGS, { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    const token = (await service.group('café-brûlé')).token;
    expect(result.stdout).toMatch(/^provided_id\tcafé-brûlé$/m);
    expect(result.stdout).toContain(`token\t${token}`);
    expect(result.stdout).not.toMatch(/^name\t/m);
    expect(result.stdout).not.toMatch(/^properties\t/m);
    expect(result.stdout).not.toContain('Cafe Brule SA');
    expect(result.stdout).not.toContain('free');
    expect(result.stderr).toMatch(/Found user group café-brûlé/);
    expect(result.stderr).toMatch(
      /note: user group café-brûlé already existed: .*sent, not applied/,
    );
  });

  it('at a terminal: the box shows neither the name nor the properties sent', async () => {
    const { sb } = await setup();
    const result = await runMain(ARGS, { sandbox: sb, tty: true, columns: 100 });
    expect(result.code, describeRun(result)).toBe(0);
    const screen = stripAnsi(result.stdout);
    expect(screen).toMatch(/│ provided_id │ café-brûlé/);
    expect(screen).not.toMatch(/│ name /);
    expect(screen).not.toContain('Cafe Brule SA');
    expect(screen).not.toContain('{"plan":"free"}');
  });

  it('--json stays the server text, the echo included', async () => {
    const { sb } = await setup();
    const json = await runMain([...ARGS, '--json'], { sandbox: sb });
    expect(json.code, describeRun(json)).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      new_user_group: false,
      user_group: { name: 'Cafe Brule SA', properties: { plan: 'free' } },
    });
  });

  it('a value that is no echo of the request (a service that returns what it stores) is shown', async () => {
    const { sb, service } = await setup();
    service.fail(
      jsonReply(200, {
        success: 1,
        new_user_group: false,
        user_group: {
          provided_id: 'café-brûlé',
          name: 'Café Brûlé',
          token: 'ugt_stored',
          properties: { plan: 'free' },
        },
      }),
    );
    const result = await runMain(ARGS, { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toMatch(/^name\tCafé Brûlé$/m);
    // The properties equal the ones sent: an echo for all ugs can tell.
    expect(result.stdout).not.toMatch(/^properties\t/m);
  });

  it('a new group still shows its name and properties: they are what was stored', async () => {
    const { sb } = await setup();
    const result = await runMain(
      ['get', '--id', 'new-one', '--name', 'New One', '--property', 'plan=free'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toMatch(/^name\tNew One$/m);
    expect(result.stdout).toMatch(/^properties\t\{"plan":"free"\}$/m);
  });
});
