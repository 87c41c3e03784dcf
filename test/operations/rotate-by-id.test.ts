/**
 * `rotate --id <id> --name <name>`: the current token is read with Get User,
 * then rotated after the usual confirmation, which names the group. An id the service did not
 * know is created by that read: then nothing is rotated, exit 1, and the message says so.
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
      /error: user group "acme-typo" did not exist and was created now \(the get that reads its token creates a new group\); nothing was rotated/,
    );
    expect(service.requests.map((r) => r.method)).toEqual(['GET']);
    expect(service.createdIds()).toEqual(['acme-typo']);
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

  it('the confirmation names the group and the last 4 of the token read; yes rotates it', async () => {
    const fake = service();
    const deps = makeDeps({
      io: terminalIO(),
      service: fake,
      prompts: [['confirm', 'Rotate the token of user group "acme" (ending in …aaaa)?', true]],
    });
    await runRotate(byId(), deps);
    deps.prompter.assertDone();
    expect(fake.gets).toEqual([{ name: 'Acme', user_group_id: 'acme' }]);
    expect(fake.rotations).toEqual(['ug-token-aaaaaaaaaaaa']);
    expect(deps.io.stdout.text).toContain(NEW_TOKEN);
  });

  it('declining rotates nothing (130)', async () => {
    const fake = service();
    const deps = makeDeps({
      io: terminalIO(),
      service: fake,
      prompts: [['confirm', 'user group "acme"', false]],
    });
    const error = await rejection(runRotate(byId(), deps));
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as Error).message).toMatch(/nothing was rotated/);
    expect(fake.rotations).toEqual([]);
  });

  it('a new group is not offered for rotation at all', async () => {
    const fake = new FakeService({ get: (request) => echoService(true).getUser(request) });
    const deps = makeDeps({ io: terminalIO(), service: fake });
    const error = await rejection(runRotate(byId(), deps));
    expect(error).toMatchObject({ exitCode: 1 });
    expect(deps.prompter.asked).toEqual([]);
    expect(fake.rotations).toEqual([]);
  });
});
