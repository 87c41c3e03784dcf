/**
 * `ugs delete`: the vendor's delete (customer: DELETE delete_customer/, explo: DELETE
 * delete_user_group/, each with `{current_token}`), by token or by `--id` (its token read
 * first); confirmed at a terminal, `--yes` without one; refused (exit 2, nothing sent) in the
 * interface dialect; 404 is exit 1, a lost answer exit 5 with the command that checks.
 */
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import { parseDeleteFlags, runDelete } from '../../src/operations/delete-user-group/command.js';
import { fakeService, groupResult, makeDeps, rejection, terminalIO } from '../kit/fakes.js';
import {
  describeRun,
  runMain,
  type Sandbox,
  type Service,
  serviceWithProfile,
} from '../kit/index.js';
import { forwardTo, type Reply, text } from '../kit/server.js';

const API_TOKEN = 'apitoken-delete-test-13579bdf';

function setup(
  dialect: 'interface' | 'explo' | 'customer',
): Promise<{ sb: Sandbox; service: Service }> {
  return serviceWithProfile(API_TOKEN, { dialect }, dialect === 'interface' ? {} : { dialect });
}

/** The request reaches the service (the group is deleted), and a gateway's 502 comes back. */
function deletedThenLost(service: Service): Reply {
  const forward = forwardTo(service.emulator.url, service.answers);
  const lost = text(502, '<html><body>502 Bad Gateway</body></html>', 'text/html');
  return async (ctx) => {
    const discarded = { writeHead: () => discarded, end: () => discarded };
    await forward({ ...ctx, res: discarded as unknown as typeof ctx.res });
    await lost(ctx);
  };
}

const sent = (service: Service) => service.requests.map((r) => [r.method, r.url, r.json]);

describe.each(['customer', 'explo'] as const)('ugs delete in the %s dialect', (dialect) => {
  const path = dialect === 'customer' ? '/api/delete_customer/' : '/api/delete_user_group/';

  it('by token from stdin with --yes: DELETE with {current_token}, the group is gone', async () => {
    const { sb, service } = await setup(dialect);
    const group = await service.seed('acme', 'Acme');
    const result = await runMain(['delete', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      stdin: `${group.token}\n`,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(sent(service)).toEqual([['DELETE', path, { current_token: group.token }]]);
    expect(result.stdout).toContain('deleted');
    expect(result.stdout + result.stderr).not.toContain(group.token);
    await expect(service.group('acme')).rejects.toThrow();
  });

  it('`--current-token -` reads stdin too; --json prints the answer as sent', async () => {
    const { sb, service } = await setup(dialect);
    const group = await service.seed('acme', 'Acme');
    const result = await runMain(['delete', '--current-token', '-', '--yes', '--json'], {
      sandbox: sb,
      stdin: group.token,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ success: 1 });
  });

  it('`ugs delete -` reads the token from stdin; with a token flag as well it is exit 2', async () => {
    const { sb, service } = await setup(dialect);
    const group = await service.seed('acme', 'Acme');
    const both = await runMain(['delete', '-', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      stdin: group.token,
    });
    expect(both.code, describeRun(both)).toBe(2);
    expect(both.stderr).toContain('give the token once');
    expect(service.requests).toEqual([]);
    const result = await runMain(['delete', '-', '--yes', '--field', 'outcome'], {
      sandbox: sb,
      stdin: `${group.token}\n`,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe('deleted\n');
    expect(service.requests.map((r) => r.json)).toEqual([{ current_token: group.token }]);
  });

  it('an unknown token is exit 1 "no group has that token"', async () => {
    const { sb, service } = await setup(dialect);
    const result = await runMain(['delete', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      stdin: 'no-such-token-0000',
    });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain('error: no group has that token');
    expect(result.stdout).toBe('');
    expect(service.answers.map((answer) => answer.status)).toEqual([404]);
  });

  it('without a terminal --yes is required: exit 2, nothing sent', async () => {
    const { sb, service } = await setup(dialect);
    for (const argv of [
      ['delete', '--current-token-stdin'],
      ['delete', '--id', 'acme'],
    ]) {
      const result = await runMain(argv, { sandbox: sb, stdin: 'some-token-1234' });
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stderr).toContain('--yes is required');
    }
    expect(service.requests).toEqual([]);
  });

  it('at a terminal the confirmation names the group; declining is exit 130, nothing deleted', async () => {
    const { sb, service } = await setup(dialect);
    const group = await service.seed('acme', 'Acme');
    const result = await runMain(['delete', '--id', 'acme'], {
      sandbox: sb,
      tty: true,
      stdin: 'n\n',
    });
    expect(result.code, describeRun(result)).toBe(130);
    if (dialect === 'customer') {
      // get_customer/ creates nothing: the token is read first, and the question names it.
      expect(result.stderr).toContain(
        `Delete user group "acme" (token ending in …${group.token.slice(-4)})?`,
      );
      expect(service.requests.map((r) => r.method)).not.toContain('DELETE');
    } else {
      // explo's only read is a get-or-create: the question comes before anything is sent.
      expect(result.stderr).toContain(
        `Delete user group "acme" on profile "default" at ${service.url.replace(/\/$/, '')}?`,
      );
      expect(service.requests).toEqual([]);
    }
    expect((await service.group('acme')).token).toBe(group.token);
  });

  it('--id reads the token first, then deletes that token', async () => {
    const { sb, service } = await setup(dialect);
    const group = await service.seed('acme', 'Acme');
    const result = await runMain(['delete', '--id', 'acme', '--yes', '--field', 'user_group_id'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe('acme\n');
    const deletes = service.requests.filter((r) => r.method === 'DELETE');
    expect(deletes.map((r) => [r.url, r.json])).toEqual([[path, { current_token: group.token }]]);
    await expect(service.group('acme')).rejects.toThrow();
  });

  it('a delete sent with no usable answer is exit 5 with the command that checks', async () => {
    const { sb, service } = await setup(dialect);
    const { token } = await service.seed('acme', 'Acme');
    service.fail(deletedThenLost(service));
    const result = await runMain(['delete', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      stdin: token,
    });
    expect(result.code, describeRun(result)).toBe(5);
    expect(result.stderr).toContain('the user group may or may not have been deleted');
    expect(result.stderr).toContain('ugs show --id');
    expect(result.stderr).not.toContain(token);
    // It was deleted: the check the hint gives finds no group.
    await expect(service.group('acme')).rejects.toThrow();
  });

  it('history records the delete by fingerprint only, with the id when known', async () => {
    const { sb, service } = await setup(dialect);
    const group = await service.seed('acme', 'Acme');
    const result = await runMain(['delete', '--id', 'acme', '--yes'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    const history = await runMain(['history', '--json'], { sandbox: sb });
    expect(history.code, describeRun(history)).toBe(0);
    const events = history.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.find((event) => event.outcome === 'deleted')).toMatchObject({
      user_group_id: 'acme',
      sent_last4: group.token.slice(-4),
      token_last4: null,
    });
    expect(history.stdout).not.toContain(group.token);
  });
});

describe('ugs delete --id in the customer dialect', () => {
  it('an unknown id is exit 1 "no user group", nothing created or deleted', async () => {
    const { sb, service } = await setup('customer');
    const result = await runMain(['delete', '--id', 'acmee', '--yes'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain('error: no user group "acmee"');
    expect(sent(service)).toEqual([['POST', '/api/get_customer/', { provided_id: 'acmee' }]]);
    expect(service.createdIds()).toEqual([]);
  });

  it('a lost answer names `ugs show --id <id>` as the check', async () => {
    const { sb, service } = await setup('customer');
    await service.seed('acme', 'Acme');
    service.fail(forwardTo(service.emulator.url, service.answers), deletedThenLost(service));
    const result = await runMain(['delete', '--id', 'acme', '--yes'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(5);
    expect(result.stderr).toContain('check with `ugs show --id acme`');
    const check = await runMain(['show', '--id', 'acme'], { sandbox: sb });
    expect(check.code, describeRun(check)).toBe(1);
    expect(check.stderr).toContain('no user group "acme"');
  });
});

describe('ugs delete --id in the explo dialect', () => {
  it('an id the service did not know: its lookup created it, ugs deletes it again, exit 1', async () => {
    const { sb, service } = await setup('explo');
    const result = await runMain(['delete', '--id', 'acmee', '--yes'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain('error: no user group "acmee" existed');
    expect(result.stderr).toContain('ugs deleted that new group again');
    expect(service.requests.map((r) => [r.method, r.url])).toEqual([
      ['POST', '/api/create_user_group/'],
      ['DELETE', '/api/delete_user_group/'],
    ]);
    expect(service.createdIds()).toEqual(['acmee']);
    await expect(service.group('acmee')).rejects.toThrow();
  });
});

describe('ugs delete --id in the explo dialect, at a terminal', () => {
  it('one question before anything is sent; yes reads the token and deletes, asking nothing more', async () => {
    const calls: string[] = [];
    const service = fakeService({
      getUser: (request) => {
        calls.push('getUser');
        return groupResult({ provided_id: request.user_group_id }, { new_user_group: false });
      },
      deleteUserGroup: (request) => {
        calls.push(`deleteUserGroup ${request.current_token}`);
        return { status: 200, body: { success: 1 }, text: '{"success":1}' };
      },
    });
    const deps = makeDeps({
      io: terminalIO(),
      service,
      settings: { dialect: 'explo' },
      prompts: [['confirm', 'Delete user group "acme" on profile "default" at https://', true]],
    });
    await runDelete(parseDeleteFlags({ id: 'acme' }), deps);
    deps.prompter.assertDone();
    expect(calls).toEqual(['getUser', 'deleteUserGroup ug-token-aaaaaaaaaaaa']);
    expect(deps.io.stdout.text).toContain('Deleted user group acme');
  });

  it('declining sends nothing (130)', async () => {
    const service = fakeService({});
    const deps = makeDeps({
      io: terminalIO(),
      service,
      settings: { dialect: 'explo' },
      prompts: [['confirm', 'Delete user group "acme"', false]],
    });
    const error = await rejection(runDelete(parseDeleteFlags({ id: 'acme' }), deps));
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as Error).message).toBe('delete cancelled; nothing was sent');
    expect(service.calls).toEqual([]);
  });
});

describe('ugs delete in the interface dialect', () => {
  it('is exit 2 naming the dialects that offer it, nothing sent', async () => {
    const { sb, service } = await setup('interface');
    const result = await runMain(['delete', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      stdin: 'some-token-1234',
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('error: delete is not part of the interface dialect');
    expect(result.stderr).toContain('offered by the explo and customer dialects only');
    expect(service.requests).toEqual([]);
  });

  it('delete --help says where it is offered', async () => {
    const result = await runMain(['delete', '--help']);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout.replace(/\s+/g, ' ')).toContain(
      'Offered by the explo and customer dialects only',
    );
  });
});

describe('whois of a deleted group', () => {
  it('a token whose group was deleted by id: deleted, when and by whom', async () => {
    const { sb, service } = await setup('customer');
    await service.seed('acme', 'Acme');
    const shown = await runMain(['show', '--id', 'acme', '--field', 'token'], { sandbox: sb });
    const token = shown.stdout.trim();
    const deleted = await runMain(['delete', '--id', 'acme', '--yes'], { sandbox: sb });
    expect(deleted.code, describeRun(deleted)).toBe(0);
    const whois = await runMain(['whois', '-'], { sandbox: sb, stdin: token });
    expect(whois.code, describeRun(whois)).toBe(0);
    expect(whois.stdout).toContain('belonged to user group "acme"');
    expect(whois.stdout).toMatch(
      /\n {2}deleted \d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?Z? by \S+@\S+ \(profile default\)/,
    );
    const json = await runMain(['whois', '-', '--json'], { sandbox: sb, stdin: token });
    const answer = JSON.parse(json.stdout) as { groups: { status: string }[] };
    expect(answer.groups.map((group) => group.status)).toEqual(['deleted']);
  });

  it('a token deleted by token, seen before with its group: the group is named deleted', async () => {
    const { sb, service } = await setup('explo');
    await service.seed('acme', 'Acme');
    const got = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--field', 'token'], {
      sandbox: sb,
    });
    const token = got.stdout.trim();
    const deleted = await runMain(['delete', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      stdin: token,
    });
    expect(deleted.code, describeRun(deleted)).toBe(0);
    const whois = await runMain(['whois', '-'], { sandbox: sb, stdin: token });
    expect(whois.code, describeRun(whois)).toBe(0);
    expect(whois.stdout).toContain('belonged to user group "acme"');
    expect(whois.stdout).toMatch(/\n {2}deleted .* by \S+@\S+/);
    // Said once, under its group.
    expect(whois.stdout).not.toContain('its user group was deleted');
  });

  it('a token only ever sent in a delete: its user group was deleted, when and by whom', async () => {
    const { sb, service } = await setup('customer');
    const { token } = await service.seed('acme', 'Acme');
    const deleted = await runMain(['delete', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      stdin: token,
    });
    expect(deleted.code, describeRun(deleted)).toBe(0);
    const whois = await runMain(['whois', '-'], { sandbox: sb, stdin: token });
    expect(whois.code, describeRun(whois)).toBe(0);
    expect(whois.stdout).toMatch(/^its user group was deleted .* by \S+@\S+ \(profile default\)/);
  });
});
