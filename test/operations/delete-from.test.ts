/**
 * `ugs delete --from`: one current_token per row through the bulk engine. Its spec in-process
 * (rows, outcomes, a lost answer settled by the same delete, --resume), then a run through
 * `runMain` against the emulator in each vendor dialect, and the flags it refuses.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BulkOptions, runBulk } from '../../src/bulk/run.js';
import { ApiError, OutcomeUnknownError } from '../../src/errors.js';
import { spec } from '../../src/operations/delete-user-group/bulk.js';
import type {
  DeleteResult,
  DeleteUserGroupRequest,
} from '../../src/operations/delete-user-group/operation.js';
import { fakeService, makeDeps, rejection } from '../kit/fakes.js';
import {
  describeRun,
  runMain,
  type Sandbox,
  type Service,
  serviceWithProfile,
  tempDir,
} from '../kit/index.js';
import { forwardTo, type Reply, text } from '../kit/server.js';

interface Rec {
  row: number;
  user_group_id: string | null;
  status: string;
  token: string | null;
  error: string | null;
  http_status: number | null;
  settled_by?: string;
}

const noTimer = { every: () => () => undefined };
const DELETED: DeleteResult = { status: 200, body: { success: 1 }, text: '{"success": 1}' };

function notFound(): ApiError {
  return new ApiError('HTTP 404: Not found.', { status: 404 });
}

function lost(): OutcomeUnknownError {
  return new OutcomeUnknownError('the delete request was sent but no answer came back');
}

function inputFile(name: string, text: string): string {
  const path = join(tempDir('delete-from'), name);
  writeFileSync(path, text);
  return path;
}

function ndjson(rows: readonly Record<string, unknown>[]): string {
  return inputFile('rows.ndjson', rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
}

function options(from: string, extra: Partial<BulkOptions> = {}): BulkOptions {
  return {
    spec,
    from,
    format: from.endsWith('.csv') ? 'csv' : 'ndjson',
    concurrency: 2,
    output: join(tempDir('delete-from'), 'out.ndjson'),
    resume: false,
    yes: true,
    ...extra,
  };
}

function records(path: string): Rec[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Rec);
}

/** Each row's last record, in row order. */
function outcomes(path: string): Rec[] {
  const last = new Map<number, Rec>();
  for (const rec of records(path)) last.set(rec.row, rec);
  return [...last.values()].sort((a, b) => a.row - b.row);
}

/** A fake delete answering by token; the tokens sent are kept in order. */
function deletes(answer: (token: string, attempt: number) => DeleteResult) {
  const sent: DeleteUserGroupRequest[] = [];
  const service = fakeService({
    deleteUserGroup: async (request: DeleteUserGroupRequest) => {
      sent.push(request);
      const attempt = sent.filter((r) => r.current_token === request.current_token).length;
      return answer(request.current_token, attempt);
    },
  });
  return { service, sent };
}

describe('delete --from: rows', () => {
  it('reads a spreadsheet CSV (`;`, titled columns, extra columns ignored); sends only the token, records the id', async () => {
    const from = inputFile(
      'sheet.csv',
      'User Group ID;Current Token;Owner\nacme;tok-acme-1111;Ann\n;tok-anon-2222;Bob\n',
    );
    const { service, sent } = deletes(() => DELETED);
    const deps = makeDeps({ service });
    const opts = options(from);
    await runBulk(opts, deps, noTimer);
    expect(sent).toEqual([
      { current_token: 'tok-acme-1111', user_group_id: 'acme' },
      { current_token: 'tok-anon-2222' },
    ]);
    expect(deps.io.stderr.text).toContain('ignored a column ugs does not know: "Owner"');
    expect(outcomes(opts.output ?? '').map((r) => [r.row, r.user_group_id, r.status])).toEqual([
      [1, 'acme', 'deleted'],
      [2, null, 'deleted'],
    ]);
    // No token in the results: the one sent is dead, and a delete answers none.
    const text = readFileSync(opts.output ?? '', 'utf8');
    expect(text).not.toContain('tok-acme-1111');
    expect(text).not.toContain('tok-anon-2222');
  });

  it('a CSV without a current_token column is refused before anything is sent (exit 2)', async () => {
    const from = inputFile('ids.csv', 'user_group_id,name\nacme,Acme\n');
    const { service, sent } = deletes(() => DELETED);
    const error = await rejection(runBulk(options(from), makeDeps({ service }), noTimer));
    expect((error as ApiError).exitCode).toBe(2);
    expect((error as Error).message).toContain('no "current_token" column');
    expect(sent).toEqual([]);
  });

  it('a row with a user_group_id but no token is refused by row (exit 2), naming delete --id; nothing sent', async () => {
    const from = ndjson([{ current_token: 'tok-a-1111' }, { user_group_id: 'acme' }]);
    const { service, sent } = deletes(() => DELETED);
    const error = await rejection(runBulk(options(from), makeDeps({ service }), noTimer));
    expect((error as ApiError).exitCode).toBe(2);
    expect((error as Error).message).toContain(
      'current_token is missing: delete --from deletes by token and does not look ids up',
    );
    expect(sent).toEqual([]);
  });

  it('a token given twice is refused by row, nothing sent: the second delete could only fail', async () => {
    const from = ndjson([{ current_token: 'tok-a-1111' }, { current_token: 'tok-a-1111' }]);
    const { service, sent } = deletes(() => DELETED);
    const error = await rejection(runBulk(options(from), makeDeps({ service }), noTimer));
    expect((error as ApiError).exitCode).toBe(2);
    expect((error as Error).message + JSON.stringify(error)).not.toContain('tok-a-1111');
    expect(sent).toEqual([]);
  });
});

describe('delete --from: outcomes', () => {
  it('every answer is `deleted`; a 404 for a row never sent is failed "no group has that token" (exit 1)', async () => {
    const from = ndjson([
      { current_token: 'tok-a-1111', user_group_id: 'a' },
      { current_token: 'tok-gone-2222', user_group_id: 'b' },
    ]);
    const { service, sent } = deletes((token) => {
      if (token === 'tok-gone-2222') throw notFound();
      return DELETED;
    });
    const deps = makeDeps({ service });
    const opts = options(from);
    const error = await rejection(runBulk(opts, deps, noTimer));
    expect((error as ApiError).exitCode).toBe(1);
    const [a, b] = outcomes(opts.output ?? '');
    expect([a?.status, a?.http_status, a?.settled_by]).toEqual(['deleted', 200, undefined]);
    expect([b?.status, b?.http_status]).toEqual(['failed', 404]);
    expect(b?.error).toContain('no group has that token');
    // Refused is refused: the 404 is not followed by another request.
    expect(sent.map((r) => r.current_token)).toEqual(['tok-a-1111', 'tok-gone-2222']);
    // Each was journaled before it was sent.
    expect(records(opts.output ?? '').filter((r) => r.status === 'sending')).toHaveLength(2);
  });

  it('a lost answer is settled by the same delete: 404 then is `deleted`, settled_by "delete"', async () => {
    const from = ndjson([{ current_token: 'tok-a-1111', user_group_id: 'a' }]);
    const { service, sent } = deletes((_token, attempt) => {
      if (attempt === 1) throw lost();
      throw notFound();
    });
    const deps = makeDeps({ service });
    const opts = options(from);
    await runBulk(opts, deps, noTimer);
    expect(outcomes(opts.output ?? '')).toMatchObject([
      { row: 1, user_group_id: 'a', status: 'deleted', settled_by: 'delete', error: null },
    ]);
    expect(sent).toHaveLength(2);
    expect(deps.io.stderr.text).toMatch(/1 deleted; 1 settled by sending the delete again/);
  });

  it('a lost answer whose repeat is answered: deleted by the repeat, not settled', async () => {
    const from = ndjson([{ current_token: 'tok-a-1111' }]);
    const { service } = deletes((_token, attempt) => {
      if (attempt === 1) throw lost();
      return DELETED;
    });
    const opts = options(from);
    await runBulk(opts, makeDeps({ service }), noTimer);
    const [rec] = outcomes(opts.output ?? '');
    expect([rec?.status, rec?.http_status, rec?.settled_by]).toEqual(['deleted', 200, undefined]);
  });

  it('--resume: an answered row is never sent again; a row left `sending` or failed after `sending` that now gets 404 is deleted (settled)', async () => {
    const from = ndjson([
      { current_token: 'tok-1-1111' },
      { current_token: 'tok-2-2222' },
      { current_token: 'tok-3-3333' },
      { current_token: 'tok-4-4444' },
    ]);
    const out = join(tempDir('delete-from'), 'resume.ndjson');
    const at = new Date(Date.now() - 3_600_000).toISOString();
    const line = (row: number, status: string, extra: Record<string, unknown> = {}) =>
      `${JSON.stringify({ row, user_group_id: null, name: null, status, token: null, team_id: null, error: null, http_status: null, ...extra })}\n`;
    writeFileSync(
      out,
      line(1, 'sending', { at }) +
        line(1, 'deleted', { http_status: 200 }) +
        line(2, 'sending', { at }) +
        line(3, 'sending', { at }) +
        line(3, 'failed', { error: 'HTTP 500', http_status: 500 }),
    );
    // Every group was deleted before: 1 answered, 2 and 3 by requests whose answer was lost.
    const { service, sent } = deletes(() => {
      throw notFound();
    });
    const opts = options(from, { output: out, resume: true });
    const error = await rejection(runBulk(opts, makeDeps({ service }), noTimer));
    // Row 4 was never sent: its 404 is the token's own (exit 1).
    expect((error as ApiError).exitCode).toBe(1);
    expect(sent.map((r) => r.current_token).sort()).toEqual([
      'tok-2-2222',
      'tok-3-3333',
      'tok-4-4444',
    ]);
    expect(outcomes(out).map((r) => [r.row, r.status, r.settled_by ?? null])).toEqual([
      [1, 'deleted', null],
      [2, 'deleted', 'delete'],
      [3, 'deleted', 'delete'],
      [4, 'failed', null],
    ]);
  });

  it('a lost answer whose repeats are lost too stays unknown (exit 5), worded as a delete', async () => {
    const from = ndjson([{ current_token: 'tok-a-1111' }]);
    const { service } = deletes(() => {
      throw lost();
    });
    const opts = options(from);
    const error = await rejection(runBulk(opts, makeDeps({ service }), noTimer));
    expect((error as OutcomeUnknownError).exitCode).toBe(5);
    expect((error as Error).message).toBe(
      '1 delete has an unknown outcome: the user group may or may not have been deleted',
    );
    const hint = (error as OutcomeUnknownError).hint ?? '';
    expect(hint).toContain('run again with --resume');
    expect(hint).not.toContain('user_group_id and name');
    expect(outcomes(opts.output ?? '')[0]?.status).toBe('unknown');
  });
});

// ---- the command, against the emulator ----

const API_TOKEN = 'apitoken-delete-from-2468ace0';

function setup(dialect: 'interface' | 'explo' | 'customer') {
  return serviceWithProfile(API_TOKEN, { dialect }, dialect === 'interface' ? {} : { dialect });
}

/** The request reaches the service (the group is deleted), and a gateway's 502 comes back. */
function deletedThenLost(service: Service): Reply {
  const forward = forwardTo(service.emulator.url, service.answers);
  const gateway = text(502, '<html><body>502 Bad Gateway</body></html>', 'text/html');
  return async (ctx) => {
    const discarded = { writeHead: () => discarded, end: () => discarded };
    await forward({ ...ctx, res: discarded as unknown as typeof ctx.res });
    await gateway(ctx);
  };
}

async function historyEvents(sb: Sandbox): Promise<Record<string, unknown>[]> {
  const history = await runMain(['history', '--json'], { sandbox: sb });
  expect(history.code, describeRun(history)).toBe(0);
  return history.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe.each(['customer', 'explo'] as const)('ugs delete --from in the %s dialect', (dialect) => {
  const path = dialect === 'customer' ? '/api/delete_customer/' : '/api/delete_user_group/';

  it('deletes every row, settles one whose answer was lost, records each by fingerprint', async () => {
    const { sb, service } = await setup(dialect);
    const acme = await service.seed('acme', 'Acme');
    const globex = await service.seed('globex', 'Globex');
    const initech = await service.seed('initech', 'Initech');
    const from = join(sb.root, 'tokens.csv');
    writeFileSync(
      from,
      `user_group_id,current_token\nacme,${acme.token}\nglobex,${globex.token}\n,${initech.token}\n`,
    );
    const out = join(sb.root, 'deleted.ndjson');
    // globex's delete happens, and its answer is lost on the way back.
    service.fail(
      (ctx) => forwardTo(service.emulator.url, service.answers)(ctx),
      deletedThenLost(service),
    );
    const result = await runMain(
      ['delete', '--from', from, '--output', out, '--yes', '--concurrency', '1', '--rate', '50/s'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(
      outcomes(out).map((r) => [r.row, r.user_group_id, r.status, r.settled_by ?? null]),
    ).toEqual([
      [1, 'acme', 'deleted', null],
      [2, 'globex', 'deleted', 'delete'],
      [3, null, 'deleted', null],
    ]);
    // Only the token went out, once per row and once more for the row in doubt.
    const sent = service.requests.filter((r) => r.method === 'DELETE');
    expect(new Set(sent.map((r) => r.url))).toEqual(new Set([path]));
    expect(sent.map((r) => r.json)).toEqual([
      { current_token: acme.token },
      { current_token: globex.token },
      { current_token: globex.token },
      { current_token: initech.token },
    ]);
    for (const id of ['acme', 'globex', 'initech']) {
      await expect(service.group(id)).rejects.toThrow();
    }
    const output = `${result.stdout}${result.stderr}${readFileSync(out, 'utf8')}`;
    for (const token of [acme.token, globex.token, initech.token]) {
      expect(output).not.toContain(token);
    }
    const events = (await historyEvents(sb)).filter((event) => event.outcome === 'deleted');
    expect(
      events.map((event) => [event.user_group_id, event.sent_last4, event.token_last4]),
    ).toEqual(
      expect.arrayContaining([
        ['acme', acme.token.slice(-4), null],
        ['globex', globex.token.slice(-4), null],
        [null, initech.token.slice(-4), null],
      ]),
    );
    expect(events).toHaveLength(3);
  });
});

describe('ugs delete --from: what it refuses', () => {
  it('single-row flags with --from are refused (exit 2), nothing sent', async () => {
    const { sb, service } = await setup('customer');
    const from = join(sb.root, 'tokens.csv');
    writeFileSync(from, 'current_token\ntok-a-1111\n');
    for (const extra of [
      ['--current-token', 'x-1234'],
      ['--current-token-stdin'],
      ['--id', 'acme'],
      ['--json'],
      ['--field', 'outcome'],
    ]) {
      const result = await runMain(
        ['delete', '--from', from, '--output', join(sb.root, 'o.ndjson'), '--yes', ...extra],
        { sandbox: sb },
      );
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stderr).toContain(`--from cannot be combined with ${extra[0]}`);
    }
    expect(service.requests).toEqual([]);
  });

  it('needs --output, and --yes without a terminal (exit 2, nothing sent)', async () => {
    const { sb, service } = await setup('customer');
    const from = join(sb.root, 'tokens.csv');
    writeFileSync(from, 'current_token\ntok-a-1111\n');
    const noOutput = await runMain(['delete', '--from', from, '--yes'], { sandbox: sb });
    expect(noOutput.code, describeRun(noOutput)).toBe(2);
    expect(noOutput.stderr).toContain('delete --from needs --output FILE');
    const noYes = await runMain(['delete', '--from', from, '--output', join(sb.root, 'o.csv')], {
      sandbox: sb,
    });
    expect(noYes.code, describeRun(noYes)).toBe(2);
    expect(noYes.stderr).toContain('--yes is required to delete user groups');
    expect(service.requests).toEqual([]);
  });

  it('in the interface dialect: exit 2 naming the dialects that offer it, nothing read or sent', async () => {
    const { sb, service } = await setup('interface');
    const result = await runMain(
      [
        'delete',
        '--from',
        join(sb.root, 'missing.csv'),
        '--output',
        join(sb.root, 'o.csv'),
        '--yes',
      ],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('delete is not part of the interface dialect');
    expect(service.requests).toEqual([]);
  });
});
