/**
 * `--output-tokens last4`: results files without whole tokens (their last 4 and SHA-256), the
 * whole records on stdout, written there before the file takes them; `--resume` settles such a
 * file by reading groups back; a file is resumed only the way it was started. In-process
 * (runMain) against the emulator, and runBulk with a stdout that fails.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  type BulkRecord,
  ndjsonLine,
  tokenTail,
  tokenTailColumns,
  withTokenTails,
} from '../../src/bulk/records.js';
import { runBulk } from '../../src/bulk/run.js';
import { parseOutputTokens } from '../../src/cli/bulk-flags.js';
import { ExitCode, OutcomeUnknownError } from '../../src/errors.js';
import { bulkOptions, bulkSpecs, lastByRow, readRecords } from '../kit/bulk.js';
import { FakeService, groupResult, makeDeps, makeIO } from '../kit/fakes.js';
import {
  customerEnv,
  makeSandbox,
  runMain,
  type Sandbox,
  describeRun as show,
  startEmulator,
} from '../kit/index.js';

interface Rec {
  row: number;
  user_group_id: string | null;
  name: string | null;
  status: string;
  token: string | null;
  token_last4?: string | null;
  token_sha256?: string | null;
  settled_by?: string | null;
  error: string | null;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function ndjson(text: string): Rec[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Rec);
}

describe('a record without its whole token', () => {
  const record: BulkRecord = {
    row: 3,
    user_group_id: 'acme',
    name: 'Acme',
    status: 'rotated',
    token: `${'f'.repeat(60)}a1b2`,
    team_id: 1,
    error: null,
    http_status: 200,
  };

  it('keeps the last 4 and the plain SHA-256 of the token, which sha256sum matches', () => {
    const tail = tokenTail(record);
    expect(tail.token).toBeNull();
    expect(tail.token_last4).toBe('a1b2');
    expect(tail.token_sha256).toBe(sha256(record.token ?? ''));
    const line = ndjsonLine(tail, bulkSpecs.rotate.records);
    expect(line).not.toContain(record.token);
    expect(JSON.parse(line)).toMatchObject({ token: null, token_last4: 'a1b2' });
    // A short token shows none of its characters; a record without a token says null for both.
    expect(tokenTail({ ...record, token: 'short' }).token_last4).toBeNull();
    expect(tokenTail({ ...record, token: null })).toMatchObject({
      token_last4: null,
      token_sha256: null,
    });
  });

  it('has CSV columns with token_last4 and token_sha256 in place of token', () => {
    expect(tokenTailColumns(['row', 'token', 'team_id'])).toEqual([
      'row',
      'token_last4',
      'token_sha256',
      'team_id',
    ]);
    const schema = withTokenTails(bulkSpecs.rotate.records);
    expect(schema.columns).not.toContain('token');
    expect(schema.tokens).toBe('last4');
  });

  it.each([
    ['full', 'full'],
    ['last4', 'last4'],
    [' LAST4 ', 'last4'],
  ] as const)('--output-tokens %j is %s', (text, value) => {
    expect(parseOutputTokens(text)).toBe(value);
  });

  it.each(['last8', '', 'none'])('--output-tokens %j is refused', (text) => {
    expect(() => parseOutputTokens(text)).toThrow(/--output-tokens must be full or last4/);
  });
});

describe('--output-tokens on the command line', () => {
  it.each([
    [
      ['rotate', '--output-tokens', 'last4', '--current-token-stdin', '--yes'],
      /works only with --from/,
    ],
    [['get', '--from', 'x.ndjson', '--output-tokens', 'last4'], /--output-tokens needs --output/],
    [
      ['rotate', '--from', 'x.ndjson', '--output', 'r.ndjson', '--output-tokens', 'some', '--yes'],
      /must be full or last4/,
    ],
  ])('%j is a usage error', async (argv, error) => {
    const result = await runMain(argv, { env: { UGS_API_TOKEN: 'api-token-0123456789' } });
    expect(result.code, show(result)).toBe(ExitCode.Usage);
    expect(result.stderr).toMatch(error);
  });
});

/** Groups made through ugs (get --from), and a rotate input of their ids, names and tokens. */
async function provision(sandbox: Sandbox, env: Record<string, string>, count: number) {
  const ids = Array.from({ length: count }, (_, i) => `ot-${i + 1}`);
  const groups = join(sandbox.root, 'groups.ndjson');
  writeFileSync(
    groups,
    ids.map((id) => `${JSON.stringify({ user_group_id: id, name: id })}\n`).join(''),
  );
  const made = await runMain(['get', '--from', groups], { sandbox, env });
  expect(made.code, show(made)).toBe(0);
  const tokens = new Map(
    ndjson(made.stdout).map((rec) => [rec.user_group_id ?? '', rec.token ?? '']),
  );
  const input = join(sandbox.root, 'tokens.csv');
  writeFileSync(
    input,
    `user_group_id,name,current_token\n${ids.map((id) => `${id},${id},${tokens.get(id)}`).join('\n')}\n`,
  );
  return { ids, groups, tokens, input };
}

/** Each group's current token, read with get --from. */
async function currentTokens(sandbox: Sandbox, env: Record<string, string>, groups: string) {
  const read = await runMain(['get', '--from', groups], { sandbox, env });
  expect(read.code, show(read)).toBe(0);
  return new Map(ndjson(read.stdout).map((rec) => [rec.user_group_id ?? '', rec.token ?? '']));
}

describe('rotate --from --output-tokens last4 against the emulator', () => {
  it('the file holds no whole token, stdout holds every new one, and their SHA-256 match', async () => {
    const emulator = await startEmulator();
    try {
      const sandbox = makeSandbox();
      const env = customerEnv(emulator);
      const { groups, tokens, input } = await provision(sandbox, env, 6);
      for (const format of ['ndjson', 'csv'] as const) {
        const out = join(sandbox.root, `rotated-${format}.${format}`);
        const before = await currentTokens(sandbox, env, groups);
        const fromFile = format === 'ndjson' ? input : join(sandbox.root, 'again.csv');
        if (format === 'csv') {
          writeFileSync(
            fromFile,
            `user_group_id,name,current_token\n${[...before].map(([id, t]) => `${id},${id},${t}`).join('\n')}\n`,
          );
        }
        const result = await runMain(
          ['rotate', '--from', fromFile, '--output', out, '--output-tokens', 'last4', '--yes'],
          { sandbox, env },
        );
        expect(result.code, show(result)).toBe(0);
        const now = await currentTokens(sandbox, env, groups);
        // stdout: one whole record per row, with the group's token as it is now.
        const printed = ndjson(result.stdout);
        expect(printed).toHaveLength(6);
        for (const rec of printed) {
          expect(rec.status).toBe('rotated');
          expect(rec.token).toBe(now.get(rec.user_group_id ?? ''));
          expect(rec.token).not.toBe(before.get(rec.user_group_id ?? ''));
        }
        // The file: no token, old or new; each row's last 4 and SHA-256 of its new token.
        const text = readFileSync(out, 'utf8');
        for (const token of [...before.values(), ...now.values(), ...tokens.values()]) {
          expect(text).not.toContain(token);
        }
        if (format === 'csv') {
          expect(text.split('\n')[0]).toBe(
            'row,user_group_id,name,status,token_last4,token_sha256,team_id,api_environment_tag,error,http_status,settled_by,at',
          );
        } else {
          for (const rec of lastByRow(readRecords<Rec>(out)).values()) {
            const token = now.get(rec.user_group_id ?? '') ?? '';
            expect(rec).toMatchObject({
              status: 'rotated',
              token: null,
              token_last4: token.slice(-4),
              token_sha256: sha256(token),
            });
          }
        }
        expect(result.stderr).toMatch(
          /note: --output-tokens last4: the whole tokens went to stdout only .*ugs get --id <user_group_id> --name <name> --field token/,
        );
      }
    } finally {
      await emulator.close();
    }
  });

  it('get --from and update --from: the same split, whole tokens on stdout, tails in the file', async () => {
    const emulator = await startEmulator({ dialect: 'customer' });
    try {
      const sandbox = makeSandbox();
      const env = { ...customerEnv(emulator), UGS_DIALECT: 'customer' };
      const groups = join(sandbox.root, 'groups.ndjson');
      writeFileSync(groups, `${JSON.stringify({ user_group_id: 'g-1', name: 'G 1' })}\n`);
      const got = join(sandbox.root, 'got.csv');
      const get = await runMain(
        ['get', '--from', groups, '--output', got, '--output-tokens', 'last4'],
        { sandbox, env },
      );
      expect(get.code, show(get)).toBe(0);
      const [printed] = ndjson(get.stdout);
      const token = printed?.token ?? '';
      expect(printed).toMatchObject({ status: 'created', user_group_id: 'g-1' });
      expect(token).toMatch(/^[0-9a-f]{64}$/);
      const [header, line] = readFileSync(got, 'utf8').split('\n');
      expect(header).toBe(
        'row,user_group_id,name,status,token_last4,token_sha256,team_id,new_user_group,error,http_status',
      );
      expect(line).toContain(`,${token.slice(-4)},${sha256(token)},`);
      const changes = join(sandbox.root, 'changes.ndjson');
      writeFileSync(changes, `${JSON.stringify({ user_group_id: 'g-1', name: 'G One' })}\n`);
      const updated = join(sandbox.root, 'updated.ndjson');
      const update = await runMain(
        ['update', '--from', changes, '--output', updated, '--output-tokens', 'last4'],
        { sandbox, env },
      );
      expect(update.code, show(update)).toBe(0);
      expect(ndjson(update.stdout)[0]).toMatchObject({ status: 'updated', token });
      const text = readFileSync(updated, 'utf8');
      expect(text).not.toContain(token);
      expect(lastByRow(readRecords<Rec>(updated)).get(1)).toMatchObject({
        status: 'updated',
        token: null,
        token_sha256: sha256(token),
      });
    } finally {
      await emulator.close();
    }
  });

  it('--resume settles a row left `sending` by reading its group back: rotated once, its token on stdout only', async () => {
    const lines: string[] = [];
    const emulator = await startEmulator({ log: (line) => lines.push(line) });
    try {
      const sandbox = makeSandbox();
      const env = customerEnv(emulator);
      const { ids, groups, tokens, input } = await provision(sandbox, env, 4);
      // An earlier run sent row 2 and was killed before its answer: the rotation happened (done
      // here by a single rotate), and the file's last record of the row is `sending`.
      const single = await runMain(
        ['rotate', '--current-token-stdin', '--yes', '--field', 'token'],
        {
          sandbox,
          env,
          stdin: tokens.get('ot-2') ?? '',
        },
      );
      expect(single.code, show(single)).toBe(0);
      const out = join(sandbox.root, 'rotated.ndjson');
      writeFileSync(
        out,
        `${JSON.stringify({ row: 1, user_group_id: 'ot-1', name: 'ot-1', status: 'sending', token: null, token_last4: null, token_sha256: null, team_id: null, error: null, http_status: null, at: '2020-01-01T00:00:00.000Z' })}\n` +
          `${JSON.stringify({ row: 2, user_group_id: 'ot-2', name: 'ot-2', status: 'sending', token: null, token_last4: null, token_sha256: null, team_id: null, error: null, http_status: null, at: '2020-01-01T00:00:00.000Z' })}\n`,
        { mode: 0o600 },
      );
      const result = await runMain(
        [
          'rotate',
          '--from',
          input,
          '--output',
          out,
          '--output-tokens',
          'last4',
          '--yes',
          '--resume',
        ],
        { sandbox, env },
      );
      expect(result.code, show(result)).toBe(0);
      const now = await currentTokens(sandbox, env, groups);
      // Row 2: settled by reading back (its token is the single rotate's); row 1: not rotated by
      // the earlier run, so rotated now, once.
      const printed = lastByRow(ndjson(result.stdout));
      expect(printed.get(2)).toMatchObject({
        status: 'rotated',
        settled_by: 'get',
        token: single.stdout.trim(),
      });
      for (const id of ids) {
        const row = Number(id.slice(3));
        expect(printed.get(row)?.token, id).toBe(now.get(id));
      }
      const rotations = lines.filter((line) => / rotated id="ot-2"/.test(line));
      expect(rotations).toHaveLength(1); // the single rotate's: --resume read it back
      for (const id of ids) {
        expect(
          lines.filter((line) => line.includes(`rotated id="${id}"`)),
          id,
        ).toHaveLength(1);
      }
      const text = readFileSync(out, 'utf8');
      for (const token of [...now.values(), ...tokens.values()]) expect(text).not.toContain(token);
      const last = lastByRow(readRecords<Rec>(out));
      expect(last.get(2)).toMatchObject({
        status: 'rotated',
        settled_by: 'get',
        token_sha256: sha256(now.get('ot-2') ?? ''),
      });
    } finally {
      await emulator.close();
    }
  });

  it('a file is resumed only the way it was started, and at a terminal last4 is refused; nothing sent', async () => {
    const lines: string[] = [];
    const emulator = await startEmulator({ log: (line) => lines.push(line) });
    try {
      const sandbox = makeSandbox();
      const env = customerEnv(emulator);
      const { input } = await provision(sandbox, env, 2);
      const sent = lines.length;
      const full = join(sandbox.root, 'full.ndjson');
      writeFileSync(
        full,
        `${JSON.stringify({ row: 1, user_group_id: 'ot-1', name: 'ot-1', status: 'rotated', token: 'b'.repeat(64), team_id: 1, error: null, http_status: 200 })}\n`,
        { mode: 0o600 },
      );
      const last4 = join(sandbox.root, 'last4.ndjson');
      writeFileSync(
        last4,
        `${JSON.stringify({ row: 1, user_group_id: 'ot-1', name: 'ot-1', status: 'rotated', token: null, token_last4: 'bbbb', token_sha256: sha256('b'.repeat(64)), team_id: 1, error: null, http_status: 200 })}\n`,
        { mode: 0o600 },
      );
      // Killed before any answer: its `sending` records alone say how it keeps tokens.
      const sendingOnly = join(sandbox.root, 'sending.ndjson');
      writeFileSync(
        sendingOnly,
        `${JSON.stringify({ row: 1, user_group_id: 'ot-1', name: 'ot-1', status: 'sending', token: null, token_last4: null, token_sha256: null, team_id: null, error: null, http_status: null, at: '2020-01-01T00:00:00.000Z' })}\n`,
        { mode: 0o600 },
      );
      const fullCsv = join(sandbox.root, 'full.csv');
      const first = await runMain(
        ['rotate', '--from', input, '--output', fullCsv, '--yes', '--concurrency', '1'],
        { sandbox, env, stdin: '' },
      );
      expect(first.code, show(first)).toBe(0);
      const cases: [string[], RegExp][] = [
        [
          ['--output', full, '--output-tokens', 'last4', '--resume'],
          /holds whole tokens \(written with --output-tokens full\)/,
        ],
        [['--output', fullCsv, '--output-tokens', 'last4', '--resume'], /holds whole tokens/],
        [
          ['--output', last4, '--resume'],
          /holds no whole tokens \(written with --output-tokens last4\)/,
        ],
        [['--output', last4, '--output-tokens', 'full', '--resume'], /holds no whole tokens/],
        [['--output', sendingOnly, '--resume'], /holds no whole tokens/],
      ];
      const afterFirst = lines.length;
      for (const [extra, error] of cases) {
        const result = await runMain(['rotate', '--from', input, '--yes', ...extra], {
          sandbox,
          env,
        });
        expect(result.code, show(result)).toBe(ExitCode.Usage);
        expect(result.stderr).toMatch(error);
        expect(result.stderr).toMatch(
          /hint: resume it with --output-tokens (full|last4), as it was started/,
        );
      }
      const tty = await runMain(
        [
          'rotate',
          '--from',
          input,
          '--output',
          join(sandbox.root, 'new.ndjson'),
          '--output-tokens',
          'last4',
          '--yes',
        ],
        { sandbox, env, tty: true },
      );
      expect(tty.code, show(tty)).toBe(ExitCode.Usage);
      expect(tty.stderr).toMatch(
        /writes the whole tokens to stdout only, and stdout is a terminal; nothing was sent/,
      );
      expect(lines.length).toBe(afterFirst);
      expect(afterFirst).toBeGreaterThan(sent);
    } finally {
      await emulator.close();
    }
  });

  it('rotate --from a last4 results file is refused: its records hold no token to send', async () => {
    const sandbox = makeSandbox();
    const results = join(sandbox.root, 'results.ndjson');
    writeFileSync(
      results,
      `${JSON.stringify({ row: 1, user_group_id: 'a', name: 'a', status: 'rotated', token: null, token_last4: 'bbbb', token_sha256: sha256('b'.repeat(64)), team_id: 1, error: null, http_status: 200 })}\n`,
    );
    for (const command of ['rotate', 'delete']) {
      const result = await runMain(
        [command, '--from', results, '--output', join(sandbox.root, `${command}.ndjson`), '--yes'],
        {
          sandbox,
          env: {
            UGS_BASE_URL: 'http://127.0.0.1:9',
            UGS_API_TOKEN: 'api-token-0123456789',
            UGS_DIALECT: command === 'delete' ? 'customer' : 'interface',
          },
        },
      );
      expect(result.code, show(result)).toBe(ExitCode.Usage);
      expect(result.stderr).toMatch(
        /holds no whole token \(the results were written with --output-tokens last4\)/,
      );
    }
  });
});

/** A stdout whose reader went away: every write fails (EPIPE). */
class ClosedPipe extends Writable {
  constructor() {
    super();
    // As bin/ugs.js does for the process's stdout: a closed reader is no crash.
    this.on('error', () => undefined);
  }
  override _write(_chunk: unknown, _encoding: string, callback: (error?: Error | null) => void) {
    callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
  }
}

describe('stdout that does not take the whole tokens', () => {
  it('keeps their rows out of the results file (last record `sending`): exit 5, and --resume reads them back', async () => {
    const dir = makeSandbox().root;
    const from = join(dir, 'rows.ndjson');
    writeFileSync(
      from,
      ['a', 'b']
        .map(
          (id) =>
            `${JSON.stringify({ current_token: `old-${id}-0123456789`, user_group_id: id, name: id })}\n`,
        )
        .join(''),
    );
    const out = join(dir, 'out.ndjson');
    const current = new Map([
      ['a', 'old-a-0123456789'],
      ['b', 'old-b-0123456789'],
    ]);
    const service = new FakeService({
      rotate: (token) => {
        const id = token.split('-')[1] ?? '';
        current.set(id, `new-${id}-${'c'.repeat(40)}`);
        return groupResult({ provided_id: id, name: id, token: current.get(id) });
      },
      get: (request) =>
        groupResult({
          provided_id: request.user_group_id,
          name: request.name,
          token: current.get(request.user_group_id),
        }),
    });
    const io = { ...makeIO(), stdout: new ClosedPipe() } as unknown as ReturnType<typeof makeIO>;
    const deps = makeDeps({ io, service: service as never });
    const opts = bulkOptions('rotate', from, out, { outputTokens: 'last4' });
    const error = await runBulk(opts, deps).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect((error as Error).message).toMatch(
      /stdout, where --output-tokens last4 sends the whole tokens, failed \(EPIPE\)/,
    );
    expect((error as OutcomeUnknownError).hint).toMatch(
      /send stdout to a reader that takes every line, then run the same command with --resume/,
    );
    const atEnd = lastByRow(readRecords<Rec>(out));
    expect([...atEnd.values()].map((rec) => rec.status)).toEqual(['sending', 'sending']);
    // Even a `sending` record says the file keeps no whole token.
    for (const rec of atEnd.values())
      expect(rec).toMatchObject({ token: null, token_sha256: null });
    expect(service.rotations).toHaveLength(2);

    // Resumed with a working stdout: nothing rotated again, each group's token read back.
    const io2 = makeIO();
    // (--timeout 10ms: --resume waits that long for the first run's requests, which had ended)
    const resumed = makeDeps({ io: io2, service: service as never, settings: { timeoutMs: 10 } });
    await runBulk({ ...opts, resume: true }, resumed);
    expect(service.rotations).toHaveLength(2);
    const printed = ndjson(io2.stdout.text);
    expect(
      printed.map((rec) => [rec.user_group_id, rec.status, rec.settled_by, rec.token]),
    ).toEqual([
      ['a', 'rotated', 'get', current.get('a')],
      ['b', 'rotated', 'get', current.get('b')],
    ]);
    expect(readFileSync(out, 'utf8')).not.toMatch(/new-[ab]-c/);
  });
});
