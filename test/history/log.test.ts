/**
 * The token history: every get and rotate that reached the service appends
 * one event to `history.ndjson` in the config directory, with tokens as fingerprints only.
 * In-process (runMain) against the in-process emulator.
 */
import { createHmac } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/fs/file-lock.js';
import { readRecords } from '../kit/bulk.js';
import {
  describeRun,
  liveProcess,
  makeSandbox,
  runMain,
  type Sandbox,
  tempDir,
  useEmulator,
} from '../kit/index.js';

const emulator = useEmulator();
let apiToken: string;
beforeAll(() => {
  apiToken = emulator.tokenFor('Customer');
});

const env = () => ({ UGS_BASE_URL: emulator.url, UGS_API_TOKEN: apiToken });

interface Event {
  [field: string]: unknown;
  outcome: string;
}

const events = (path: string) => readRecords<Event>(path);

const historyOf = (sb: Sandbox) => join(sb.configDir, 'history.ndjson');

function fingerprint(keyFile: string, token: string): string {
  const key = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'hex');
  return createHmac('sha256', key).update(token).digest('hex').slice(0, 12);
}

async function get(sb: Sandbox, id: string, extra: Record<string, string> = {}) {
  const result = await runMain(['get', '--id', id, '--name', `Name ${id}`, '--json'], {
    sandbox: sb,
    env: { ...env(), ...extra },
  });
  expect(result.code, describeRun(result)).toBe(0);
  return (JSON.parse(result.stdout) as { user_group: { token: string } }).user_group.token;
}

async function rotate(sb: Sandbox, token: string, extra: Record<string, string> = {}) {
  return runMain(['rotate', '--current-token-stdin', '--yes', '--json'], {
    sandbox: sb,
    stdin: token,
    env: { ...env(), ...extra },
  });
}

describe('the history of single runs', () => {
  it('a get appends created then found, a rotate rotated, a spent token stale; fingerprints only', async () => {
    const sb = makeSandbox();
    const first = await get(sb, 'hist-acme');
    const again = await get(sb, 'hist-acme');
    expect(again).toBe(first);
    const rotated = await rotate(sb, first);
    expect(rotated.code, describeRun(rotated)).toBe(0);
    const newToken = (JSON.parse(rotated.stdout) as { user_group: { token: string } }).user_group
      .token;
    const refused = await rotate(sb, first);
    expect(refused.code, describeRun(refused)).toBe(1);

    const path = historyOf(sb);
    const key = join(sb.configDir, 'history.key');
    const all = events(path);
    expect(all.map((event) => event.outcome)).toEqual(['created', 'found', 'rotated', 'stale']);
    for (const event of all) {
      expect(Object.keys(event)).toEqual([
        'time',
        'user',
        'host',
        'profile',
        'base_url',
        'dialect',
        'user_group_id',
        'name',
        'outcome',
        ...(event.environment_tag === undefined ? [] : ['environment_tag']),
        'sent_last4',
        'sent_fingerprint',
        'token_last4',
        'token_fingerprint',
      ]);
      expect(event.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(event).toMatchObject({
        profile: 'default',
        base_url: emulator.url.replace(/\/$/, ''),
        dialect: 'interface',
      });
      expect(typeof event.user).toBe('string');
      expect(typeof event.host).toBe('string');
    }
    expect(all[0]).toMatchObject({
      user_group_id: 'hist-acme',
      name: 'Name hist-acme',
      sent_last4: null,
      sent_fingerprint: null,
      token_last4: first.slice(-4),
      token_fingerprint: fingerprint(key, first),
    });
    expect(all[2]).toMatchObject({
      user_group_id: 'hist-acme',
      outcome: 'rotated',
      environment_tag: 'Customer',
      sent_last4: first.slice(-4),
      sent_fingerprint: fingerprint(key, first),
      token_last4: newToken.slice(-4),
      token_fingerprint: fingerprint(key, newToken),
    });
    expect(all[3]).toMatchObject({ outcome: 'stale', sent_fingerprint: fingerprint(key, first) });
    // No whole token of the run, API token included, anywhere in the file.
    const text = readFileSync(path, 'utf8');
    // Each line is compact JSON, as JSON.stringify writes it (the writer builds lines by hand).
    for (const line of text.trimEnd().split('\n')) {
      expect(line).toBe(JSON.stringify(JSON.parse(line)));
    }
    for (const token of [first, newToken, apiToken]) expect(text).not.toContain(token);
    // 0600 in a 0700 directory, like the config; the key too.
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(statSync(sb.configDir).mode & 0o777).toBe(0o700);
  });

  it('--no-history and UGS_NO_HISTORY=1 write nothing', async () => {
    const sb = makeSandbox();
    const flag = await runMain(['--no-history', 'get', '--id', 'h-off', '--name', 'Off'], {
      sandbox: sb,
      env: env(),
    });
    expect(flag.code, describeRun(flag)).toBe(0);
    const after = await runMain(['get', '--id', 'h-off', '--name', 'Off', '--no-history'], {
      sandbox: sb,
      env: env(),
    });
    expect(after.code, describeRun(after)).toBe(0);
    await get(sb, 'h-off', { UGS_NO_HISTORY: '1' });
    expect(existsSync(historyOf(sb))).toBe(false);
  });

  it('--history-file wins over UGS_HISTORY_FILE; a shared file keeps its mode, and its key sits beside it', async () => {
    const sb = makeSandbox();
    const dir = tempDir('shared-history');
    const shared = join(dir, 'team.ndjson');
    const other = join(dir, 'other.ndjson');
    writeFileSync(shared, '', { mode: 0o640 });
    chmodSync(shared, 0o660);
    const result = await runMain(
      ['--history-file', shared, 'get', '--id', 'h-shared', '--name', 'Shared'],
      { sandbox: sb, env: { ...env(), UGS_HISTORY_FILE: other } },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(events(shared).map((event) => event.user_group_id)).toEqual(['h-shared']);
    expect(existsSync(other)).toBe(false);
    expect(existsSync(historyOf(sb))).toBe(false);
    expect(statSync(shared).mode & 0o777).toBe(0o660);
    expect(existsSync(join(dir, 'team.key'))).toBe(true);
    // The variable alone is used too.
    await get(sb, 'h-env', { UGS_HISTORY_FILE: other });
    expect(events(other).map((event) => event.user_group_id)).toEqual(['h-env']);
  });

  it('a history file that cannot be written is one warning, never a failed command', async () => {
    const sb = makeSandbox();
    const dir = tempDir('bad-history');
    const target = join(dir, 'real.ndjson');
    writeFileSync(target, '');
    const link = join(dir, 'link.ndjson');
    symlinkSync(target, link);
    const result = await runMain(
      ['--history-file', link, 'get', '--id', 'h-bad', '--name', 'Bad', '--json'],
      { sandbox: sb, env: env() },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ user_group: { provided_id: 'h-bad' } });
    expect(result.stderr).toMatch(/^warning: the token history was not written .*symbolic link/m);
    expect(readFileSync(target, 'utf8')).toBe('');
    // A world-writable shared file is refused the same way.
    const open = join(dir, 'open.ndjson');
    writeFileSync(open, '');
    chmodSync(open, 0o666);
    const world = await runMain(['--history-file', open, 'get', '--id', 'h-bad', '--name', 'B'], {
      sandbox: sb,
      env: env(),
    });
    expect(world.code, describeRun(world)).toBe(0);
    expect(world.stderr).toMatch(/warning: the token history was not written .*everyone/);
    expect(readFileSync(open, 'utf8')).toBe('');
  });

  it('past 10 MB the file is rotated once to history.1.ndjson', async () => {
    const sb = makeSandbox();
    mkdirSync(sb.configDir, { mode: 0o700 });
    const line = `${JSON.stringify({ time: '2020-01-01T00:00:00.000Z', outcome: 'found', user_group_id: 'old', pad: 'x'.repeat(200) })}\n`;
    const big = line.repeat(Math.ceil((10 * 1024 * 1024) / line.length));
    writeFileSync(historyOf(sb), big, { mode: 0o600 });
    writeFileSync(join(sb.configDir, 'history.1.ndjson'), 'older\n', { mode: 0o600 });
    await get(sb, 'h-rotate');
    const rotated = join(sb.configDir, 'history.1.ndjson');
    expect(readFileSync(rotated, 'utf8')).toBe(big);
    expect(events(historyOf(sb)).map((event) => event.user_group_id)).toEqual(['h-rotate']);
    expect(statSync(historyOf(sb)).mode & 0o777).toBe(0o600);
  });
});

describe('the history of bulk runs', () => {
  it('get --from and rotate --from append one event per answered row, no whole token in the file', async () => {
    const sb = makeSandbox();
    const input = join(sb.root, 'rows.csv');
    writeFileSync(input, 'user_group_id,name\nhb-1,One\nhb-2,Two\nhb-3,Three\n');
    const output = join(sb.root, 'got.ndjson');
    const got = await runMain(['get', '--from', input, '--output', output], {
      sandbox: sb,
      env: env(),
    });
    expect(got.code, describeRun(got)).toBe(0);
    const records = events(output);
    const tokens = records.map((record) => record.token as string);
    const rotated = join(sb.root, 'rotated.ndjson');
    const rot = await runMain(['rotate', '--from', output, '--output', rotated, '--yes'], {
      sandbox: sb,
      env: env(),
    });
    expect(rot.code, describeRun(rot)).toBe(0);
    const newTokens = events(rotated)
      .filter((record) => record.status === 'rotated')
      .map((record) => record.token as string);
    const all = events(historyOf(sb));
    expect(all.map((event) => `${event.user_group_id} ${event.outcome}`).sort()).toEqual([
      'hb-1 created',
      'hb-1 rotated',
      'hb-2 created',
      'hb-2 rotated',
      'hb-3 created',
      'hb-3 rotated',
    ]);
    const key = join(sb.configDir, 'history.key');
    const rotations = all.filter((event) => event.outcome === 'rotated');
    expect(rotations.map((event) => event.sent_fingerprint).sort()).toEqual(
      tokens.map((token) => fingerprint(key, token)).sort(),
    );
    expect(rotations.map((event) => event.token_fingerprint).sort()).toEqual(
      newTokens.map((token) => fingerprint(key, token)).sort(),
    );
    const text = readFileSync(historyOf(sb), 'utf8');
    for (const token of [...tokens, ...newTokens, apiToken]) expect(text).not.toContain(token);
    // A bulk event has a single run's fields, in their order, as compact JSON.
    for (const line of text.trimEnd().split('\n')) {
      expect(line).toBe(JSON.stringify(JSON.parse(line)));
    }
    expect(rotations[0]).toMatchObject({ environment_tag: 'Customer', dialect: 'interface' });
    expect(Object.keys(rotations[0] ?? {})).toEqual(
      Object.keys(all[0] ?? {}).toSpliced(9, 0, 'environment_tag'),
    );
  });
});

describe('a lock held beside a shared history', () => {
  const notes = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('note: history'));

  it.skipIf(process.platform !== 'linux')(
    'get and bulk get go on without the history, saying so once; history and whois do not wait for it',
    async () => {
      const sb = makeSandbox();
      const shared = join(sb.root, 'team.ndjson');
      const token = await get(sb, 'hl-first', { UGS_HISTORY_FILE: shared });
      const before = readFileSync(shared, 'utf8');
      // What file-lock.ts counts as held: a live process with its own start time.
      const pid = await liveProcess();
      const lock = `${shared}.lock`;
      writeFileSync(lock, `${pid}\n0123456789abcdef\n${processStartTime(pid) ?? ''}\n`);
      const withLock = { ...env(), UGS_HISTORY_FILE: shared };

      // Each run must finish while the lock stays held (the kit's run timeout fails it otherwise).
      const single = await runMain(['get', '--id', 'hl-second', '--name', 'S', '--json'], {
        sandbox: sb,
        env: withLock,
      });
      expect(single.code, describeRun(single)).toBe(0);
      expect(notes(single.stderr)).toEqual([
        `note: history not written: ${lock} is held by another process (pid ${pid}); this run's events are left out (if no ugs is running, delete the lock; --no-history turns the history off)`,
      ]);
      expect(single.stderr).not.toContain('warning:');

      const input = join(sb.root, 'rows.csv');
      let rows = 'user_group_id,name\n';
      for (let i = 1; i <= 50; i++) rows += `hl-bulk-${i},Bulk ${i}\n`;
      writeFileSync(input, rows);
      const bulk = await runMain(
        ['get', '--from', input, '--output', join(sb.root, 'out.ndjson')],
        { sandbox: sb, env: withLock },
      );
      expect(bulk.code, describeRun(bulk)).toBe(0);
      expect(notes(bulk.stderr)).toHaveLength(1);

      const history = await runMain(['history', '--json'], { sandbox: sb, env: withLock });
      expect(history.code, describeRun(history)).toBe(0);
      expect(history.stdout).toContain('hl-first');
      const whois = await runMain(['whois', '-'], { sandbox: sb, env: withLock, stdin: token });
      expect(whois.code, describeRun(whois)).toBe(0);

      expect(readFileSync(shared, 'utf8')).toBe(before);
      expect(readFileSync(lock, 'utf8')).toContain(String(pid));
    },
  );
});
