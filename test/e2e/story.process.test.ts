/**
 * The whole story, as a user or a pipeline lives it, against the bundled emulator (`ugs serve`,
 * a real process on loopback). Every exit code of the contract is produced by a real failure, not
 * a fake. The story itself runs the built binary; the profile, exit-code and secrets cases after
 * it run the same main in-process (`runMain`), since a process of their own adds nothing to what
 * they check and cost a Node start each.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANSI,
  call,
  closedPort,
  describeRun,
  type EnvChanges,
  errorLines,
  makeSandbox,
  type RunResult,
  runMain,
  runUgs,
  type Sandbox,
  type ServeProcess,
  STACK_LINE,
  serveUgs,
  tableToken,
} from '../kit/index.js';

let emulator: ServeProcess;
let customerToken: string;
let testingToken: string;

beforeAll(async () => {
  emulator = await serveUgs();
  customerToken = emulator.tokenFor('Customer');
  testingToken = emulator.tokenFor('Testing');
});

afterAll(async () => {
  if (emulator) {
    const { code, signal } = await emulator.stop();
    expect({ code, signal }, `ugs serve stderr:\n${emulator.stderr()}`).toEqual({
      code: 0,
      signal: null,
    });
    expect(emulator.stderr()).toContain('stopped (SIGTERM)');
  }
});

const HEX64 = /^[0-9a-f]{64}$/;

function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

function expectExit(result: RunResult, code: number): void {
  expect(result.code, describeRun(result)).toBe(code);
  // Stack traces only with --debug.
  if (!result.args.includes('--debug'))
    expect(result.stderr, describeRun(result)).not.toMatch(STACK_LINE);
}

/** How a case runs ugs: the built binary (`runUgs`) or main in-process (`runMain`). */
type Runner = (
  args: readonly string[],
  options: { sandbox: Sandbox; env?: EnvChanges; stdin?: string },
) => Promise<RunResult>;

/** A sandbox whose profile (default unless named) is logged in to `url` with `apiToken`. */
async function login(
  sandbox: Sandbox,
  apiToken: string,
  options: {
    profile?: string;
    url?: string;
    env?: EnvChanges;
    verify?: false;
    /** The story's own runs use the binary; the setup of the cases after it runs in-process. */
    run?: Runner;
  } = {},
): Promise<RunResult> {
  const args = ['login', '--base-url', options.url ?? emulator.url, '--with-token'];
  // A service that is down, or whose first answer is a scripted fault, cannot check the token.
  if (options.verify === false) args.push('--no-verify');
  if (options.profile) args.push('--profile', options.profile);
  const run = options.run ?? runMain;
  const result = await run(args, { sandbox, stdin: `${apiToken}\n`, env: options.env ?? {} });
  expectExit(result, 0);
  return result;
}

async function loggedIn(apiToken = customerToken): Promise<Sandbox> {
  const sandbox = makeSandbox();
  await login(sandbox, apiToken);
  return sandbox;
}

async function fieldToken(
  sandbox: Sandbox,
  id: string,
  extra: readonly string[] = [],
  env: EnvChanges = {},
  run: Runner = runMain,
): Promise<string> {
  const result = await run(['get', '--id', id, '--name', id, '--field', 'token', ...extra], {
    sandbox,
    env,
  });
  expectExit(result, 0);
  expect(result.stdout, describeRun(result)).toMatch(/^[0-9a-f]{64}\n$/);
  return result.stdout.trim();
}

describe('the story: login, get, get again, rotate', () => {
  it('creates, finds, prints one field or the JSON body, rotates, and refuses the old token', async () => {
    const sandbox = makeSandbox();

    // login --with-token: token on stdin, never printed, config 0600 in a 0700 directory.
    const loginRun = await login(sandbox, customerToken, { run: runUgs });
    expect(loginRun.stderr).toContain('"default"');
    expect(loginRun.stderr).toContain(sandbox.configPath);
    expect(loginRun.stdout + loginRun.stderr).not.toContain(customerToken);
    expect(statSync(sandbox.configPath).mode & 0o777).toBe(0o600);
    expect(statSync(sandbox.configDir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(sandbox.configPath, 'utf8'))).toEqual({
      profiles: { default: { baseUrl: emulator.url, apiToken: customerToken } },
    });

    // get with --mapping, --property and --properties: created.
    const id = uniqueId('acme');
    const request = [
      'get',
      '--id',
      id,
      '--name',
      'Acme Corp',
      '--mapping',
      'sales=acme_db',
      '--mapping',
      'hr=acme=hr',
      '--property',
      'plan=pro',
      '--properties',
      '{"seats":5,"beta":true}',
    ];
    const created = await runUgs(request, { sandbox });
    expectExit(created, 0);
    expect(created.stderr.split('\n')[0]).toBe(`Created user group ${id}`);
    expect(created.stdout).toMatch(new RegExp(`provided_id\\W+${id}\\W`));
    expect(created.stdout).toMatch(/name\W+Acme Corp\W/);
    expect(created.stdout).toContain('"plan":"pro"');
    expect(created.stdout).toContain('"seats":5');
    expect(created.stdout).toContain('"beta":true');
    const token = tableToken(created.stdout);
    expect(token, describeRun(created)).toMatch(HEX64);
    expect(created.stdout).not.toContain(customerToken);

    // get again: found, same token, properties as first stored.
    const again = await runUgs([...request, '--json'], { sandbox });
    expectExit(again, 0);
    const body = JSON.parse(again.stdout) as {
      success: number;
      new_user_group: boolean;
      user_group: Record<string, unknown>;
    };
    expect(body.success).toBe(1);
    expect(body.new_user_group).toBe(false);
    expect(body.user_group).toMatchObject({
      provided_id: id,
      name: 'Acme Corp',
      token,
      properties: { seats: 5, beta: true, plan: 'pro' },
    });
    expect(again.stdout).toBe(`${JSON.stringify(body, null, 2)}\n`);

    // --field token: the value and a newline, nothing else.
    const field = await runUgs(['get', '--id', id, '--name', 'Acme Corp', '--field', 'token'], {
      sandbox,
    });
    expectExit(field, 0);
    expect(field.stdout).toBe(`${token}\n`);
    expect(field.stderr).toBe('');

    // A field the answer lacks is exit 1.
    const missingField = await runUgs(['get', '--id', id, '--name', 'x', '--field', 'nope'], {
      sandbox,
    });
    expectExit(missingField, 1);
    expect(missingField.stdout).toBe('');

    // rotate: token on stdin, --yes; the new token leads the output and differs.
    const rotated = await runUgs(['rotate', '--current-token-stdin', '--yes'], {
      sandbox,
      stdin: `${token}\n`,
    });
    expectExit(rotated, 0);
    // Into a pipe: the headline and warning on stderr, the new token only in stdout's lines.
    expect(rotated.stderr).toContain(`Rotated token of user group ${id}`);
    expect(rotated.stderr).toMatch(/previous token may stop working/);
    const newToken = tableToken(rotated.stdout);
    expect(newToken, describeRun(rotated)).toMatch(HEX64);
    expect(newToken).not.toBe(token);
    expect(rotated.stderr).not.toContain(newToken);
    expect(rotated.stdout).not.toContain(token);

    // The old token is refused: exit 1, the emulator's own words after `error:`.
    const refused = await runUgs(['rotate', '--current-token-stdin', '--yes'], {
      sandbox,
      stdin: `${token}\n`,
    });
    expectExit(refused, 1);
    const direct = await call(emulator.url, {
      method: 'POST',
      token: customerToken,
      body: { current_token: token },
    });
    expect(direct.json?.success).toBe(0);
    const emulatorMessage = String(direct.json?.detail);
    expect(emulatorMessage.length).toBeGreaterThan(0);
    const errors = errorLines(refused.stderr);
    expect(errors, describeRun(refused)).toHaveLength(1);
    expect(errors[0]).toContain(emulatorMessage);
    expect(refused.stdout).toBe('');

    // With --json the emulator's error body is on stdout too.
    const refusedJson = await runUgs(['rotate', '--current-token-stdin', '--yes', '--json'], {
      sandbox,
      stdin: token,
    });
    expectExit(refusedJson, 1);
    expect(JSON.parse(refusedJson.stdout)).toEqual(direct.json);

    // get shows the new token.
    expect(await fieldToken(sandbox, id, [], {}, runUgs)).toBe(newToken);
  });

  it('keeps state across a restart of the emulator with --data (stopped with SIGINT)', async () => {
    const dir = makeSandbox();
    const dataFile = join(dir.root, 'state.json');
    const apiToken = `e2e-${randomBytes(16).toString('hex')}`;
    const args = ['--data', dataFile, '--api-token', `${apiToken}:Customer`];
    const first = await serveUgs(args);
    const sandbox = makeSandbox();
    const id = uniqueId('persist');
    let token: string;
    try {
      expect(first.apiTokens).toEqual([{ token: apiToken, environment: 'Customer' }]);
      token = await fieldToken(
        sandbox,
        id,
        [],
        { UGS_API_TOKEN: apiToken, UGS_BASE_URL: first.url },
        runUgs,
      );
    } finally {
      // Ctrl+C stops it as cleanly as SIGTERM.
      expect(await first.stop('SIGINT')).toEqual({ code: 0, signal: null });
      expect(first.stderr()).toContain('stopped (SIGINT)');
    }
    const second = await serveUgs(args);
    try {
      const found = await runUgs(['get', '--id', id, '--name', id, '--json'], {
        sandbox,
        env: { UGS_API_TOKEN: apiToken, UGS_BASE_URL: second.url },
      });
      expectExit(found, 0);
      expect(JSON.parse(found.stdout)).toMatchObject({
        new_user_group: false,
        user_group: { token },
      });
    } finally {
      expect((await second.stop()).code).toBe(0);
    }
  });
});

describe('profiles and environment overrides', () => {
  /** One sandbox, `default` logged in as Customer and `testing` as Testing. */
  async function twoProfiles(): Promise<Sandbox> {
    const sandbox = makeSandbox();
    await login(sandbox, customerToken);
    await login(sandbox, testingToken, { profile: 'testing' });
    expect(JSON.parse(readFileSync(sandbox.configPath, 'utf8'))).toEqual({
      profiles: {
        default: { baseUrl: emulator.url, apiToken: customerToken },
        testing: { baseUrl: emulator.url, apiToken: testingToken },
      },
    });
    return sandbox;
  }

  it('--profile testing (Testing API token) sees a different group for the same id', async () => {
    const sandbox = await twoProfiles();
    const id = uniqueId('shared');
    const customer = await runMain(['get', '--id', id, '--name', 'C', '--json'], { sandbox });
    expectExit(customer, 0);
    // The global option before the subcommand ...
    const testing = await runMain(
      ['--profile', 'testing', 'get', '--id', id, '--name', 'T', '--json'],
      { sandbox },
    );
    expectExit(testing, 0);
    const c = JSON.parse(customer.stdout);
    const t = JSON.parse(testing.stdout);
    // ids are unique per environment: both were created, each with its own token.
    expect(c.new_user_group).toBe(true);
    expect(t.new_user_group).toBe(true);
    expect(t.user_group.name).toBe('T');
    expect(t.user_group.token).toMatch(HEX64);
    expect(t.user_group.token).not.toBe(c.user_group.token);
    // ... and after it (short form), and the Customer group is unchanged.
    const testingAgain = await runMain(
      ['get', '--id', id, '--name', 'T', '-p', 'testing', '--json'],
      { sandbox },
    );
    expectExit(testingAgain, 0);
    expect(JSON.parse(testingAgain.stdout)).toMatchObject({
      new_user_group: false,
      user_group: { token: t.user_group.token, name: 'T' },
    });
    const customerAgain = await runMain(['get', '--id', id, '--name', 'C', '--json'], { sandbox });
    expect(JSON.parse(customerAgain.stdout)).toMatchObject({
      new_user_group: false,
      user_group: { token: c.user_group.token, name: 'C' },
    });
  });

  it('UGS_API_TOKEN beats the profile token; UGS_PROFILE picks a profile; flags beat both', async () => {
    const sandbox = await twoProfiles();
    const id = uniqueId('env');
    const [customer, testing] = await Promise.all([
      fieldToken(sandbox, id),
      fieldToken(sandbox, id, ['--profile', 'testing']),
    ]);
    expect(customer).not.toBe(testing);

    const [envToken, envProfile, flagOverEnvProfile, status] = await Promise.all([
      // The default profile holds the Customer token; the env's Testing token wins.
      fieldToken(sandbox, id, [], { UGS_API_TOKEN: testingToken }),
      fieldToken(sandbox, id, [], { UGS_PROFILE: 'testing' }),
      fieldToken(sandbox, id, ['--profile', 'default'], { UGS_PROFILE: 'testing' }),
      runMain(['status', '--json'], { sandbox, env: { UGS_API_TOKEN: testingToken } }),
    ]);
    expect(envToken).toBe(testing);
    expect(envProfile).toBe(testing);
    expect(flagOverEnvProfile).toBe(customer);
    expectExit(status, 0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      profile: 'default',
      tokenSource: 'env UGS_API_TOKEN',
    });
    expect(status.stdout).not.toContain(testingToken);

    // login warns that UGS_API_TOKEN will override what it saves.
    const warned = await login(makeSandbox(), customerToken, {
      env: { UGS_API_TOKEN: testingToken },
    });
    expect(warned.stderr).toMatch(/UGS_API_TOKEN/);
    expect(warned.stderr).not.toContain(testingToken);
  });

  it('--base-url beats UGS_BASE_URL, which beats the profile', async () => {
    const sandbox = await twoProfiles();
    const dead = `http://127.0.0.1:${await closedPort()}`;
    await login(sandbox, customerToken, { profile: 'dead', url: dead, verify: false });
    const id = uniqueId('url');
    const get = ['get', '--id', id, '--name', id, '--field', 'token', '--timeout', '5'];
    const [envOverProfile, profileOnly, envOverGood, flagOverEnv, flagOverEnvGood] =
      await Promise.all([
        runMain([...get, '-p', 'dead'], { sandbox, env: { UGS_BASE_URL: emulator.url } }),
        runMain([...get, '-p', 'dead'], { sandbox }),
        runMain(get, { sandbox, env: { UGS_BASE_URL: dead } }),
        runMain([...get, '--base-url', dead], { sandbox, env: { UGS_BASE_URL: emulator.url } }),
        runMain([...get, '--base-url', emulator.url], { sandbox, env: { UGS_BASE_URL: dead } }),
      ]);
    expectExit(envOverProfile, 0);
    expectExit(profileOnly, 4);
    expectExit(envOverGood, 4);
    expectExit(flagOverEnv, 4);
    expectExit(flagOverEnvGood, 0);
    expect(flagOverEnvGood.stdout).toBe(envOverProfile.stdout);
    for (const failed of [profileOnly, envOverGood, flagOverEnv]) {
      expect(errorLines(failed.stderr)[0], describeRun(failed)).toContain(
        dead.slice('http://'.length),
      );
    }
  });
});

describe('exit codes', () => {
  it('2: missing --id without a terminal, rotate without --yes, invalid --mapping-json (nothing sent)', async () => {
    const sandbox = await loggedIn();
    const id = uniqueId('usage');
    const token = await fieldToken(sandbox, id);

    const [missingId, missingName, noYes, notJson, notStrings, notObject, badPair] =
      await Promise.all([
        runMain(['get', '--name', 'x'], { sandbox }),
        runMain(['get', '--id', 'x'], { sandbox }),
        runMain(['rotate', '--current-token-stdin'], { sandbox, stdin: token }),
        runMain(['get', '--id', `${id}-b`, '--name', 'b', '--mapping-json', '{not json'], {
          sandbox,
        }),
        runMain(['get', '--id', `${id}-b`, '--name', 'b', '--mapping-json', '{"sales":1}'], {
          sandbox,
        }),
        runMain(['get', '--id', `${id}-b`, '--name', 'b', '--mapping-json', '["a"]'], { sandbox }),
        runMain(['get', '--id', `${id}-b`, '--name', 'b', '--mapping', 'no-equals-sign'], {
          sandbox,
        }),
      ]);
    for (const result of [missingId, missingName, noYes, notJson, notStrings, notObject, badPair]) {
      expectExit(result, 2);
      expect(errorLines(result.stderr), describeRun(result)).toHaveLength(1);
      expect(result.stdout, describeRun(result)).toBe('');
    }
    expect(errorLines(missingId.stderr)[0]).toContain('--id');
    expect(errorLines(missingName.stderr)[0]).toContain('--name');
    expect(errorLines(noYes.stderr)[0]).toContain('--yes');
    expect(errorLines(notStrings.stderr)[0]).toContain('--mapping-json');

    // Nothing was sent: the token was not rotated, the group was not created.
    expect(await fieldToken(sandbox, id)).toBe(token);
    const fresh = await runMain(['get', '--id', `${id}-b`, '--name', 'b', '--json'], { sandbox });
    expectExit(fresh, 0);
    expect(JSON.parse(fresh.stdout).new_user_group).toBe(true);

    // Unknown flags are usage errors too.
    const unknown = await runMain(['get', '--id', id, '--name', 'x', '--bogus'], { sandbox });
    expectExit(unknown, 2);
  });

  it('3: a wrong API token (emulator 401) and no API token at all', async () => {
    const sandbox = makeSandbox();
    const wrong = `wrong-${randomBytes(16).toString('hex')}`;
    const [refused, none, status] = await Promise.all([
      runMain(['get', '--id', 'x', '--name', 'x', '--base-url', emulator.url], {
        sandbox,
        env: { UGS_API_TOKEN: wrong },
      }),
      runMain(['get', '--id', 'x', '--name', 'x', '--base-url', emulator.url], { sandbox }),
      runMain(['status'], { sandbox }),
    ]);
    const direct = await call(emulator.url, {
      method: 'GET',
      token: wrong,
      body: { user_group_id: 'x', name: 'x' },
    });
    expect(direct.status).toBe(401);

    expectExit(refused, 3);
    expect(errorLines(refused.stderr)[0], describeRun(refused)).toContain(
      String(direct.json?.detail),
    );
    expect(refused.stderr).toMatch(/^hint: .*ugs login/m);
    expect(refused.stdout + refused.stderr).not.toContain(wrong);

    expectExit(none, 3);
    expect(errorLines(none.stderr)[0], describeRun(none)).toMatch(/no API token/);
    expect(none.stderr).toMatch(/^hint: .*ugs login/m);

    expectExit(status, 3);
  });

  it('4: the emulator stopped (connection refused), for get and for rotate', async () => {
    const own = await serveUgs();
    const sandbox = await (async () => {
      const s = makeSandbox();
      await login(s, own.tokenFor('Customer'), { url: own.url });
      return s;
    })();
    const token = await fieldToken(sandbox, uniqueId('gone'));
    const { code, signal } = await own.stop();
    expect({ code, signal }).toEqual({ code: 0, signal: null });

    const [get, rotate] = await Promise.all([
      runMain(['get', '--id', 'x', '--name', 'x', '--timeout', '5'], { sandbox }),
      runMain(['rotate', '--current-token-stdin', '--yes', '--timeout', '5'], {
        sandbox,
        stdin: token,
      }),
    ]);
    for (const result of [get, rotate]) {
      expectExit(result, 4);
      expect(errorLines(result.stderr)[0], describeRun(result)).toMatch(/refused/);
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toContain(token);
    }
  });

  it('5: rotate against `ugs serve --fault reset:1`: the rotation may or may not have happened', async () => {
    const faulty = await serveUgs(['--fault', 'reset:1']);
    try {
      const sandbox = makeSandbox();
      await login(sandbox, faulty.tokenFor('Customer'), { url: faulty.url, verify: false });
      const oldToken = randomBytes(32).toString('hex');
      const [rotate, get] = await Promise.all([
        runMain(['rotate', '--current-token-stdin', '--yes', '--timeout', '5'], {
          sandbox,
          stdin: oldToken,
        }),
        runMain(['get', '--id', 'x', '--name', 'x', '--timeout', '5'], { sandbox }),
      ]);
      expectExit(rotate, 5);
      const errors = errorLines(rotate.stderr);
      expect(errors, describeRun(rotate)).toHaveLength(1);
      expect(errors[0]).toMatch(/may or may not/);
      expect(rotate.stderr).toMatch(/^hint: .*--field token/m);
      expect(rotate.stdout).toBe('');
      expect(rotate.stderr).not.toContain(oldToken);
      // Exit 5 is for rotate only: a get that got no answer is a network failure.
      expectExit(get, 4);
    } finally {
      expect((await faulty.stop()).code).toBe(0);
    }
  });
});

describe('secrets and colour', () => {
  it('--debug on every command (serve included) traces HTTP but never prints a token it should not', async () => {
    // An emulator of its own, with --debug: its request log must not leak tokens either.
    const server = await serveUgs(['--debug']);
    const apiToken = server.tokenFor('Customer');
    const wrongApiToken = `wrong-${randomBytes(32).toString('hex')}`;
    const sandbox = makeSandbox();
    const id = uniqueId('debug');
    const debug = async (
      args: readonly string[],
      code: number,
      options: { stdin?: string; env?: EnvChanges } = {},
    ) => {
      const result = await runMain(['--debug', ...args], { sandbox, ...options });
      expectExit(result, code);
      return result;
    };
    let serverLog: string;
    const runs: [result: RunResult, mayShow?: string][] = [];
    let token = '';
    let newToken = '';
    try {
      const login = await debug(['login', '--base-url', server.url, '--with-token'], 0, {
        stdin: `${apiToken}\n`,
      });
      const status = await debug(['status'], 0);
      const created = await debug(['get', '--id', id, '--name', id, '--property', 'plan=pro'], 0);
      token = tableToken(created.stdout) ?? '';
      expect(token, describeRun(created)).toMatch(HEX64);
      const json = await debug(['get', '--id', id, '--name', id, '--json'], 0);
      const field = await debug(['get', '--id', id, '--name', id, '--field', 'token'], 0);
      expect(field.stdout).toBe(`${token}\n`);
      const rotated = await debug(['rotate', '--current-token-stdin', '--yes'], 0, {
        stdin: token,
      });
      newToken = tableToken(rotated.stdout) ?? '';
      expect(newToken, describeRun(rotated)).toMatch(HEX64);
      const refused = await debug(['rotate', '--current-token-stdin', '--yes'], 1, {
        stdin: token,
      });
      const refusedArgv = await debug(['rotate', '--current-token', token, '--yes', '--json'], 1);
      const wrong = await debug(['get', '--id', id, '--name', id], 3, {
        env: { UGS_API_TOKEN: wrongApiToken },
      });
      const logout = await debug(['logout'], 0);
      const none = await debug(['get', '--id', id, '--name', id], 3);
      runs.push(
        [login],
        [status],
        [created, token],
        [json, token],
        [field, token],
        [rotated, newToken],
        [refused],
        [refusedArgv],
        [wrong],
        [logout],
        [none],
      );
      // The trace is really there: requests, responses, tokens as fingerprints.
      expect(created.stderr).toMatch(/GET \S+\/api\/user/);
      expect(created.stderr).toMatch(/\b200\b/);
      expect(created.stderr).toContain(`"token":"…${token.slice(-4)}"`);
      expect(rotated.stderr).toMatch(/POST \S+\/api\/user/);
      expect(refused.stderr).toMatch(/\b404\b/);
      expect(wrong.stderr).toMatch(/\b401\b/);
    } finally {
      expect((await server.stop()).code).toBe(0);
      serverLog = server.stderr();
    }

    const secrets = [apiToken, customerToken, testingToken, wrongApiToken, token, newToken];
    for (const [result, mayShow] of runs) {
      for (const secret of secrets) {
        expect(result.stderr.includes(secret), `a token in stderr of ${describeRun(result)}`).toBe(
          false,
        );
        if (secret !== mayShow) {
          expect(
            result.stdout.includes(secret),
            `a token in stdout of ${describeRun(result)}`,
          ).toBe(false);
        }
      }
    }
    // The emulator logged the requests (so the check below means something), without tokens.
    expect(serverLog).toMatch(/\/api\/user/);
    for (const secret of secrets) {
      expect(serverLog.includes(secret), `a token in the emulator's log:\n${serverLog}`).toBe(
        false,
      );
    }
  });

  it('NO_COLOR and --no-color leave no ANSI escapes, even with FORCE_COLOR=1', async () => {
    const sandbox = await loggedIn();
    const id = uniqueId('color');
    const table = ['get', '--id', id, '--name', id];
    const failing = ['rotate', '--current-token-stdin'];
    const [coloured, colouredError, noColor, noColorError, flag, flagError] = await Promise.all([
      runMain(table, { sandbox, env: { FORCE_COLOR: '1' } }),
      runMain(failing, { sandbox, env: { FORCE_COLOR: '1' }, stdin: 'x' }),
      runMain(table, { sandbox, env: { FORCE_COLOR: '1', NO_COLOR: '1' } }),
      runMain(failing, { sandbox, env: { FORCE_COLOR: '1', NO_COLOR: '1' }, stdin: 'x' }),
      runMain([...table, '--no-color'], { sandbox, env: { FORCE_COLOR: '1' } }),
      runMain([...failing, '--no-color'], { sandbox, env: { FORCE_COLOR: '1' }, stdin: 'x' }),
    ]);
    // The control: colour is really produced when forced, so the checks below can fail.
    expectExit(coloured, 0);
    expectExit(colouredError, 2);
    expect(coloured.stdout).toMatch(ANSI);
    expect(colouredError.stderr).toMatch(ANSI);
    for (const result of [noColor, flag]) {
      expectExit(result, 0);
      expect(result.stderr).toContain(`user group ${id}`);
    }
    for (const result of [noColorError, flagError]) expectExit(result, 2);
    for (const result of [noColor, noColorError, flag, flagError]) {
      expect(result.stdout + result.stderr, describeRun(result)).not.toMatch(ANSI);
    }
  });
});
