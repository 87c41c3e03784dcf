/**
 * `ugs login`, `ugs get` and `ugs rotate` at a real terminal: the built binary on a
 * pseudo-terminal (node-pty), a person's keys written to it, the screen read back.
 * The service is the bundled emulator.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ANSI,
  describeRun,
  type InProcessEmulator,
  killAllPtys,
  loggedInTo,
  makeSandbox,
  type PtySession,
  runUgs,
  STACK_LINE,
  startEmulator,
  startPty,
  stripAnsi,
  tableToken,
  tempDir,
  writeConfig,
} from '../kit/index.js';

let emulator: InProcessEmulator;
let customerToken: string;

beforeAll(async () => {
  emulator = await startEmulator();
  customerToken = emulator.tokenFor('Customer');
});

afterEach(() => killAllPtys());

afterAll(() => emulator?.close());

function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

const loggedIn = () => loggedInTo(emulator);

async function expectExit(session: PtySession, code: number): Promise<string> {
  const { code: actual } = await session.finish();
  const screen = session.text();
  expect(actual, `exit code of ugs ${session.args.join(' ')}; screen:\n${screen}`).toBe(code);
  expect(screen, 'no stack trace on the screen').not.toMatch(STACK_LINE);
  return screen;
}

describe('ugs login at a terminal', () => {
  it('prompts for the base URL and a masked API token, then saves the profile', async () => {
    const sandbox = makeSandbox();
    const session = startPty(sandbox, ['login']);
    await session.answer('Base URL of the User Group Service', emulator.url);
    await session.waitFor('API token');
    await session.type(customerToken);
    // Each key shows as a mask character while typing, never as itself.
    await session.waitFor('*'.repeat(customerToken.length));
    await session.type('\r');
    const screen = await expectExit(session, 0);

    expect(session.raw).not.toContain(customerToken);
    expect(screen).not.toContain(customerToken.slice(0, 8));
    expect(screen).toMatch(/Logged in to .* as profile "default"/);
    expect(JSON.parse(readFileSync(sandbox.configPath, 'utf8'))).toEqual({
      profiles: { default: { baseUrl: emulator.url, apiToken: customerToken } },
    });
    expect(statSync(sandbox.configPath).mode & 0o777).toBe(0o600);

    // The saved profile works.
    const get = await runUgs(['get', '--id', uniqueId('login'), '--name', 'x', '--json'], {
      sandbox,
    });
    expect(get.code, describeRun(get)).toBe(0);
    expect(JSON.parse(get.stdout).success).toBe(1);
  });

  it('Ctrl+C at the token prompt exits 130, with no stack trace and nothing saved', async () => {
    const sandbox = makeSandbox();
    const session = startPty(sandbox, ['login']);
    await session.answer('Base URL of the User Group Service', emulator.url);
    await session.waitFor('API token');
    await session.type('abc');
    await session.type('\x03');
    const screen = await expectExit(session, 130);
    // Ctrl+C closes the prompt's input too: it must still be told as Ctrl+C, not end of input.
    expect(screen).toMatch(/error: cancelled \(Ctrl\+C\) at the prompt; nothing was saved or sent/);
    expect(screen).not.toContain('Ctrl+D');
    expect(existsSync(sandbox.configPath)).toBe(false);
  });
});

describe('ugs get at a terminal', () => {
  it('prompts for id and name, offers mapping and properties, and prints the table', async () => {
    const sandbox = await loggedIn();
    const id = uniqueId('tty');
    const session = startPty(sandbox, ['get']);
    await session.answer('User group id', id);
    await session.answer('User group name', 'Acme Corp');
    await session.answer('Data source mapping', 'sales=acme_db');
    await session.answer('Data source mapping', '');
    await session.answer('Property', 'plan=pro');
    await session.answer('Property', '');
    const screen = await expectExit(session, 0);

    const rest = session.rest();
    expect(rest).toContain(`Created user group ${id}`);
    expect(rest).toMatch(new RegExp(`provided_id\\W+${id}\\W`));
    expect(rest).toMatch(/name\W+Acme Corp\W/);
    expect(rest).toContain('{"plan":"pro"}');
    const token = tableToken(rest);
    expect(token, screen).toMatch(/^[0-9a-f]{64}$/);
    // Colour on a terminal (the table's headline at least).
    expect(session.raw).toMatch(ANSI);

    // The same group is found (same token); name and properties echo this request (Get User
    // rules 1 and 3), so the properties sent above show only in the table above.
    const again = await runUgs(['get', '--id', id, '--name', 'other', '--json'], { sandbox });
    expect(again.code, describeRun(again)).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      new_user_group: false,
      user_group: { name: 'other', token, properties: null },
    });
  });

  it('checks each pair as it is typed and lets the person correct it', async () => {
    const sandbox = await loggedIn();
    const id = uniqueId('tty-fix');
    const session = startPty(sandbox, ['get', '--id', id]);
    await session.answer('User group name', 'Fix Corp');
    await session.waitFor('Data source mapping');
    await session.type('no-equals-sign');
    await session.type('\r');
    // The error shows under the prompt; the prompt stays open.
    await session.waitFor(/\n[^\n]*>\s*\S/);
    await session.type('\x7f'.repeat('no-equals-sign'.length));
    await session.type('sales=fix_db\r');
    await session.waitFor(/[✔√]/);
    await session.answer('Data source mapping', '');
    await session.answer('Property', '');
    await expectExit(session, 0);
    const rest = session.rest();
    expect(rest).toContain(`Created user group ${id}`);
    // No properties were given: the emulator answers `null`, shown dimmed on a colour terminal,
    // as `null` and not as the escaped text of its colour codes.
    expect(session.raw).toMatch(ANSI);
    expect(rest).toMatch(/properties\W+null\W/);
    expect(rest).not.toContain('\\u001b');
  });

  it('asks nothing when --id and --name are given; NO_COLOR leaves no escapes on the terminal', async () => {
    const sandbox = await loggedIn();
    const id = uniqueId('tty-plain');
    const session = startPty(sandbox, ['get', '--id', id, '--name', 'Plain'], {
      env: { NO_COLOR: '1' },
    });
    const screen = await expectExit(session, 0);
    expect(screen).toContain(`Created user group ${id}`);
    expect(screen).not.toMatch(/\?\s/);
    expect(session.raw).not.toMatch(ANSI);
  });

  it('Ctrl+C at the id prompt exits 130 with no stack trace, and nothing is created', async () => {
    const sandbox = await loggedIn();
    const session = startPty(sandbox, ['get']);
    await session.waitFor('User group id');
    await session.type('half-typed');
    await session.type('\x03');
    const screen = await expectExit(session, 130);
    expect(screen).toMatch(/error: cancelled \(Ctrl\+C\) at the prompt/);
    expect(screen).not.toContain('Ctrl+D');
    expect(screen).not.toMatch(/Created user group/);
    const check = await runUgs(['get', '--id', 'half-typed', '--name', 'x', '--json'], { sandbox });
    expect(JSON.parse(check.stdout).new_user_group).toBe(true);
  });

  it('with CI set or --no-input, a terminal gets no prompt: a usage error naming the flag', async () => {
    const sandbox = await loggedIn();
    const ci = startPty(sandbox, ['get', '--name', 'x'], { env: { CI: 'true' } });
    const noInput = startPty(sandbox, ['get', '--id', 'x', '--no-input']);
    const ciScreen = stripAnsi(await expectExit(ci, 2));
    const noInputScreen = stripAnsi(await expectExit(noInput, 2));
    expect(ciScreen).toMatch(/error: .*--id/);
    expect(noInputScreen).toMatch(/error: .*--name/);
    for (const screen of [ciScreen, noInputScreen]) expect(screen).not.toMatch(/User group/);
  });
});

describe('ugs status at a terminal', () => {
  it('shows what is missing dimmed, not as escaped colour codes', async () => {
    const session = startPty(makeSandbox(), ['status']);
    const screen = await expectExit(session, 3);
    expect(session.raw).toMatch(ANSI);
    expect(screen).toMatch(/token source\W+\(none\)\W/);
    expect(screen).not.toContain('\\u001b');
    expect(screen).toMatch(/error: no API token/);
  });
});

describe('ugs rotate at a terminal', () => {
  it('prompts for the token (masked), asks to confirm, and rotates; declining sends nothing', async () => {
    const sandbox = await loggedIn();
    const id = uniqueId('tty-rot');
    const created = await runUgs(['get', '--id', id, '--name', id, '--field', 'token'], {
      sandbox,
    });
    expect(created.code, describeRun(created)).toBe(0);
    const token = created.stdout.trim();

    const declined = startPty(sandbox, ['rotate']);
    await declined.answer('Current user group token', token);
    await declined.waitFor(`…${token.slice(-4)}`);
    await declined.type('n\r');
    await expectExit(declined, 130);
    expect(declined.raw).not.toContain(token);

    const session = startPty(sandbox, ['rotate']);
    await session.answer('Current user group token', token);
    await session.answer(`…${token.slice(-4)}`, 'y');
    await expectExit(session, 0);
    expect(session.raw).not.toContain(token);
    const rest = session.rest();
    expect(rest).toContain(`Rotated token of user group ${id}`);
    const newToken = /New token: ([0-9a-f]{64})/.exec(rest)?.[1];
    expect(newToken, rest).toMatch(/^[0-9a-f]{64}$/);
    expect(newToken).not.toBe(token);

    const now = await runUgs(['get', '--id', id, '--name', id, '--field', 'token'], { sandbox });
    expect(now.stdout.trim()).toBe(newToken);
  });
});

describe('ugs rotate --id at a terminal', () => {
  it('asks first, naming the group, the profile and the base URL; declining sends nothing', async () => {
    const sandbox = await loggedIn();
    const id = uniqueId('tty-rot-id');
    const session = startPty(sandbox, ['rotate', '--id', id, '--name', id], { columns: 200 });
    await session.waitFor(
      `Rotate the token of user group "${id}" on profile "default" at ${emulator.url.replace(/\/$/, '')}?`,
    );
    await session.type('n\r');
    const screen = await expectExit(session, 130);
    expect(screen).toContain('rotation cancelled; nothing was sent');
    // Had the lookup been sent, it would have created the group: it is new now.
    const get = await runUgs(['get', '--id', id, '--name', id, '--json'], { sandbox });
    expect(get.code, describeRun(get)).toBe(0);
    expect(JSON.parse(get.stdout).new_user_group).toBe(true);
  });
});

describe('a production profile at a terminal', () => {
  /** `staging` and `prod` (marked production), both at the emulator. */
  function productionSandbox() {
    const sandbox = makeSandbox();
    const profile = { baseUrl: emulator.url, apiToken: customerToken };
    writeConfig(sandbox, {
      profiles: { staging: profile, prod: { ...profile, production: true } },
    });
    return sandbox;
  }
  const where = () => `on production profile prod (${emulator.url})?`;

  it('get with every flag given asks "get or create" naming prod and its URL, default no', async () => {
    const sandbox = productionSandbox();
    const id = uniqueId('tty-prod');
    const argv = ['get', '--id', id, '--name', 'Initech', '-p', 'prod'];
    const declined = startPty(sandbox, argv, { columns: 200 });
    await declined.waitFor(`Get or create user group ${id} ${where()}`);
    await declined.waitFor('(y/N)');
    await declined.type('\r');
    const screen = await expectExit(declined, 130);
    expect(screen).toContain('not sent: nothing was changed on prod');
    // Nothing reached the service: no history was written.
    expect(existsSync(join(sandbox.configDir, 'history.ndjson'))).toBe(false);

    const accepted = startPty(sandbox, argv, { columns: 200 });
    await accepted.answer(`Get or create user group ${id} ${where()}`, 'y');
    await expectExit(accepted, 0);
    expect(accepted.rest()).toContain(`Created user group ${id}`);

    // --yes: no question.
    const forced = startPty(sandbox, [...argv, '--yes'], { columns: 200 });
    await expectExit(forced, 0);
    expect(forced.text()).not.toContain('production profile');
  });

  it('rotate names prod and its URL in its question; get --from asks once for the run', async () => {
    const sandbox = productionSandbox();
    const id = uniqueId('tty-prod-rot');
    const created = await runUgs(
      ['get', '--id', id, '--name', id, '--field', 'token', '-p', 'prod', '--yes'],
      { sandbox },
    );
    expect(created.code, describeRun(created)).toBe(0);
    const token = created.stdout.trim();
    const rotate = startPty(sandbox, ['rotate', '-p', 'prod'], { columns: 200 });
    await rotate.answer('Current user group token', token);
    await rotate.waitFor(
      `Rotate the token ending in …${token.slice(-4)} on prod (${emulator.url})?`,
    );
    await rotate.type('n\r');
    await expectExit(rotate, 130);

    const file = join(tempDir('prod-tty'), 'groups.csv');
    writeFileSync(file, `user_group_id,name\n${uniqueId('a')},A\n${uniqueId('b')},B\n`);
    const bulk = startPty(sandbox, ['get', '--from', file, '-p', 'prod'], { columns: 200 });
    await bulk.waitFor(`Get or create 2 user groups ${where()}`);
    await bulk.type('n\r');
    await expectExit(bulk, 130);
  });
});

describe('ugs get --from at a terminal', () => {
  it('asks before sending rows whose columns would be ignored; no (the default) sends nothing', async () => {
    const sandbox = await loggedIn();
    const ids = [uniqueId('tty-col'), uniqueId('tty-col')];
    const from = join(sandbox.root, 'groups.csv');
    writeFileSync(
      from,
      `User Group ID;Name;Plan;Region\n${ids[0]};A;pro;eu\n${ids[1]};B;free;us\n`,
    );

    const declined = startPty(sandbox, ['get', '--from', from]);
    // The note with each column's fix, then the question, before anything is sent.
    await declined.waitFor('--column Plan=properties.Plan maps it');
    await declined.waitFor('2 columns would be ignored: "Plan", "Region". Send anyway?');
    await declined.type('\r');
    const screen = await expectExit(declined, 130);
    expect(screen).toContain('error: cancelled; nothing was sent');

    const accepted = startPty(sandbox, ['get', '--from', from]);
    await accepted.answer('Send anyway?', 'y');
    await expectExit(accepted, 0);
    // Created now: the declined run had made neither group.
    for (const id of ids) expect(accepted.rest()).toMatch(new RegExp(`${id}\\s+created`));
  });
});

// A guard for the helper itself: a wait that cannot succeed fails fast instead of hanging.
it('the pty helper reports a prompt that never comes instead of hanging', async () => {
  const sandbox = makeSandbox();
  const session = startPty(sandbox, ['--version']);
  await expect(session.waitFor(`never-${randomBytes(4).toString('hex')}`, 2_000)).rejects.toThrow(
    /session ended|did not appear/,
  );
  await expectExit(session, 0);
});
