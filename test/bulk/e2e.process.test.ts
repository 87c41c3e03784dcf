/**
 * Bulk runs (`get --from`, `rotate --from`) against the emulator: quoting, validation before any
 * request, results and --resume after kill -9, exactly-once rotation when the service commits and
 * then drops the connection, a 429 storm, and Ctrl+C. The emulator runs in-process (its own
 * process is test/emulator's and the story's), and so do the runs, except where a process is the
 * point: kill -9 and Ctrl+C are the built binary's.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastByRow, readRecords } from '../kit/bulk.js';
import {
  closedPort,
  customerEnv,
  type EmulatorOptions,
  type MainOptions,
  makeSandbox,
  runMain,
  runUgs,
  type Sandbox,
  describeRun as show,
  stall,
  startEmulator as startInProcess,
  startServer,
  startUgs,
  waitForSockets,
} from '../kit/index.js';

const ugs = (
  sandbox: Sandbox,
  args: readonly string[],
  options: Omit<MainOptions, 'sandbox'> = {},
) => runMain(args, { sandbox, ...options });

interface Emulator {
  url: string;
  tokenFor(environment: 'Customer' | 'Testing'): string;
  /** Requests answered so far, one line each: `GET /api/user 200 3ms created id="g-1"`. */
  requestLines(): string[];
  stop(): Promise<void>;
}

/** The emulator in-process, logging every request it answered (as `ugs serve --debug` does). */
async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const lines: string[] = [];
  // Each line starts with its time: dropped, so that a line starts with the method.
  const log = (line: string) => void lines.push(line.slice(line.indexOf(' ') + 1));
  const running = await startInProcess({ ...options, log });
  return {
    url: running.url,
    tokenFor: (environment) => running.tokenFor(environment),
    requestLines: () => lines.filter((line) => /^(GET|POST) \//.test(line)),
    stop: () => running.close(),
  };
}

interface Rec {
  row: number;
  user_group_id: string | null;
  name: string | null;
  status: string;
  token: string | null;
  settled_by?: string;
  error: string | null;
}

const records = (path: string): Rec[] => readRecords<Rec>(path);

function groupRows(count: number, prefix: string): string {
  return Array.from(
    { length: count },
    (_, i) =>
      `${JSON.stringify({ user_group_id: `${prefix}-${i + 1}`, name: `Group ${i + 1}` })}\n`,
  ).join('');
}

function requestLines(emulator: Emulator): string[] {
  return emulator.requestLines();
}

/** `get --from groups --output out`, then `--resume` until every row is done (faults may hit). */
async function getAllResuming(
  sandbox: Sandbox,
  emulator: Emulator,
  groups: string,
  out: string,
): Promise<void> {
  const args = ['get', '--from', groups, '--output', out];
  const options = { env: customerEnv(emulator), timeoutMs: 60_000 };
  let result = await ugs(sandbox, args, options);
  for (let i = 0; i < 5 && result.code !== 0; i++) {
    result = await ugs(sandbox, [...args, '--resume'], options);
  }
  expect(result.code, show(result)).toBe(0);
}

/** Creates the groups (retrying through --resume while faults hit) and returns rotate rows. */
async function createGroups(
  sandbox: Sandbox,
  emulator: Emulator,
  count: number,
  prefix: string,
): Promise<string> {
  const groups = join(sandbox.root, `${prefix}-groups.ndjson`);
  const created = join(sandbox.root, `${prefix}-created.ndjson`);
  writeFileSync(groups, groupRows(count, prefix));
  await getAllResuming(sandbox, emulator, groups, created);
  const last = lastByRow(records(created));
  expect(last.size).toBe(count);
  const rotateInput = join(sandbox.root, `${prefix}-rotate.ndjson`);
  writeFileSync(
    rotateInput,
    [...last.values()]
      .sort((a, b) => a.row - b.row)
      .map(
        (rec) =>
          `${JSON.stringify({ current_token: rec.token, user_group_id: rec.user_group_id, name: rec.name })}\n`,
      )
      .join(''),
  );
  return rotateInput;
}

/** The groups' current tokens as the emulator has them, read with `ugs get --from`. */
async function currentTokens(
  sandbox: Sandbox,
  emulator: Emulator,
  count: number,
  prefix: string,
): Promise<Map<string, string>> {
  const groups = join(sandbox.root, `${prefix}-groups.ndjson`);
  const out = join(sandbox.root, `${prefix}-readback-${Date.now()}.ndjson`);
  await getAllResuming(sandbox, emulator, groups, out);
  const tokens = new Map<string, string>();
  for (const rec of lastByRow(records(out)).values()) {
    expect(rec.status, 'read back: the group must exist already').toBe('found');
    tokens.set(rec.user_group_id ?? '', rec.token ?? '');
  }
  expect(tokens.size).toBe(count);
  return tokens;
}

// In sequence: these tests count the requests of one shared emulator.
describe('bulk get: input and validation', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(async () => {
    await emulator.stop();
  });

  it('reads RFC 4180 quoting: commas, doubled quotes and line breaks inside cells, a BOM', async () => {
    const sandbox = makeSandbox();
    const file = join(sandbox.root, 'groups.csv');
    writeFileSync(
      file,
      '\ufeffuser_group_id,name,mapping,properties.plan\r\n' +
        'q-1,"Acme, Inc.","{""sales"":""db1""}",pro\r\n' +
        'q-2,"Say ""hi""",,\r\n' +
        'q-3,Lines,,"Two\r\nlines, one ""plan"""\r\n',
    );
    const result = await ugs(sandbox, ['get', '--from', file, '--debug'], {
      env: customerEnv(emulator),
    });
    expect(result.code, show(result)).toBe(0);
    const recs = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Rec);
    const byId = new Map(recs.map((rec) => [rec.user_group_id, rec]));
    expect(byId.get('q-1')?.name).toBe('Acme, Inc.');
    expect(byId.get('q-2')?.name).toBe('Say "hi"');
    expect(byId.get('q-3')?.name).toBe('Lines');
    expect(recs.map((rec) => rec.status)).toEqual(['created', 'created', 'created']);
    // The service got the JSON column and the keyed column as objects (--debug shows the bodies).
    const sent = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('[debug] > {'))
      .map((line) => JSON.parse(line.slice('[debug] > '.length)));
    expect(sent).toContainEqual({
      name: 'Acme, Inc.',
      user_group_id: 'q-1',
      mapping: { sales: 'db1' },
      properties: { plan: 'pro' },
    });
    expect(sent).toContainEqual({
      name: 'Lines',
      user_group_id: 'q-3',
      properties: { plan: 'Two\r\nlines, one "plan"' },
    });
    expect(result.stderr).toMatch(/3 rows in .*: 3 created/);
  });

  it('checks every row before sending anything: problems listed by row and line, exit 2', async () => {
    const sandbox = makeSandbox();
    const file = join(sandbox.root, 'bad.csv');
    writeFileSync(
      file,
      'user_group_id,name,mapping\n' +
        'v-ok,Fine,\n' +
        ' v-space,Leading space,\n' +
        'v-ok,Duplicate,\n' +
        'v-3,"Multi\nline name ok","{not json"\n' +
        'v-4,,\n',
    );
    const before = requestLines(emulator).length;
    const result = await ugs(sandbox, ['get', '--from', file], { env: customerEnv(emulator) });
    expect(result.code, show(result)).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('row 2 (line 3): user_group_id " v-space"');
    expect(result.stderr).toContain('row 3 (line 4): user_group_id "v-ok" is also in row 1');
    expect(result.stderr).toContain('row 4 (line 5): mapping is not valid JSON');
    expect(result.stderr).toContain('row 5 (line 7): name is missing');
    expect(result.stderr).toContain('nothing was sent');
    // Give a stray request time to be logged before counting.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(requestLines(emulator).length).toBe(before);
  });

  it('a sheet with a column ugs does not know: rehearsed with --dry-run, then sent with --column', async () => {
    const sandbox = makeSandbox();
    const file = join(sandbox.root, 'groups.csv');
    writeFileSync(file, 'User Group ID;Name;Plan\r\nd-1;One;pro\r\nd-2;Two;free\r\n');
    const before = requestLines(emulator).length;
    // The built binary, as a CI job runs it: no terminal, the service configured.
    const dry = await runUgs(['get', '--from', file, '--dry-run'], {
      sandbox,
      env: customerEnv(emulator),
    });
    expect(dry.code, show(dry)).toBe(0);
    expect(dry.stdout).toContain('nothing was sent');
    expect(dry.stdout).toContain('  fields sent     name 2, user_group_id 2\n');
    expect(dry.stdout).toContain('  columns ignored "Plan"');
    expect(dry.stderr).toContain('--column Plan=properties.Plan maps it');
    const mapped = ['get', '--from', file, '--column', 'Plan=properties.plan'];
    const json = await runUgs([...mapped, '--dry-run', '--json'], { sandbox });
    expect(json.code, show(json)).toBe(0);
    expect(
      json.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      { row: 1, would_send: { name: 'One', user_group_id: 'd-1', properties: { plan: 'pro' } } },
      { row: 2, would_send: { name: 'Two', user_group_id: 'd-2', properties: { plan: 'free' } } },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(requestLines(emulator).length).toBe(before);

    const sent = await ugs(sandbox, mapped, { env: customerEnv(emulator) });
    expect(sent.code, show(sent)).toBe(0);
    expect(sent.stderr).not.toContain('ugs does not know');
    const recs = sent.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Rec);
    expect(recs.map((rec) => [rec.user_group_id, rec.status])).toEqual([
      ['d-1', 'created'],
      ['d-2', 'created'],
    ]);
    expect(requestLines(emulator).length).toBe(before + 2);
  });

  it.each([
    [['get', '--from', 'x.csv', '--id', 'a'], '--from cannot be combined with --id'],
    [['get', '--from', 'x.csv', '--field', 'token'], '--from cannot be combined with --field'],
    [['get', '--from', '-'], '--format'],
    [['get', '--from', 'x.txt'], 'extension'],
    [
      ['get', '--output', 'r.ndjson', '--id', 'a', '--name', 'b'],
      '--output works only with --from',
    ],
    [['get', '--from', 'x.csv', '--resume'], '--resume needs --output'],
    [['get', '--from', 'x.csv', '--concurrency', '65'], '--concurrency must be'],
    [['get', '--from', 'x.csv', '--give-up-after', '10x'], '--give-up-after expects a duration'],
    [['get', '--from', 'x.csv', '--give-up-after', '0s'], '--give-up-after must be more than 0'],
    [
      ['get', '--id', 'a', '--name', 'b', '--give-up-after', '10m'],
      '--give-up-after works only with --from',
    ],
    [['rotate', '--from', 'x.csv', '--yes'], 'rotate --from needs --output'],
    [['rotate', '--from', 'x.csv', '--current-token', 't', '--output', 'r.csv'], '--current-token'],
    [['rotate', '--from', 'x.csv', '--output', 'r.ndjson'], '--yes is required'],
  ])('usage error for %j', async (args, message) => {
    const sandbox = makeSandbox();
    const before = requestLines(emulator).length;
    const result = await ugs(sandbox, args, { env: customerEnv(emulator), stdin: '' });
    expect(result.code, show(result)).toBe(2);
    expect(result.stderr).toContain(message);
    expect(requestLines(emulator).length).toBe(before);
  });
});

// The suites below run side by side (describe.concurrent): most of their time is waiting (the
// 'slow' fault's 2 s, Retry-After: 1, back-off), and each test has its own sandbox and group
// names and, where it scripts faults or counts requests, its own emulator.
describe.concurrent('bulk rotate: exactly once', () => {
  it('settles every rotation whose answer was lost (commit-reset): each group ends rotated once, with the service token', async () => {
    const emulator = await startEmulator({
      faults: [{ kind: 'commit-reset', rate: 0.3 }],
      seed: 11,
    });
    try {
      const sandbox = makeSandbox();
      const count = 40;
      const input = await createGroups(sandbox, emulator, count, 'cr');
      const out = join(sandbox.root, 'rotated.ndjson');
      const postsBefore = requestLines(emulator).filter((l) => l.startsWith('POST')).length;
      const result = await ugs(
        sandbox,
        ['rotate', '--from', input, '--output', out, '--yes', '--concurrency', '4'],
        { env: customerEnv(emulator), timeoutMs: 60_000 },
      );
      expect(result.code, show(result)).toBe(0);
      const recs = records(out);
      const last = lastByRow(recs);
      expect(last.size).toBe(count);
      for (const rec of last.values()) expect(rec.status, JSON.stringify(rec)).toBe('rotated');
      // The fault did hit: some outcomes were learnt by reading the token back.
      expect(recs.filter((rec) => rec.settled_by === 'get').length).toBeGreaterThan(0);
      const tokens = await currentTokens(sandbox, emulator, count, 'cr');
      for (const rec of last.values()) expect(rec.token).toBe(tokens.get(rec.user_group_id ?? ''));
      // One committed rotation per group: every POST that reached the store is one of them
      // (a second one would have sent the old, dead token and been refused with a 404).
      const posts = requestLines(emulator)
        .filter((l) => l.startsWith('POST'))
        .slice(postsBefore);
      expect(posts.filter((l) => / 404 /.test(l))).toEqual([]);
    } finally {
      await emulator.stop();
    }
  }, 120_000);

  it('leaves unsettled rotations unknown (exit 5); --resume settles them first, never rotating twice', async () => {
    const sandbox = makeSandbox();
    const state = join(sandbox.root, 'state.json');
    const plain = await startEmulator({ dataFile: state });
    const input = await createGroups(sandbox, plain, 3, 'un');
    await plain.stop();
    const rows = readFileSync(input, 'utf8').trim().split('\n');
    const anonymous = JSON.parse(rows[2] ?? '{}') as { current_token: string };
    writeFileSync(
      input,
      `${rows[0]}\n${rows[1]}\n${JSON.stringify({ current_token: anonymous.current_token })}\n`,
    );
    const out = join(sandbox.root, 'rotated.ndjson');
    // Every answer is lost, the settling reads too: nothing can be learnt in this run.
    const lossy = await startEmulator({
      dataFile: state,
      faults: [{ kind: 'commit-reset', rate: 1 }],
    });
    try {
      const result = await ugs(sandbox, ['rotate', '--from', input, '--output', out, '--yes'], {
        env: customerEnv(lossy),
        timeoutMs: 30_000,
      });
      expect(result.code, show(result)).toBe(5);
      const last = lastByRow(records(out));
      expect([...last.values()].map((rec) => rec.status)).toEqual([
        'unknown',
        'unknown',
        'unknown',
      ]);
    } finally {
      await lossy.stop();
    }
    const healthy = await startEmulator({ dataFile: state });
    try {
      const before = records(out).length;
      const again = await ugs(
        sandbox,
        // --timeout 2: --resume waits that long after the rows' `sending` records first.
        ['rotate', '--from', input, '--output', out, '--yes', '--resume', '--timeout', '2'],
        { env: customerEnv(healthy), timeoutMs: 30_000 },
      );
      expect(again.code, show(again)).toBe(5);
      const resumed = records(out).slice(before);
      // Rows 1 and 2 had rotated: read back and recorded once; no rotation sent for them again.
      expect(resumed.map((rec) => [rec.row, rec.status, rec.settled_by ?? null])).toEqual(
        expect.arrayContaining([
          [1, 'rotated', 'get'],
          [2, 'rotated', 'get'],
          [3, 'unknown', null],
        ]),
      );
      expect(resumed.length).toBe(3);
      expect(again.stderr).toMatch(/; 2 settled by reading the group back\n/);
      const tokens = await currentTokens(sandbox, healthy, 3, 'un');
      for (const rec of resumed.filter((r) => r.status === 'rotated')) {
        expect(rec.token).toBe(tokens.get(rec.user_group_id ?? ''));
      }
    } finally {
      await healthy.stop();
    }
  }, 60_000);
});

/** `signal` once `count` requests are in flight: the child holds their sockets and has written them. */
async function interruptInFlight(
  child: ChildProcess,
  count: number,
  signal: NodeJS.Signals = 'SIGINT',
): Promise<void> {
  await waitForSockets(child, count);
  await new Promise((resolve) => setTimeout(resolve, 200));
  child.kill(signal);
}

describe.concurrent('bulk runs that stop', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(async () => {
    await emulator.stop();
  });

  it('kill -9 mid-run, then --resume: no row done before is sent again, every row ends done', async () => {
    const sandbox = makeSandbox();
    // Enough rows that the kill (after ~200 records, polled every 20 ms) lands mid-run with
    // thousands still to do, at the fastest rate seen here (~15,000 rows/s).
    const count = 6000;
    const groups = join(sandbox.root, 'k-groups.ndjson');
    writeFileSync(groups, groupRows(count, 'k'));
    const out = join(sandbox.root, 'k-out.ndjson');
    const { child, result: exited } = startUgs(
      ['get', '--from', groups, '--output', out, '--concurrency', '4'],
      { sandbox, env: customerEnv(emulator) },
    );
    for (let i = 0; i < 300; i++) {
      if (existsSync(out) && readFileSync(out, 'utf8').split('\n').length > 200) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill('SIGKILL');
    await exited;
    const first = records(out);
    const doneBefore = new Set(first.map((rec) => rec.row));
    expect(doneBefore.size).toBeGreaterThan(100);
    expect(doneBefore.size).toBeLessThan(count);
    const firstLength = first.length;

    const result = await ugs(
      sandbox,
      ['get', '--from', groups, '--output', out, '--resume', '--concurrency', '16'],
      { env: customerEnv(emulator), timeoutMs: 120_000 },
    );
    expect(result.code, show(result)).toBe(0);
    const all = records(out);
    const resumed = all.slice(firstLength);
    for (const rec of resumed) expect(doneBefore.has(rec.row), `row ${rec.row}`).toBe(false);
    const last = lastByRow(all);
    expect(last.size).toBe(count);
    // Rows in flight at the kill were created without a record; the resumed run finds them.
    const statuses = [...last.values()].map((rec) => rec.status);
    expect(statuses.every((s) => s === 'created' || s === 'found')).toBe(true);
    expect(statuses.filter((s) => s === 'found').length).toBeLessThanOrEqual(16);
  }, 180_000);

  it('a 429 storm: the run waits and slows down, and every row still succeeds', async () => {
    const storm = await startEmulator({ faults: [{ kind: '429', rate: 0.5 }], seed: 3 });
    try {
      const sandbox = makeSandbox();
      const groups = join(sandbox.root, 's-groups.ndjson');
      writeFileSync(groups, groupRows(8, 's'));
      const started = Date.now();
      const result = await ugs(sandbox, ['get', '--from', groups, '--concurrency', '8'], {
        env: customerEnv(storm),
        timeoutMs: 90_000,
      });
      expect(result.code, show(result)).toBe(0);
      const recs = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Rec);
      expect(recs.length).toBe(8);
      expect(new Set(recs.map((rec) => rec.status))).toEqual(new Set(['created']));
      // Retry-After: 1 was honoured at least once.
      expect(Date.now() - started).toBeGreaterThan(1000);
    } finally {
      await storm.stop();
    }
  }, 120_000);

  // SIGHUP (the terminal or ssh session closed) stops a run as SIGTERM does, never kills it.
  it.each([
    ['Ctrl+C', 'SIGINT'],
    ['SIGHUP', 'SIGHUP'],
  ] as const)(
    '%s: stops sending, writes the records of rows in flight, exits 130',
    async (_what, signal) => {
      const slow = await startEmulator({ faults: [{ kind: 'slow', rate: 1 }] });
      try {
        const sandbox = makeSandbox();
        const count = 12;
        const groups = join(sandbox.root, 'c-groups.ndjson');
        writeFileSync(groups, groupRows(count, 'c'));
        const out = join(sandbox.root, 'c-out.ndjson');
        const { child, result } = startUgs(
          ['get', '--from', groups, '--output', out, '--concurrency', '3'],
          {
            sandbox,
            env: customerEnv(slow),
          },
        );

        // The first three requests are in flight (the emulator holds each for 2 s).
        await interruptInFlight(child, 3, signal);
        const { code, stderr } = await result;
        expect(code, stderr).toBe(130);
        const last = lastByRow(records(out));
        const statuses = [...last.values()].map((rec) => rec.status);
        expect(statuses.filter((s) => s === 'created').length).toBe(3);
        expect(statuses.filter((s) => s === 'skipped').length).toBe(count - 3);
        expect(stderr).toContain('interrupted');
      } finally {
        await slow.stop();
      }
    },
    60_000,
  );
  it('a second Ctrl+C exits at once, without waiting for the answers in flight', async () => {
    // A service that never answers: a run that waited for the answers in flight would never end
    // (startUgs's deadline then fails the test), so no clock is read.
    const silent = await startServer(stall());
    try {
      const sandbox = makeSandbox();
      const groups = join(sandbox.root, 'c2-groups.ndjson');
      writeFileSync(groups, groupRows(6, 'c2'));
      const { child, result } = startUgs(['get', '--from', groups, '--concurrency', '3'], {
        sandbox,
        env: { UGS_BASE_URL: silent.url, UGS_API_TOKEN: 'f'.repeat(64) },
        timeoutMs: 10_000,
      });

      await interruptInFlight(child, 3);
      await new Promise((resolve) => setTimeout(resolve, 100));
      child.kill('SIGINT');
      const { code, stdout } = await result;
      expect(code).toBe(130);
      expect(stdout).not.toContain('"created"');
      expect(silent.requests.length).toBe(3);
    } finally {
      await silent.close();
    }
  }, 60_000);

  it('Ctrl+C during rotate: rows in flight end rotated, the rest skipped, none left sending', async () => {
    // The groups are made and read back by a quick emulator over the same data file as the slow
    // one that the rotation meets.
    const sandbox = makeSandbox();
    const count = 9;
    const dataFile = join(sandbox.root, 'state.json');
    const quick = await startEmulator({ dataFile });
    const input = await createGroups(sandbox, quick, count, 'rc').finally(() => quick.stop());
    const slow = await startEmulator({ dataFile, faults: [{ kind: 'slow', rate: 1 }] });
    let rotated: Rec[];
    try {
      const out = join(sandbox.root, 'rc-out.ndjson');
      const { child, result } = startUgs(
        ['rotate', '--from', input, '--output', out, '--yes', '--concurrency', '3'],
        {
          sandbox,
          env: customerEnv(slow),
        },
      );

      await interruptInFlight(child, 3);
      const { code, stderr } = await result;
      expect(code, stderr).toBe(130);
      const last = lastByRow(records(out));
      expect(last.size).toBe(count);
      rotated = [...last.values()].filter((rec) => rec.status === 'rotated');
      expect(rotated.length).toBe(3);
      expect([...last.values()].filter((rec) => rec.status === 'skipped').length).toBe(count - 3);
    } finally {
      await slow.stop();
    }
    const again = await startEmulator({ dataFile });
    try {
      const tokens = await currentTokens(sandbox, again, count, 'rc');
      for (const rec of rotated) expect(rec.token).toBe(tokens.get(rec.user_group_id ?? ''));
    } finally {
      await again.stop();
    }
  }, 90_000);

  it.sequential('kill -9 while the service delays answers, then --resume at once: every row rotated exactly once, none failed or unknown', async () => {
    const sandbox = makeSandbox();
    const count = 6;
    const dataFile = join(sandbox.root, 'state.json');
    const quick = await startEmulator({ dataFile });
    const input = await createGroups(sandbox, quick, count, 'ks').finally(() => quick.stop());
    const inputTokens = new Map(
      readFileSync(input, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { user_group_id: string; current_token: string })
        .map((row) => [row.user_group_id, row.current_token]),
    );
    const slow = await startEmulator({
      dataFile,
      faults: [{ kind: 'slow', rate: 1 }],
      slowMs: 800,
    });
    const out = join(sandbox.root, 'ks-out.ndjson');
    const args = ['rotate', '--from', input, '--output', out, '--yes', '--concurrency', '3'];
    try {
      const { child, result } = startUgs(args, { sandbox, env: customerEnv(slow) });
      // Killed while three rotations are on their way (their `sending` records on disk).
      for (let i = 0; i < 500; i++) {
        if (existsSync(out) && readFileSync(out, 'utf8').split('"sending"').length > 3) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      child.kill('SIGKILL');
      await result;
      // Resumed at once; --timeout 2 bounds the wait for the killed run's requests.
      const resumed = await ugs(sandbox, [...args, '--resume', '--timeout', '2'], {
        env: customerEnv(slow),
        timeoutMs: 30_000,
      });
      expect(resumed.code, show(resumed)).toBe(0);
      const rotations = new Map<string, number>();
      for (const line of slow.requestLines()) {
        const id = /\brotated id="([^"]+)"/.exec(line)?.[1];
        if (id !== undefined) rotations.set(id, (rotations.get(id) ?? 0) + 1);
      }
      const last = lastByRow(records(out));
      expect(last.size).toBe(count);
      for (const rec of last.values()) {
        expect(rec.status, `row ${rec.row}: ${rec.error}`).toBe('rotated');
        expect(rotations.get(rec.user_group_id ?? ''), `row ${rec.row}`).toBe(1);
        expect(rec.token).not.toBe(inputTokens.get(rec.user_group_id ?? ''));
      }
    } finally {
      await slow.stop();
    }
    const again = await startEmulator({ dataFile });
    try {
      const tokens = await currentTokens(sandbox, again, count, 'ks');
      for (const rec of lastByRow(records(out)).values()) {
        expect(rec.token).toBe(tokens.get(rec.user_group_id ?? ''));
        expect(rec.token).not.toBe(inputTokens.get(rec.user_group_id ?? ''));
      }
    } finally {
      await again.stop();
    }
  }, 60_000);

  // Last and on its own (the tests above have ended): the kill must land while the run is
  // mid-way, with no other test's in-process work on the emulator's event loop.
  it.sequential('rotate: kill -9 mid-run, then --resume settles the rows sent without an answer; every group rotated once', async () => {
    const sandbox = makeSandbox();
    // The kill lands after ~300 rotations (polled every 10 ms): 1000 rows leave hundreds to do,
    // as every rotation also waits for its fsynced `sending` record.
    const count = 1000;
    const input = await createGroups(sandbox, emulator, count, 'kr');
    const out = join(sandbox.root, 'kr-out.ndjson');
    const { child, result: exited } = startUgs(
      ['rotate', '--from', input, '--output', out, '--yes', '--concurrency', '4'],
      {
        sandbox,
        env: customerEnv(emulator),
      },
    );
    for (let i = 0; i < 500; i++) {
      if (existsSync(out) && readFileSync(out, 'utf8').split('"rotated"').length > 300) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.kill('SIGKILL');
    await exited;
    const first = records(out);
    const rotatedBefore = new Set(
      first.filter((rec) => rec.status === 'rotated').map((rec) => rec.row),
    );
    expect(rotatedBefore.size).toBeGreaterThan(100);
    expect(rotatedBefore.size).toBeLessThan(count);

    const result = await ugs(
      sandbox,
      // --timeout 2: --resume waits that long after the killed run's last `sending` record before
      // reading rows back (its requests may still land); the in-process emulator answers in ms.
      [
        'rotate',
        '--from',
        input,
        '--output',
        out,
        '--yes',
        '--resume',
        '--concurrency',
        '8',
        '--timeout',
        '2',
      ],
      { env: customerEnv(emulator), timeoutMs: 120_000 },
    );
    expect(result.code, show(result)).toBe(0);
    const all = records(out);
    for (const rec of all.slice(first.length)) {
      expect(rotatedBefore.has(rec.row), `row ${rec.row} was done before the kill`).toBe(false);
    }
    const last = lastByRow(all);
    expect(last.size).toBe(count);
    const tokens = await currentTokens(sandbox, emulator, count, 'kr');
    for (const rec of last.values()) {
      expect(rec.status).toBe('rotated');
      expect(rec.token).toBe(tokens.get(rec.user_group_id ?? ''));
    }
  }, 180_000);
});

describe.concurrent('bulk runs the service or the network stops', () => {
  function stdoutRecords(stdout: string): Rec[] {
    return stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Rec);
  }

  it('a refused API token stops the run at once (exit 3); every other row is skipped', async () => {
    const emulator = await startEmulator();
    try {
      const sandbox = makeSandbox();
      const groups = join(sandbox.root, 'a-groups.ndjson');
      writeFileSync(groups, groupRows(30, 'a'));
      const result = await ugs(sandbox, ['get', '--from', groups, '--concurrency', '2'], {
        env: { UGS_BASE_URL: emulator.url, UGS_API_TOKEN: 'f'.repeat(64) },
      });
      expect(result.code, show(result)).toBe(3);
      const recs = stdoutRecords(result.stdout);
      expect(new Set(recs.map((rec) => rec.row)).size).toBe(30);
      const failed = recs.filter((rec) => rec.status === 'failed');
      expect(failed.length).toBeGreaterThan(0);
      expect(failed.length).toBeLessThanOrEqual(2);
      expect(recs.filter((rec) => rec.status === 'skipped').length).toBe(30 - failed.length);
      expect(result.stderr).toMatch(/error: the API token was not accepted/);
    } finally {
      await emulator.stop();
    }
  });

  it('a network that is gone after retries stops the run (exit 4); every other row is skipped', async () => {
    const sandbox = makeSandbox();
    const groups = join(sandbox.root, 'n-groups.ndjson');
    writeFileSync(groups, groupRows(30, 'n'));
    const result = await ugs(sandbox, ['get', '--from', groups, '--concurrency', '2'], {
      env: {
        UGS_BASE_URL: `http://127.0.0.1:${await closedPort()}`,
        UGS_API_TOKEN: 'f'.repeat(64),
      },
    });
    expect(result.code, show(result)).toBe(4);
    const recs = stdoutRecords(result.stdout);
    expect(new Set(recs.map((rec) => rec.row)).size).toBe(30);
    expect(recs.filter((rec) => rec.status === 'failed').length).toBeLessThanOrEqual(2);
    expect(recs.filter((rec) => rec.status === 'skipped').length).toBeGreaterThanOrEqual(28);
    expect(result.stderr).toContain('connection refused');
  });
});

describe.concurrent('bulk runs through a gateway while the service is unavailable', () => {
  it('get: 504 for the first 2 s, then answers: the run pauses, probes, carries on; every row created, exit 0', async () => {
    const down = await startEmulator({ faults: [{ kind: '504-html', rate: 1, forMs: 2000 }] });
    try {
      const sandbox = makeSandbox();
      const groups = join(sandbox.root, 'o-groups.ndjson');
      writeFileSync(groups, groupRows(30, 'o'));
      const out = join(sandbox.root, 'o-out.ndjson');
      const result = await ugs(sandbox, ['get', '--from', groups, '--output', out], {
        env: customerEnv(down),
        timeoutMs: 60_000,
      });
      expect(result.code, show(result)).toBe(0);
      const last = lastByRow(records(out));
      expect(last.size).toBe(30);
      expect([...last.values()].every((rec) => rec.status === 'created')).toBe(true);
      expect(result.stderr).toMatch(/^note: the service is unavailable \(6 requests in a row/m);
      expect(result.stderr).toMatch(
        /^note: the service answers again after .*: the run carries on$/m,
      );
      // Each group created once: no row was sent twice after it succeeded.
      const created = down.requestLines().filter((line) => / created id=/.test(line));
      expect(created).toHaveLength(30);
    } finally {
      await down.stop();
    }
  }, 60_000);

  it('rotate: 504 for the first 2 s, then answers: every row rotated exactly once, exit 0', async () => {
    const sandbox = makeSandbox();
    const count = 12;
    const dataFile = join(sandbox.root, 'state.json');
    const quick = await startEmulator({ dataFile });
    const input = await createGroups(sandbox, quick, count, 'or').finally(() => quick.stop());
    const down = await startEmulator({
      dataFile,
      faults: [{ kind: '504-html', rate: 1, forMs: 2000 }],
    });
    const out = join(sandbox.root, 'or-out.ndjson');
    try {
      const result = await ugs(sandbox, ['rotate', '--from', input, '--output', out, '--yes'], {
        env: customerEnv(down),
        timeoutMs: 60_000,
      });
      expect(result.code, show(result)).toBe(0);
      expect(result.stderr).toMatch(/^note: the service answers again after /m);
      const rotations = new Map<string, number>();
      for (const line of down.requestLines()) {
        const id = /\brotated id="([^"]+)"/.exec(line)?.[1];
        if (id !== undefined) rotations.set(id, (rotations.get(id) ?? 0) + 1);
      }
      const last = lastByRow(records(out));
      expect(last.size).toBe(count);
      for (const rec of last.values()) {
        expect(rec.status, `row ${rec.row}: ${rec.error}`).toBe('rotated');
        expect(rotations.get(rec.user_group_id ?? ''), `row ${rec.row}`).toBe(1);
      }
    } finally {
      await down.stop();
    }
    const again = await startEmulator({ dataFile });
    try {
      const tokens = await currentTokens(sandbox, again, count, 'or');
      for (const rec of lastByRow(records(out)).values()) {
        expect(rec.token).toBe(tokens.get(rec.user_group_id ?? ''));
      }
    } finally {
      await again.stop();
    }
  }, 90_000);

  it('get: 504 for ever: exit 4 once --give-up-after passes, after a few probes, the rest skipped', async () => {
    const down = await startEmulator({ faults: [{ kind: '504-html', rate: 1 }] });
    try {
      const sandbox = makeSandbox();
      const groups = join(sandbox.root, 'od-groups.ndjson');
      writeFileSync(groups, groupRows(100, 'od'));
      const out = join(sandbox.root, 'od-out.ndjson');
      const result = await ugs(
        sandbox,
        ['get', '--from', groups, '--output', out, '--give-up-after', '3s'],
        { env: customerEnv(down), timeoutMs: 30_000 },
      );
      expect(result.code, show(result)).toBe(4);
      expect(result.stderr).toMatch(
        /^error: the service is unavailable: 6 requests in a row were answered by a gateway .* and [12] probes? over \d\.\ds did not get through/m,
      );
      expect(result.stderr).toMatch(/^hint: run the same command with --resume/m);
      // The streak with each row's three tries, the rows in flight at the pause, and the probes.
      expect(down.requestLines().length).toBeLessThanOrEqual((6 + 8) * 3 + 2);
      const last = lastByRow(records(out));
      expect(last.size).toBe(100);
      expect([...last.values()].filter((rec) => rec.status === 'skipped').length).toBeGreaterThan(
        85,
      );
    } finally {
      await down.stop();
    }
  }, 60_000);
});
