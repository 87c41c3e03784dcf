/**
 * `ugs history` and `ugs whois`, in-process against the in-process
 * emulator: the events a run wrote, read back newest first; which group a token belonged to,
 * by whole token (stdin), last 4 and fingerprint; `whois --check` asking the service.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseOutcomes, parseSince, parseUntil, runHistory } from '../../src/commands/history.js';
import { CancelledError, UsageError } from '../../src/errors.js';
import { createHistoryLog } from '../../src/history/log.js';
import { makeDeps, terminalIO } from '../kit/fakes.js';
import {
  customerEnv,
  describeRun,
  makeSandbox,
  runMain,
  type Sandbox,
  serviceWithProfile,
  tempDir,
  useEmulator,
  writeConfig,
} from '../kit/index.js';

const emulator = useEmulator();

const env = () => customerEnv(emulator);

async function ok(sb: Sandbox, argv: string[], stdin?: string) {
  const result = await runMain(argv, {
    sandbox: sb,
    env: env(),
    ...(stdin !== undefined && { stdin }),
  });
  expect(result.code, describeRun(result)).toBe(0);
  return result;
}

async function tokenOf(sb: Sandbox, id: string, profile?: string): Promise<string> {
  const argv = [
    ...(profile === undefined ? [] : ['-p', profile]),
    'get',
    '--id',
    id,
    '--name',
    `Name ${id}`,
    '--field',
    'token',
  ];
  return (await ok(sb, argv)).stdout.trim();
}

async function rotated(sb: Sandbox, token: string): Promise<string> {
  const result = await ok(
    sb,
    ['rotate', '--current-token-stdin', '--yes', '--field', 'token'],
    token,
  );
  return result.stdout.trim();
}

const lines = (text: string) => text.split('\n').filter((line) => line !== '');

describe('ugs history', () => {
  it('lists the events newest first: NDJSON with --json, tab-separated into a pipe, a table at a terminal', async () => {
    const sb = makeSandbox();
    const old = await tokenOf(sb, 'hc-acme');
    await tokenOf(sb, 'hc-other');
    const fresh = await rotated(sb, old);
    const json = await ok(sb, ['history', '--json']);
    const events = lines(json.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.map((event) => `${event.user_group_id} ${event.outcome}`)).toEqual([
      'hc-acme rotated',
      'hc-other created',
      'hc-acme created',
    ]);
    expect(json.stdout).not.toContain(old);
    expect(json.stdout).not.toContain(fresh);

    const piped = await ok(sb, ['history']);
    const first = (lines(piped.stdout)[0] ?? '').split('\t');
    expect(first.slice(2, 5)).toEqual(['default', 'hc-acme', 'rotated']);
    expect(first[5]).toBe(
      `…${old.slice(-4)} ${events[0]?.sent_fingerprint} -> …${fresh.slice(-4)} ${events[0]?.token_fingerprint}`,
    );

    const tty = await runMain(['history'], { sandbox: sb, env: env(), tty: true, columns: 200 });
    expect(tty.code, describeRun(tty)).toBe(0);
    expect(lines(tty.stdout)[0]).toMatch(/TIME +WHO +PROFILE +ID +OUTCOME +TOKEN \(OLD -> NEW\)/);
    expect(lines(tty.stdout)).toHaveLength(4);
  });

  it('history and whois take a -p naming no saved profile (the history may know it); get refuses it', async () => {
    const sb = makeSandbox();
    writeConfig(sb, {
      profiles: { default: { baseUrl: emulator.url, apiToken: emulator.tokenFor('Customer') } },
    });
    const history = await runMain(['-p', 'ghost', 'history', '--json'], { sandbox: sb });
    expect(history.code, describeRun(history)).toBe(0);
    const whois = await runMain(['-p', 'ghost', 'whois', '…abcd'], { sandbox: sb });
    expect(whois.code, describeRun(whois)).toBe(1);
    expect(whois.stdout + whois.stderr).toContain('not seen');
    const get = await runMain(['-p', 'ghost', 'get', '--id', 'g', '--name', 'G'], { sandbox: sb });
    expect(get.code, describeRun(get)).toBe(2);
  });

  it('--id, -p (a profile only the history knows), --since and --limit filter; --clear empties it', async () => {
    const sb = makeSandbox();
    await tokenOf(sb, 'hf-one');
    await tokenOf(sb, 'hf-two', 'ghost');
    await tokenOf(sb, 'hf-one');
    const ids = async (argv: string[]) =>
      lines((await ok(sb, [...argv, '--json'])).stdout).map(
        (line) => (JSON.parse(line) as { user_group_id: string; outcome: string }).outcome,
      );
    expect(await ids(['history', '--id', 'hf-one'])).toEqual(['found', 'created']);
    expect(await ids(['-p', 'ghost', 'history'])).toEqual(['created']);
    expect(await ids(['history', '-p', 'nosuch'])).toEqual([]);
    expect(await ids(['history', '--limit', '1'])).toEqual(['found']);
    expect(await ids(['history', '--since', '1h'])).toHaveLength(3);
    expect(await ids(['history', '--since', '2999-01-01'])).toEqual([]);
    const bad = await runMain(['history', '--since', 'last week'], { sandbox: sb, env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since expects a date or a duration');

    const cleared = await ok(sb, ['history', '--clear', '--yes']);
    expect(cleared.stderr).toContain('Cleared the token history');
    expect(await ids(['history'])).toEqual([]);
  });
});

describe('ugs history --clear', () => {
  /** A shared history with one event, written by a get; `extra` files beside it. */
  async function sharedHistory(sb: Sandbox): Promise<string> {
    const shared = join(sb.root, 'team.ndjson');
    await ok(sb, ['--history-file', shared, 'get', '--id', 'hc-clear', '--name', 'C']);
    return shared;
  }

  it('refuses a file that is not a history (a bulk results file), naming it, and deletes nothing', async () => {
    const sb = makeSandbox();
    const results = join(sb.root, 'results.ndjson');
    const text = '{"row":1,"user_group_id":"a","token":"only-copy-of-a-new-token"}\n';
    writeFileSync(results, text);
    for (const argv of [
      ['--history-file', results, 'history', '--clear', '--yes'],
      ['history', '--clear', '--yes'],
    ]) {
      const result = await runMain(argv, {
        sandbox: sb,
        env: { ...env(), UGS_HISTORY_FILE: results },
      });
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stderr).toContain(`will not clear ${results}: it is not a ugs token history`);
      expect(result.stderr).not.toContain('unexpected');
      expect(readFileSync(results, 'utf8')).toBe(text);
    }
  });

  it('refuses when the rotated file beside a history is not one, deleting neither', async () => {
    const sb = makeSandbox();
    const shared = await sharedHistory(sb);
    const before = readFileSync(shared, 'utf8');
    const rotated = join(sb.root, 'team.1.ndjson');
    writeFileSync(rotated, 'user_group_id,token\nacme,secret\n');
    const result = await runMain(['--history-file', shared, 'history', '--clear', '--yes'], {
      sandbox: sb,
      env: env(),
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain(`will not clear ${rotated}`);
    expect(readFileSync(shared, 'utf8')).toBe(before);
    expect(readFileSync(rotated, 'utf8')).toBe('user_group_id,token\nacme,secret\n');
  });

  it('clears a history, and an empty file, with --yes; without a terminal and without --yes it refuses', async () => {
    const sb = makeSandbox();
    const shared = await sharedHistory(sb);
    const refused = await runMain(['--history-file', shared, 'history', '--clear'], {
      sandbox: sb,
      env: env(),
    });
    expect(refused.code, describeRun(refused)).toBe(2);
    expect(refused.stderr).toContain('--yes is required to clear the history');
    expect(refused.stderr).toContain('hint: ');
    expect(refused.stderr).toContain('--clear --yes');
    expect(existsSync(shared)).toBe(true);

    const cleared = await ok(sb, ['--history-file', shared, 'history', '--clear', '--yes']);
    expect(cleared.stderr).toContain(`Cleared the token history: ${shared}`);
    expect(existsSync(shared)).toBe(false);
    // The key stays: fingerprints noted elsewhere keep matching.
    expect(existsSync(join(sb.root, 'team.key'))).toBe(true);

    writeFileSync(shared, '');
    await ok(sb, ['--history-file', shared, 'history', '--clear', '--yes']);
    expect(existsSync(shared)).toBe(false);
    const wrong = await runMain(['history', '--yes'], { sandbox: sb, env: env() });
    expect(wrong.code, describeRun(wrong)).toBe(2);
  });

  it('asks at a terminal, naming the file, default no; a no deletes nothing (exit 130)', async () => {
    const dir = tempDir('history-clear');
    const path = join(dir, 'team.ndjson');
    const history = createHistoryLog({ path, shared: true }, { env: {}, warn: () => {} });
    await history.append([
      {
        time: new Date(),
        profile: 'default',
        baseUrl: 'http://127.0.0.1:1',
        dialect: 'interface',
        userGroupId: 'acme',
        name: 'Acme',
        outcome: 'created',
        token: 'token-of-acme-0123456789',
      },
    ]);
    const options = { id: undefined, sinceMs: undefined, limit: 50, json: false, clear: true };
    const no = makeDeps({
      io: terminalIO(),
      history,
      prompts: [['confirm', `Delete the token history ${path}?`, false]],
    });
    const declined = await runHistory({ ...options, yes: false }, no).catch((error) => error);
    expect(declined).toBeInstanceOf(CancelledError);
    expect((declined as CancelledError).exitCode).toBe(130);
    expect(no.prompter.calls[0]?.default).toBe(false);
    expect(existsSync(path)).toBe(true);

    const yes = makeDeps({
      io: terminalIO(),
      history,
      prompts: [['confirm', `Delete the token history ${path}?`, true]],
    });
    await runHistory({ ...options, yes: false }, yes);
    yes.prompter.assertDone();
    expect(existsSync(path)).toBe(false);
  });
});

describe('a history or key that is a symlink or a FIFO', () => {
  /** `history` or `key` planted as `plant` in a fresh sandbox; the shared history's path. */
  function planted(kind: 'history' | 'key', plant: 'symlink' | 'fifo') {
    const sb = makeSandbox();
    const history = join(sb.root, 'team.ndjson');
    const file = kind === 'history' ? history : join(sb.root, 'team.key');
    const victim = join(tempDir('victim'), 'victim.txt');
    writeFileSync(victim, 'untouched\n');
    if (plant === 'symlink') symlinkSync(victim, file);
    else execFileSync('mkfifo', [file]);
    return { sb, history, file, victim };
  }

  const cases = (['history', 'key'] as const).flatMap((kind) =>
    (['symlink', 'fifo'] as const).map((plant) => [kind, plant] as const),
  );

  it.each(cases)(
    'a %s planted as a %s: history and whois exit 2 naming it, get warns naming it',
    async (kind, plant) => {
      const { sb, history, file, victim } = planted(kind, plant);
      const label = kind === 'key' ? "the token history's key" : 'the token history';
      const why = plant === 'symlink' ? 'it is a symbolic link' : 'it is a FIFO';
      const reads: [string[], string | undefined][] = [
        [['whois', '-'], 'a-token-nobody-has-0123456789'],
      ];
      if (kind === 'history') {
        reads.push([['history'], undefined], [['history', '--clear', '--yes'], undefined]);
      }
      for (const [argv, stdin] of reads) {
        const result = await runMain(['--history-file', history, ...argv], {
          sandbox: sb,
          env: env(),
          ...(stdin !== undefined && { stdin }),
        });
        expect(result.code, describeRun(result)).toBe(2);
        expect(result.stderr).toContain(`error: cannot use ${label} ${file}: ${why}`);
        expect(result.stderr).not.toContain('unexpected failure');
      }
      const get = await runMain(
        ['--history-file', history, 'get', '--id', `hs-${kind}`, '--name', 'S'],
        {
          sandbox: sb,
          env: env(),
        },
      );
      expect(get.code, describeRun(get)).toBe(0);
      expect(get.stderr).toContain(`warning: the token history was not written (${file}: ${why}`);
      if (plant === 'symlink') expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
      // --clear left the planted file where it was.
      expect(lstatSync(file).isFile()).toBe(false);
    },
  );

  it('a key that is not a key: whois exits 2 naming the key file', async () => {
    const sb = makeSandbox();
    const history = join(sb.root, 'team.ndjson');
    writeFileSync(join(sb.root, 'team.key'), 'not a key\n');
    const result = await runMain(['--history-file', history, 'whois', '-'], {
      sandbox: sb,
      env: env(),
      stdin: 'a-token-nobody-has-0123456789',
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain(
      `cannot use the token history's key ${join(sb.root, 'team.key')}: it is not a history key`,
    );
  });
});

describe('ugs whois', () => {
  it('names the group of a whole token read from stdin, and says when, by whom and to what it was rotated', async () => {
    const sb = makeSandbox();
    const old = await tokenOf(sb, 'hw-acme');
    const fresh = await rotated(sb, old);
    const result = await ok(sb, ['whois', '-', '--json'], `${old}\n`);
    const answer = JSON.parse(result.stdout) as {
      seen: boolean;
      groups: { user_group_id: string; status: string; ended_by: Record<string, unknown> }[];
    };
    expect(answer.seen).toBe(true);
    expect(answer.groups).toHaveLength(1);
    expect(answer.groups[0]).toMatchObject({ user_group_id: 'hw-acme', status: 'rotated' });
    expect(answer.groups[0]?.ended_by).toMatchObject({
      outcome: 'rotated',
      token_last4: fresh.slice(-4),
    });
    expect(result.stdout).not.toContain(old);

    const text = await ok(sb, ['whois', '-'], old);
    expect(text.stdout).toContain(`belonged to user group "hw-acme"`);
    expect(text.stdout).toMatch(/rotated \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ by .+@.+ to …/);
    // The new token is current as far as the history knows.
    const current = await ok(sb, ['whois', '-'], fresh);
    expect(current.stdout).toContain('current as far as this history knows');
  });

  it('finds a token by its last 4 and by its fingerprint; an unknown one is "not seen" with exit 1', async () => {
    const sb = makeSandbox();
    const token = await tokenOf(sb, 'hw-last4');
    const history = readFileSync(join(sb.configDir, 'history.ndjson'), 'utf8');
    const fingerprint = (JSON.parse(history) as { token_fingerprint: string }).token_fingerprint;
    for (const query of [`…${token.slice(-4)}`, `...${token.slice(-4)}`, fingerprint]) {
      const result = await ok(sb, ['whois', query]);
      expect(result.stdout, query).toContain('"hw-last4"');
    }
    const unknown = await runMain(['whois', '-'], {
      sandbox: sb,
      env: env(),
      stdin: 'f'.repeat(64),
    });
    expect(unknown.code, describeRun(unknown)).toBe(1);
    expect(unknown.stdout).toContain('not seen in this history');
    const noArgument = await runMain(['whois'], { sandbox: sb, env: env() });
    expect(noArgument.code).toBe(2);
    expect(noArgument.stderr).toContain('ugs whois -');
  });

  it('--check asks the service: exit 0 for the current token, 1 for a rotated one', async () => {
    const sb = makeSandbox();
    const old = await tokenOf(sb, 'hw-check');
    const current = await ok(sb, ['whois', '-', '--check'], old);
    expect(current.stdout).toContain("IS the group's current token");
    const fresh = await rotated(sb, old);
    const stale = await runMain(['whois', '-', '--check'], { sandbox: sb, env: env(), stdin: old });
    expect(stale.code, describeRun(stale)).toBe(1);
    expect(stale.stdout).toContain(`NOT the group's current token, which is …${fresh.slice(-4)}`);
    // Another service than the one the history saw: refused, nothing sent there.
    const elsewhere = await runMain(['whois', '-', '--check'], {
      sandbox: sb,
      env: { ...env(), UGS_BASE_URL: 'http://127.0.0.1:9' },
      stdin: fresh,
    });
    expect(elsewhere.code, describeRun(elsewhere)).toBe(2);
    expect(elsewhere.stderr).toContain('was seen at');
  });

  it("a rotation's 404 for a token the history knows says whose it was, who rotated it when, and how to read the current one", async () => {
    const sb = makeSandbox();
    const old = await tokenOf(sb, 'hw-stale-hint');
    await rotated(sb, old);
    const again = await runMain(['rotate', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      env: env(),
      stdin: old,
    });
    expect(again.code, describeRun(again)).toBe(1);
    const hint = again.stderr.split('\n').find((line) => line.startsWith('hint:')) ?? '';
    expect(hint).toContain(
      'the history knows this token: it was the token of user group "hw-stale-hint" (Name hw-stale-hint), profile "default"',
    );
    expect(hint).toMatch(
      /it was rotated \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ by \S+@\S+ \(profile "default"\) to …/,
    );
    expect(hint).toContain(
      "`ugs get --id hw-stale-hint --name 'Name hw-stale-hint' --must-exist --field token`",
    );
    expect(again.stderr).not.toContain(old);
    // A token the history never saw keeps the operation's own hint.
    const unknown = await runMain(['rotate', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      env: env(),
      stdin: 'f'.repeat(64),
    });
    expect(unknown.code, describeRun(unknown)).toBe(1);
    expect(unknown.stderr).not.toContain('the history knows this token');
    expect(unknown.stderr).toContain('does not know this token');
  });

  it('reads a shared history file given by --history-file', async () => {
    const sb = makeSandbox();
    const shared = join(sb.root, 'team.ndjson');
    writeFileSync(shared, '', { mode: 0o600 });
    const token = (
      await ok(sb, [
        '--history-file',
        shared,
        'get',
        '--id',
        'hw-team',
        '--name',
        'T',
        '--field',
        'token',
      ])
    ).stdout.trim();
    const other = makeSandbox();
    const result = await runMain(['whois', '-', '--history-file', shared], {
      sandbox: other,
      env: env(),
      stdin: token,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toContain('"hw-team"');
  });
});

describe('ugs whois --check --id', () => {
  it('asks the service about a token the history never saw: exit 0 when current, 1 when not', async () => {
    const token = await tokenOf(makeSandbox(), 'hw-by-id');
    // Another machine: its history knows nothing of the token.
    const sb = makeSandbox();
    const argv = ['whois', '--check', '--id', 'hw-by-id', '--name', 'Name hw-by-id', '-'];
    const current = await runMain(argv, { sandbox: sb, env: env(), stdin: token });
    expect(current.code, describeRun(current)).toBe(0);
    expect(current.stdout).toContain("it IS the group's current token");
    expect(current.stdout + current.stderr).not.toContain(token);
    const other = await runMain([...argv, '--json'], {
      sandbox: sb,
      env: env(),
      stdin: 'f'.repeat(64),
    });
    expect(other.code, describeRun(other)).toBe(1);
    expect(JSON.parse(other.stdout)).toMatchObject({
      user_group_id: 'hw-by-id',
      current: false,
      current_last4: token.slice(-4),
    });
  });

  it('a group the check created: exit 1, saying it was created and ugs cannot remove it', async () => {
    const sb = makeSandbox();
    const result = await runMain(['whois', '--check', '--id', 'hw-by-id-new', '--name', 'N', '-'], {
      sandbox: sb,
      env: env(),
      stdin: 'f'.repeat(64),
    });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout).toContain('the get created it now, and ugs cannot remove it');
  });

  it('explo: the group the check created is deleted again', async () => {
    const { sb, service } = await serviceWithProfile(
      'apitoken-whois-explo-2468',
      {
        dialect: 'explo',
      },
      { dialect: 'explo' },
    );
    const result = await runMain(['whois', '--check', '--id', 'amce', '--name', 'A', '-'], {
      sandbox: sb,
      stdin: 'f'.repeat(64),
    });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout).toContain('ugs deleted that new group again');
    expect(service.requests.map((r) => [r.method, r.url])).toEqual([
      ['POST', '/api/create_user_group/'],
      ['DELETE', '/api/delete_user_group/'],
    ]);
    await expect(service.group('amce')).rejects.toThrow();
  });

  it('customer: reads with get_customer/ (no --name needed); a missing group creates nothing', async () => {
    const { sb, service } = await serviceWithProfile(
      'apitoken-whois-customer-1357',
      {
        dialect: 'customer',
      },
      { dialect: 'customer' },
    );
    const { token } = await service.seed('acme', 'Acme');
    const current = await runMain(['whois', '--check', '--id', 'acme', '-'], {
      sandbox: sb,
      stdin: token,
    });
    expect(current.code, describeRun(current)).toBe(0);
    const missing = await runMain(['whois', '--check', '--id', 'amce', '-'], {
      sandbox: sb,
      stdin: token,
    });
    expect(missing.code, describeRun(missing)).toBe(1);
    expect(missing.stdout).toContain('does not exist');
    expect(service.requests.map((r) => r.url)).toEqual([
      '/api/get_customer/',
      '/api/get_customer/',
    ]);
    expect(service.createdIds()).toEqual([]);
  });

  it.each([
    [['whois', '--id', 'acme', '--name', 'A', '-'], /--id goes with --check/],
    [['whois', '--check', '--name', 'A', '-'], /--name goes with --id/],
    [['whois', '--check', '--id', 'acme', '--name', 'A', '…a1b2'], /compares a whole token/],
    [['whois', '--check', '--id', 'acme', '-'], /--id needs --name/],
  ])('%j is a usage error (exit 2), nothing sent', async (argv, error) => {
    const result = await runMain(argv, {
      sandbox: makeSandbox(),
      env: env(),
      stdin: 'f'.repeat(64),
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toMatch(error);
  });
});

describe('--since', () => {
  const now = new Date(Date.UTC(2026, 1, 10, 12, 0, 0));
  const back = (ms: number) => now.getTime() - ms;

  it.each<[string, number]>([
    ['90m', back(5_400_000)],
    ['12h', back(43_200_000)],
    ['7D', back(604_800_000)],
    ['2w', back(1_209_600_000)],
    ['1d12h', back(129_600_000)],
    ['30s', back(30_000)],
    [' 0s ', now.getTime()],
    ['2026-01-31', Date.UTC(2026, 0, 31)],
    ['2026-01-31T12:00:00Z', Date.UTC(2026, 0, 31, 12)],
    ['2026-01-31 12:00:00+02:00', Date.UTC(2026, 0, 31, 10)],
  ])('%j is %d', (text, ms) => {
    expect(parseSince(text, now)).toBe(ms);
  });

  it.each(['tomorrow', '90', '1.5h', '500ms', '1h 30m', '2026-13-45', ''])(
    'refuses %j as a usage error',
    (text) => {
      expect(() => parseSince(text, now)).toThrow(UsageError);
      expect(() => parseSince(text, now)).toThrow(/^--since expects a date or a duration/);
    },
  );

  it.each<[string, number]>([
    ['today', Date.UTC(2026, 1, 10)],
    [' Yesterday ', Date.UTC(2026, 1, 9)],
  ])('%j starts its day (UTC)', (text, ms) => {
    expect(parseSince(text, now)).toBe(ms);
  });
});

describe('--until', () => {
  const now = new Date(Date.UTC(2026, 1, 10, 12, 0, 0));
  const endOf = (ms: number) => ms + 86_400_000 - 1;

  it.each<[string, number]>([
    ['today', endOf(Date.UTC(2026, 1, 10))],
    ['yesterday', endOf(Date.UTC(2026, 1, 9))],
    ['2026-01-31', endOf(Date.UTC(2026, 0, 31))],
    ['2026-01-31T12:00:00Z', Date.UTC(2026, 0, 31, 12)],
    ['12h', now.getTime() - 43_200_000],
  ])('%j is %d (a day named counts whole)', (text, ms) => {
    expect(parseUntil(text, now)).toBe(ms);
  });

  it('refuses what --since refuses, naming --until', () => {
    expect(() => parseUntil('soon', now)).toThrow(/^--until expects a date or a duration/);
  });
});

describe('--outcome', () => {
  it('takes repeated flags and comma lists, once each', () => {
    expect(parseOutcomes(['rotated,stale', 'Rotated', ' found '])).toEqual([
      'rotated',
      'stale',
      'found',
    ]);
    expect(parseOutcomes([])).toBeUndefined();
  });

  it('refuses a word that is no outcome, listing them', () => {
    expect(() => parseOutcomes(['rotatd'])).toThrow(/--outcome "rotatd" is not an outcome/);
  });
});

describe('ugs history --until and --outcome', () => {
  it('filter the events; a bad value is exit 2', async () => {
    const sb = makeSandbox();
    await rotated(sb, await tokenOf(sb, 'hw-filter'));
    const outcomes = async (...argv: string[]) =>
      (await ok(sb, ['history', '--json', ...argv])).stdout
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => (JSON.parse(line) as { outcome: string }).outcome);
    expect(await outcomes()).toEqual(['rotated', 'created']);
    expect(await outcomes('--outcome', 'rotated')).toEqual(['rotated']);
    expect(await outcomes('--outcome', 'created,stale', '--outcome', 'found')).toEqual(['created']);
    expect(await outcomes('--since', 'today', '--until', 'today')).toEqual(['rotated', 'created']);
    expect(await outcomes('--until', 'yesterday')).toEqual([]);
    expect(await outcomes('--until', '2000-01-01T00:00:00Z')).toEqual([]);
    for (const argv of [
      ['--outcome', 'rotatd'],
      ['--until', 'soon'],
      ['--since', 'today', '--until', 'yesterday'],
    ]) {
      const result = await runMain(['history', ...argv], { sandbox: sb, env: env() });
      expect(result.code, describeRun(result)).toBe(2);
    }
  });
});
