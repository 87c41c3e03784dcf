/**
 * Production profiles: `ugs login --production` and `ugs profile protect` mark one; on it every
 * command that changes data asks first at a terminal (profile and base URL in the question,
 * default no, whatever flags were given) and needs `--yes` without one (exit 2, nothing sent);
 * it is never the default; `profile list` and `status` show the mark. And saying where: with more
 * than one profile, or one not named `default`, headlines and questions name the profile and its
 * base URL.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandsChangingData } from '../../src/commands/operations.js';
import { runProfile } from '../../src/commands/profile.js';
import { CancelledError, UsageError } from '../../src/errors.js';
import { runGet } from '../../src/operations/get-user/command.js';
import { runUpdate } from '../../src/operations/update-user-group/command.js';
import {
  echoService,
  fakeService,
  groupResult,
  makeDeps,
  rejection,
  terminalIO,
} from '../kit/fakes.js';
import {
  describeRun,
  makeSandbox,
  readConfig,
  runMain,
  type Sandbox,
  type Service,
  serviceForTest,
  tempDir,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-production-test-13579';

/** A sandbox with `staging` and `prod` (marked) both at `service`, in the customer dialect. */
async function productionSandbox(): Promise<{ sb: Sandbox; service: Service }> {
  const service = await serviceForTest([API_TOKEN], { dialect: 'customer' });
  const sb = makeSandbox();
  const profile = { baseUrl: service.url, apiToken: API_TOKEN, dialect: 'customer' };
  writeConfig(sb, { profiles: { staging: profile, prod: { ...profile, production: true } } });
  return { sb, service };
}

const profiles = () => ({
  staging: { baseUrl: 'https://staging.example.com', apiToken: 'api-token-staging-1111' },
  prod: {
    baseUrl: 'https://prod.example.com',
    apiToken: 'api-token-prod-2222',
    dialect: 'customer' as const,
    production: true,
  },
});

const onProd = { profile: 'prod', profileSource: 'flag' as const };

// The registry says which commands change data: each must take --yes, the gate's way past.
it.each(commandsChangingData)('%s, which changes data, takes --yes', async (name) => {
  const help = await runMain([name, '--help']);
  expect(help.stdout).toMatch(/-y, --yes/);
});

describe('a production profile without a terminal', () => {
  const file = (name: string, text: string) => {
    const path = join(tempDir('production'), name);
    writeFileSync(path, text);
    return path;
  };
  const commands: [string, () => string[]][] = [
    ['get', () => ['get', '--id', 'initech', '--name', 'Initech']],
    ['update', () => ['update', '--id', 'initech', '--name', 'Initech Corp']],
    ['rotate', () => ['rotate', '--current-token', 'ug-token-000000000000']],
    ['delete', () => ['delete', '--current-token', 'ug-token-000000000000']],
    ['get --from', () => ['get', '--from', file('groups.csv', 'user_group_id,name\ninitech,I\n')]],
    [
      'update --from',
      () => [
        'update',
        '--from',
        file('changes.csv', 'user_group_id,name\ninitech,I\n'),
        '--output',
        join(tempDir('production'), 'updated.ndjson'),
      ],
    ],
  ];
  it.each(commands)('%s without --yes: exit 2, nothing sent', async (_name, argv) => {
    const { sb, service } = await productionSandbox();
    const result = await runMain([...argv(), '-p', 'prod'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toMatch(/--yes/);
    expect(service.requests).toEqual([]);
  });

  it('the same get and update with --yes are sent, and staging needs no --yes', async () => {
    const { sb, service } = await productionSandbox();
    const get = await runMain(['get', '--id', 'initech', '--name', 'I', '-p', 'prod', '--yes'], {
      sandbox: sb,
    });
    expect(get.code, describeRun(get)).toBe(0);
    const update = await runMain(['update', '--id', 'initech', '--name', 'J', '-p', 'prod', '-y'], {
      sandbox: sb,
    });
    expect(update.code, describeRun(update)).toBe(0);
    const staging = await runMain(['get', '--id', 'other', '--name', 'O', '-p', 'staging'], {
      sandbox: sb,
    });
    expect(staging.code, describeRun(staging)).toBe(0);
    expect(service.requests).toHaveLength(3);
  });

  it('the refusal names the profile, and says nothing was sent', async () => {
    const deps = makeDeps({ profiles: profiles(), settings: onProd, service: echoService() });
    const error = await rejection(
      runGet(
        {
          id: 'initech',
          name: 'Initech',
          mapping: undefined,
          properties: undefined,
          format: { kind: 'table' },
        },
        deps,
      ),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(
      'profile "prod" is a production profile: --yes is required to get or create user group initech when not running interactively; nothing was sent',
    );
    expect(deps.targets).toEqual([]);
  });
});

describe('a production profile at a terminal', () => {
  const getOptions = {
    id: 'initech',
    name: 'Initech',
    mapping: undefined,
    properties: undefined,
    format: { kind: 'table' as const },
  };

  it('get asks "get or create" with the profile and base URL, default no: no sends nothing', async () => {
    const deps = makeDeps({
      io: terminalIO(),
      profiles: profiles(),
      settings: onProd,
      service: echoService(),
      prompts: [
        [
          'confirm',
          'Get or create user group initech on production profile prod (https://prod.example.com)?',
          false,
        ],
      ],
    });
    const error = await rejection(runGet(getOptions, deps));
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as CancelledError).message).toBe('not sent: nothing was changed on prod');
    expect(deps.prompter.calls[0]?.default).toBe(false);
    expect(deps.targets).toEqual([]);
  });

  it('get asks even when every flag is given and the group then only exists; yes sends it', async () => {
    const service = fakeService({
      getUser: () => groupResult({ provided_id: 'initech' }, { new_user_group: false }),
    });
    const deps = makeDeps({
      io: terminalIO(),
      profiles: profiles(),
      settings: onProd,
      service,
      prompts: [['confirm', 'Get or create user group initech on production profile prod', true]],
    });
    await runGet(getOptions, deps);
    deps.prompter.assertDone();
    expect(service.calls.map((call) => call.operation)).toEqual(['getUser']);
  });

  it('--yes asks nothing; another profile asks nothing', async () => {
    const service = fakeService({ getUser: () => groupResult({ provided_id: 'initech' }) });
    await runGet(
      { ...getOptions, yes: true },
      makeDeps({ io: terminalIO(), profiles: profiles(), settings: onProd, service }),
    );
    await runGet(
      getOptions,
      makeDeps({
        io: terminalIO(),
        profiles: profiles(),
        settings: { profile: 'staging', profileSource: 'flag' },
        service,
      }),
    );
    expect(service.calls).toHaveLength(2);
  });

  it('update asks with the profile and base URL before anything is sent', async () => {
    const service = fakeService({ updateUserGroup: () => groupResult({ provided_id: 'acme' }) });
    const deps = makeDeps({
      io: terminalIO(),
      profiles: profiles(),
      settings: onProd,
      service,
      prompts: [
        [
          'confirm',
          'Update user group acme on production profile prod (https://prod.example.com)?',
          false,
        ],
      ],
    });
    const error = await rejection(
      runUpdate(
        { id: 'acme', changes: { name: 'Acme' }, customerFlags: [], format: { kind: 'table' } },
        deps,
      ),
    );
    expect(error).toBeInstanceOf(CancelledError);
    expect(service.calls).toEqual([]);
  });
});

describe('marking a profile', () => {
  it('profile protect marks it and drops it as the default, in one write', async () => {
    const deps = makeDeps({ profiles: profiles() });
    deps.config.profiles.staging = { baseUrl: 'https://s.example.com' };
    deps.config.defaultProfile = 'staging';
    await runProfile({ action: 'protect', name: 'staging' }, deps);
    expect(deps.config.profiles.staging).toEqual({
      baseUrl: 'https://s.example.com',
      production: true,
    });
    expect(deps.config.defaultProfile).toBeUndefined();
    expect(deps.config.writes).toBe(1);
    expect(deps.io.stderr.text).toContain('pass -p staging to use it');
    await runProfile({ action: 'unprotect', name: 'staging' }, deps);
    expect(deps.config.profiles.staging).toEqual({ baseUrl: 'https://s.example.com' });
  });

  it('profile use of a production profile: exit 2, the hint says to pass -p each time', async () => {
    const sb = (await productionSandbox()).sb;
    const result = await runMain(['profile', 'use', 'prod'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain(
      'error: profile "prod" is a production profile and cannot be the default',
    );
    expect(result.stderr).toContain('hint: pass -p prod to each command that should use it');
    expect(readConfig(sb)).not.toHaveProperty('defaultProfile');
  });

  it('the profile named default cannot be marked (commands without --profile use it)', async () => {
    const deps = makeDeps();
    const error = await rejection(runProfile({ action: 'protect', name: 'default' }, deps));
    expect(error).toBeInstanceOf(UsageError);
    expect(deps.config.writes).toBe(0);
    const login = await runMain(['login', '--production', '--base-url', 'https://x.example.com'], {
      stdin: API_TOKEN,
    });
    expect(login.code, describeRun(login)).toBe(2);
    expect(login.stderr).toContain('"default" cannot be marked production');
  });

  it('login --production saves the profile marked, and a later login keeps the mark', async () => {
    const sb = makeSandbox();
    const login = (extra: string[]) =>
      runMain(
        [
          'login',
          '-p',
          'prod',
          '--base-url',
          'https://prod.example.com',
          '--with-token',
          '--no-verify',
          ...extra,
        ],
        { sandbox: sb, stdin: API_TOKEN },
      );
    const first = await login(['--production']);
    expect(first.code, describeRun(first)).toBe(0);
    expect(first.stderr).toContain('is marked production');
    expect(readConfig(sb)).toMatchObject({ profiles: { prod: { production: true } } });
    const again = await login([]);
    expect(again.code, describeRun(again)).toBe(0);
    expect(readConfig(sb)).toMatchObject({ profiles: { prod: { production: true } } });
  });

  it('profile list and status show the mark, in the table and in --json', async () => {
    const sb = (await productionSandbox()).sb;
    const list = await runMain(['profile', 'list', '--json'], { sandbox: sb });
    expect(JSON.parse(list.stdout)).toMatchObject([
      { name: 'staging', production: false },
      { name: 'prod', production: true },
    ]);
    const table = await runMain(['profile', 'list'], { sandbox: sb });
    expect(table.stdout).toMatch(/ mark\n/);
    expect(table.stdout).toMatch(/prod .* production\n?$/);
    const status = await runMain(['status', '-p', 'prod', '--json'], { sandbox: sb });
    expect(JSON.parse(status.stdout)).toMatchObject({ profile: 'prod', production: true });
    const shown = await runMain(['status', '-p', 'prod'], { sandbox: sb });
    expect(shown.stdout).toContain('production: commands that change data ask first');
    const staging = await runMain(['status', '-p', 'staging', '--json'], { sandbox: sb });
    expect(JSON.parse(staging.stdout)).toMatchObject({ production: false });
  });

  it('a config file without the mark (every earlier one) loads; a wrong mark is refused', async () => {
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: 'https://a.example.com', apiToken: 'x' } } });
    const old = await runMain(['profile', 'list', '--json'], { sandbox: sb });
    expect(JSON.parse(old.stdout)).toMatchObject([{ name: 'default', production: false }]);
    writeConfig(sb, { profiles: { prod: { production: 'yes' } } });
    const wrong = await runMain(['profile', 'list'], { sandbox: sb });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('"production" of profile "prod" must be true or false');
  });
});

describe('saying where', () => {
  /** `default` and `staging`, both at `service` (customer dialect). */
  async function twoProfiles(): Promise<{ sb: Sandbox; service: Service }> {
    const service = await serviceForTest([API_TOKEN], { dialect: 'customer' });
    const sb = makeSandbox();
    const profile = { baseUrl: service.url, apiToken: API_TOKEN, dialect: 'customer' };
    writeConfig(sb, { profiles: { default: profile, staging: profile } });
    return { sb, service };
  }

  it('with two profiles the headlines of get, update, rotate and delete name the profile and URL', async () => {
    const { sb, service } = await twoProfiles();
    const at = `on staging (${service.url})`;
    const run = (argv: string[]) =>
      runMain([...argv, '-p', 'staging'], { sandbox: sb, tty: true, columns: 200 });
    const get = await run(['get', '--id', 'initech', '--name', 'Initech', '--yes']);
    expect(get.stdout, describeRun(get)).toContain(`Created user group initech ${at}`);
    const update = await run(['update', '--id', 'initech', '--name', 'Initech Corp']);
    expect(update.stdout, describeRun(update)).toContain(`User group initech ${at}`);
    const token = (await service.group('initech')).token;
    const rotate = await run(['rotate', '--current-token', token, '--yes']);
    expect(rotate.stdout, describeRun(rotate)).toContain(
      `Rotated token of user group initech ${at}`,
    );
    const onDefault = await runMain(['get', '--id', 'initech', '--name', 'I', '--yes'], {
      sandbox: sb,
      tty: true,
      columns: 200,
    });
    expect(onDefault.stdout).toContain(`Found user group initech on default (${service.url})`);
    const remove = await run(['delete', '--id', 'initech', '--yes']);
    expect(remove.stdout, describeRun(remove)).toContain(`Deleted user group initech ${at}`);
  });

  it('with two profiles the summary of a --from run, and of its dry run, name the profile and URL', async () => {
    const { sb, service } = await twoProfiles();
    const at = `on staging (${service.url})`;
    const input = join(sb.root, 'groups.csv');
    writeFileSync(input, 'user_group_id,name\ninitech,Initech\numbrella,Umbrella\n');
    const dry = await runMain(['get', '--from', input, '--dry-run', '-p', 'staging'], {
      sandbox: sb,
    });
    expect(dry.stdout, describeRun(dry)).toContain(`Dry run of get --from ${input} ${at}:`);
    const run = await runMain(['get', '--from', input, '-p', 'staging'], { sandbox: sb });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stderr).toMatch(
      /(^|\n)2 rows in \S+( \([^)]*\))? on staging \(http:[^)]*\): 2 created\n/,
    );
    expect(run.stderr).toContain(at);
    // A base URL a real run would refuse (plain http to another host) is not shown as the place.
    writeConfig(sb, {
      profiles: {
        default: { baseUrl: service.url, apiToken: API_TOKEN },
        staging: { baseUrl: 'http://analytics.example.com', apiToken: API_TOKEN },
      },
    });
    const refused = await runMain(['get', '--from', input, '--dry-run', '-p', 'staging'], {
      sandbox: sb,
    });
    expect(refused.stdout, describeRun(refused)).toContain(
      `Dry run of get --from ${input} on staging: nothing was sent.`,
    );
  });

  it('with one profile named default the headline stays as it was', async () => {
    const service = fakeService({
      getUser: () => groupResult({ provided_id: 'acme' }, { new_user_group: true }),
    });
    const deps = makeDeps({ io: terminalIO(), service });
    await runGet(
      {
        id: 'acme',
        name: 'Acme',
        mapping: undefined,
        properties: undefined,
        format: { kind: 'table' },
      },
      deps,
    );
    expect(deps.io.stdout.text).toMatch(/Created user group acme\S*\n/);
  });

  it("rotate's and delete's questions name the profile and URL", async () => {
    const { sb, service } = await twoProfiles();
    await service.seed('acme', 'Acme');
    // rotate --id asks before anything is sent (its token unknown yet), naming the profile
    // whatever it is; delete --id asks with the token read.
    const rotate = await runMain(['rotate', '--id', 'acme', '-p', 'staging'], {
      sandbox: sb,
      tty: true,
      columns: 200,
    });
    // The empty stdin cancels the question: exit 130, nothing changed.
    expect(rotate.code, describeRun(rotate)).toBe(130);
    expect(rotate.stderr).toContain(
      `Rotate the token of user group "acme" on profile "staging" at ${service.url.replace(/\/$/, '')}?`,
    );
    const asked = await runMain(['delete', '--id', 'acme', '-p', 'staging'], {
      sandbox: sb,
      tty: true,
      columns: 200,
    });
    expect(asked.code, describeRun(asked)).toBe(130);
    const question = asked.stderr.slice(asked.stderr.indexOf('Delete user group "acme"'));
    expect(question).toMatch(/^[^\n]* \(token ending in …\w{4}\) on staging \(/);
    expect(question).toContain(`on staging (${service.url})?`);
  });
});
