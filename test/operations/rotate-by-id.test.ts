/**
 * `rotate --id <id> --name <name>`: at a terminal the typo guard and then the confirmation
 * (naming the group, the profile and the service) come before anything is sent; the current
 * token is then read with Get User (recorded in the history as a get) and rotated. An id the
 * service did not know is created by that read: then nothing is rotated, exit 1, and the message
 * says so; in the explo dialect ugs deletes that new group again.
 */
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import {
  parseRotateFlags,
  type RotateOptions,
  runRotate,
} from '../../src/operations/rotate-token/command.js';
import {
  echoService,
  FakeService,
  groupResult,
  makeDeps,
  NEW_TOKEN,
  rejection,
  terminalIO,
} from '../kit/fakes.js';
import {
  describeRun,
  runMain,
  type Sandbox,
  type Service,
  serviceWithProfile,
  stripAnsi,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-rotate-by-id-9876';

function setup(): Promise<{ sb: Sandbox; service: Service }> {
  return serviceWithProfile(API_TOKEN);
}

describe('rotate --id --name (main in-process)', () => {
  it("reads the group's token with get, then rotates that token", async () => {
    const { sb, service } = await setup();
    const before = await service.seed('acme', 'Acme Corp');
    const result = await runMain(
      ['rotate', '--id', 'acme', '--name', 'Acme Corp', '--yes', '--field', 'token'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    const rotated = result.stdout.trim();
    expect(rotated).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated).not.toBe(before.token);
    expect((await service.group('acme')).token).toBe(rotated);
    expect(service.requests.map((r) => [r.method, r.json])).toEqual([
      ['GET', { name: 'Acme Corp', user_group_id: 'acme' }],
      ['POST', { current_token: before.token }],
    ]);
  });

  it('an id the service did not know: exit 1, nothing rotated, and it says the group was created now', async () => {
    const { sb, service } = await setup();
    const result = await runMain(
      ['rotate', '--id', 'acme-typo', '--name', 'Acme', '--yes', '--field', 'token'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /error: user group "acme-typo" did not exist and was created now \(the get that reads its token creates a new group\); nothing was rotated, and ugs cannot remove the new group/,
    );
    expect(service.requests.map((r) => r.method)).toEqual(['GET']);
    expect(service.createdIds()).toEqual(['acme-typo']);
    // The lookup is in the history as the get it was.
    const history = await runMain(['history', '--json'], { sandbox: sb });
    expect(events(history.stdout)).toEqual([['acme-typo', 'created']]);
  });

  it('the lookup is recorded as a found get, then the rotation', async () => {
    const { sb, service } = await setup();
    await service.seed('acme', 'Acme Corp');
    const result = await runMain(['rotate', '--id', 'acme', '--name', 'Acme Corp', '--yes'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(0);
    const history = await runMain(['history', '--json'], { sandbox: sb });
    // Newest first.
    expect(events(history.stdout)).toEqual([
      ['acme', 'rotated'],
      ['acme', 'found'],
    ]);
  });

  it('at a terminal the question comes before any request: it names the group, the profile and the base URL', async () => {
    const { sb, service } = await setup();
    await service.seed('acme', 'Acme Corp');
    // An empty stdin at a terminal answers no question: the run ends at the first one.
    const result = await runMain(['rotate', '--id', 'acme', '--name', 'Acme Corp'], {
      sandbox: sb,
      tty: true,
    });
    expect(result.code, describeRun(result)).toBe(130);
    // The prompt is fitted to the terminal's width and styled: read it as words.
    expect(stripAnsi(result.stderr).replace(/\s+/g, ' ')).toContain(
      `Rotate the token of user group "acme" on profile "default" at ${service.url.replace(/\/$/, '')}?`,
    );
    expect(service.requests).toEqual([]);
  });

  it('at a terminal an id that looks like a known one is asked about first, before any request', async () => {
    const { sb, service } = await setup();
    await service.seed('acme', 'Acme Corp');
    const known = await runMain(['get', '--id', 'acme', '--name', 'Acme Corp'], { sandbox: sb });
    expect(known.code, describeRun(known)).toBe(0);
    const sent = service.requests.length;
    const result = await runMain(['rotate', '--id', 'amce', '--name', 'Acme Corp'], {
      sandbox: sb,
      tty: true,
    });
    expect(result.code, describeRun(result)).toBe(130);
    expect(result.stderr).toContain('did you mean acme? rotate the token of amce?');
    expect(service.requests.length).toBe(sent);
    expect(service.createdIds()).toEqual([]);
  });
});

/** `[id, outcome]` of each event of `history --json`, newest first. */
function events(ndjson: string): [string | null, string][] {
  return ndjson
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { user_group_id: string | null; outcome: string })
    .map((event) => [event.user_group_id, event.outcome]);
}

describe('rotate --id of a group the lookup created, by dialect', () => {
  it('explo: the new group is deleted again, and the message says so; nothing rotated', async () => {
    const { sb, service } = await serviceWithProfile(
      API_TOKEN,
      { dialect: 'explo' },
      {
        dialect: 'explo',
      },
    );
    const result = await runMain(['rotate', '--id', 'amce', '--name', 'Acme', '--yes'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain(
      'error: no user group "amce" existed: the lookup of its token (a get, which creates a missing group) created one, and ugs deleted that new group again; nothing was rotated',
    );
    expect(service.requests.map((r) => [r.method, r.url])).toEqual([
      ['POST', '/api/create_user_group/'],
      ['DELETE', '/api/delete_user_group/'],
    ]);
    await expect(service.group('amce')).rejects.toThrow();
    const history = await runMain(['history', '--json'], { sandbox: sb });
    expect(events(history.stdout)).toEqual([
      ['amce', 'deleted'],
      ['amce', 'created'],
    ]);
  });

  it('customer: the read creates nothing; "no user group", nothing rotated', async () => {
    const { sb, service } = await serviceWithProfile(
      API_TOKEN,
      { dialect: 'customer' },
      {
        dialect: 'customer',
      },
    );
    const result = await runMain(['rotate', '--id', 'amce', '--yes'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain('no user group "amce"');
    expect(service.requests.map((r) => [r.method, r.url])).toEqual([
      ['POST', '/api/get_customer/'],
    ]);
    expect(service.createdIds()).toEqual([]);
  });

  it('without a terminal --yes is still required, and nothing is sent', async () => {
    const { sb, service } = await setup();
    const result = await runMain(['rotate', '--id', 'acme', '--name', 'Acme'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toMatch(/--yes is required/);
    expect(service.requests).toEqual([]);
  });

  it.each([
    [['--id', 'acme'], /--id needs --name/],
    [['--name', 'Acme'], /--name needs --id/],
    [
      ['--id', 'acme', '--name', 'A', '--current-token', 'tok'],
      /either --id\/--name or --current-token/,
    ],
    [['--id', 'acme ', '--name', 'A'], /--id "acme " has leading or trailing whitespace/],
    [
      ['--id', 'acme', '--name', 'A', '--from', 'x.csv'],
      /--from cannot be combined with --id, --name/,
    ],
  ])('%j is a usage error (exit 2), nothing sent', async (args, message) => {
    const { sb, service } = await setup();
    const result = await runMain(['rotate', ...args, '--yes'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(service.requests).toEqual([]);
  });
});

describe('rotate --id at a terminal', () => {
  const byId = (overrides: Partial<RotateOptions> = {}): RotateOptions => ({
    ...parseRotateFlags({ id: 'acme', name: 'Acme' }),
    ...overrides,
  });
  const service = () => {
    const found = echoService(false);
    return new FakeService({
      get: (request) => found.getUser(request),
      rotate: () => groupResult({ token: NEW_TOKEN, provided_id: 'acme' }, { success: 1 }),
    });
  };

  it('one question, naming the group, profile and base URL, before the read; yes reads and rotates', async () => {
    const fake = service();
    const deps = makeDeps({
      io: terminalIO(),
      service: fake,
      prompts: [
        [
          'confirm',
          'Rotate the token of user group "acme" on profile "default" at https://ugs.example.com?',
          true,
        ],
      ],
    });
    await runRotate(byId(), deps);
    deps.prompter.assertDone();
    expect(deps.prompter.asked).toHaveLength(1);
    expect(fake.gets).toEqual([{ name: 'Acme', user_group_id: 'acme' }]);
    expect(fake.rotations).toEqual(['ug-token-aaaaaaaaaaaa']);
    expect(deps.io.stdout.text).toContain(NEW_TOKEN);
  });

  it('declining sends nothing (130)', async () => {
    const fake = service();
    const deps = makeDeps({
      io: terminalIO(),
      service: fake,
      prompts: [['confirm', 'user group "acme"', false]],
    });
    const error = await rejection(runRotate(byId(), deps));
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as Error).message).toMatch(/nothing was sent/);
    expect(fake.gets).toEqual([]);
    expect(fake.rotations).toEqual([]);
    expect(deps.targets).toEqual([]);
  });

  it('a new group is not rotated: exit 1 after the one question', async () => {
    const fake = new FakeService({ get: (request) => echoService(true).getUser(request) });
    const deps = makeDeps({
      io: terminalIO(),
      service: fake,
      prompts: [['confirm', 'user group "acme"', true]],
    });
    const error = await rejection(runRotate(byId(), deps));
    expect(error).toMatchObject({ exitCode: 1 });
    expect((error as Error).message).toMatch(/ugs cannot remove the new group/);
    expect(deps.prompter.asked).toHaveLength(1);
    expect(fake.rotations).toEqual([]);
  });

  it('an answer that does not say whether the group existed asks again, naming the token read', async () => {
    const fake = new FakeService({
      get: (request) => echoService(null).getUser(request),
      rotate: () => groupResult({ token: NEW_TOKEN, provided_id: 'acme' }, { success: 1 }),
    });
    const deps = makeDeps({
      io: terminalIO(),
      service: fake,
      prompts: [
        ['confirm', 'user group "acme"', true],
        ['confirm', 'did not say whether user group "acme" existed', false],
      ],
    });
    const error = await rejection(runRotate(byId(), deps));
    expect(error).toBeInstanceOf(CancelledError);
    expect(deps.prompter.asked[1]).toContain('…aaaa');
    expect(fake.rotations).toEqual([]);
  });
});
