/**
 * A bulk run read by a person: at a terminal without `--output`, one line
 * per row (row, id, status, the token's last 4), never NDJSON with whole tokens; into a pipe the
 * NDJSON records stay as they are (CI scripts parse them). And the summary of a run stopped by a
 * refused API token says so, and how many rows were not sent.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BulkOptions, runBulk } from '../../src/bulk/run.js';
import { CancelledError } from '../../src/errors.js';
import { bulkSpecs } from '../kit/bulk.js';
import { FakeService, groupResult, makeDeps, terminalIO } from '../kit/fakes.js';
import {
  json,
  makeSandbox,
  runMain,
  type Sandbox,
  serviceForTest,
  describeRun as show,
  stripAnsi,
} from '../kit/index.js';

const API_TOKEN = 'api-token-bulk-terminal';

function groupsFile(sandbox: Sandbox, ids: readonly string[]): string {
  const path = join(sandbox.root, 'groups.ndjson');
  writeFileSync(
    path,
    ids.map((id) => `${JSON.stringify({ user_group_id: id, name: id })}\n`).join(''),
  );
  return path;
}

describe('get --from at a terminal', () => {
  it('prints one readable line per row with the token cut to its last 4, not NDJSON', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sandbox = makeSandbox();
    const known = await service.seed('globex', 'Globex');
    const from = groupsFile(sandbox, ['acme', 'globex', 'müller-gmbh']);
    const result = await runMain(['get', '--from', from, '--concurrency', '1'], {
      sandbox,
      env: { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN },
      tty: true,
      columns: 200,
    });
    expect(result.code, show(result)).toBe(0);
    const tokens = await Promise.all(
      ['acme', 'globex', 'müller-gmbh'].map(async (id) => (await service.group(id)).token),
    );
    expect(tokens[1]).toBe(known.token);
    const lines = stripAnsi(result.stdout).split('\n');
    expect(lines).toEqual([
      'ROW  USER_GROUP_ID  STATUS    TOKEN',
      `  1  acme           created   \u2026${tokens[0]?.slice(-4)}`,
      `  2  globex         found     \u2026${tokens[1]?.slice(-4)}`,
      `  3  müller-gmbh    created   \u2026${tokens[2]?.slice(-4)}`,
      '',
    ]);
    for (const token of tokens) expect(result.stdout).not.toContain(token);
    expect(result.stdout).not.toContain('{');
    // Where the whole records are, said once before the summary.
    expect(result.stderr).toContain(
      'note: tokens are shown by their last 4 characters at a terminal: pass --output FILE, or pipe the output, for the whole records',
    );
    expect(stripAnsi(result.stderr)).toMatch(/(^|\n)3 rows in \S+.*: 2 created, 1 found\n$/);
  });

  it('says why a row failed on its line; into a pipe the records stay NDJSON with whole tokens', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sandbox = makeSandbox();
    const from = groupsFile(sandbox, ['acme', 'globex']);
    const env = { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN, NO_COLOR: '1' };
    // The first row's request is refused as invalid, every try of it.
    service.fail(json(400, { name: ['Ensure this field has no more than 255 characters.'] }));
    const atTerminal = await runMain(['get', '--from', from, '--concurrency', '1'], {
      sandbox,
      env,
      tty: true,
    });
    expect(atTerminal.code, show(atTerminal)).toBe(1);
    const [, first, second] = atTerminal.stdout.split('\n');
    expect(first).toMatch(
      /^ {2}1 {2}acme {11}failed {4}- {6}the service answered HTTP 400: name: Ensure .*255 characters\.$/,
    );
    expect(second).toMatch(/^ {2}2 {2}globex {9}created {3}\u2026\S{4}$/);

    const piped = await runMain(['get', '--from', from, '--concurrency', '1'], { sandbox, env });
    expect(piped.code, show(piped)).toBe(0);
    const records = piped.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { row: number; status: string; token: string });
    expect(records.map((r) => [r.row, r.status])).toEqual([
      [1, 'created'],
      [2, 'found'],
    ]);
    expect(records[1]?.token).toBe((await service.group('globex')).token);
    expect(piped.stderr).not.toContain('last 4 characters');
  });

  it('writes nothing but the summary at a terminal when --output takes the records', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sandbox = makeSandbox();
    const from = groupsFile(sandbox, ['acme']);
    const result = await runMain(
      ['get', '--from', from, '--output', join(sandbox.root, 'results.ndjson')],
      { sandbox, env: { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN }, tty: true },
    );
    expect(result.code, show(result)).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain('last 4 characters');
  });
});

describe('a bulk run stopped by a refused API token', () => {
  it.each([
    ['in a log', false],
    ['at a terminal', true],
  ])(
    '%s, the summary says it stopped at the first 401/403 and how many rows were not sent',
    async (_where, tty) => {
      const service = await serviceForTest([API_TOKEN]);
      const sandbox = makeSandbox();
      const from = groupsFile(sandbox, ['g-1', 'g-2', 'g-3', 'g-4', 'g-5']);
      const result = await runMain(['get', '--from', from, '--concurrency', '1'], {
        sandbox,
        env: { UGS_BASE_URL: service.url, UGS_API_TOKEN: 'not-the-api-token', NO_COLOR: '1' },
        tty,
        columns: 200,
      });
      expect(result.code, show(result)).toBe(3);
      expect(service.requests).toHaveLength(1);
      expect(result.stderr).toMatch(
        /(^|\n)5 rows in \S+.*: 1 failed, 4 skipped; the run stopped at the first 401\/403 \(HTTP 401, row 1\): 4 rows were not sent\n/,
      );
      if (tty) {
        expect(result.stdout).toMatch(
          /\n {2}1 {2}g-1 {12}failed {4}- {6}the API token was not accepted \(HTTP 401/,
        );
        expect(result.stdout).toMatch(/\n {2}5 {2}g-5 {12}skipped {3}- {6}not sent\n$/);
      }
    },
  );
});

describe('a bulk run at a terminal that would leave columns out', () => {
  const SHEET = 'User Group ID;Name;Plan;Region\nacme;Acme;pro;eu\nbeta;Beta;free;us\n';

  function sheet(sandbox: Sandbox): string {
    const path = join(sandbox.root, 'groups.csv');
    writeFileSync(path, SHEET);
    return path;
  }

  async function asked(answer: boolean) {
    const sandbox = makeSandbox();
    const service = new FakeService({
      get: (request) => groupResult({ provided_id: request.user_group_id, name: request.name }),
    });
    const deps = makeDeps({
      io: terminalIO(),
      prompts: [['confirm', '2 columns would be ignored: "Plan", "Region". Send anyway?', answer]],
      service,
    });
    const opts: BulkOptions = {
      spec: bulkSpecs.get,
      from: sheet(sandbox),
      format: 'csv',
      concurrency: 1,
      output: undefined,
      resume: false,
      yes: true,
      askColumns: true,
    };
    const run = runBulk(opts, deps).then(
      () => undefined,
      (error: unknown) => error,
    );
    return { error: await run, deps, service };
  }

  it('asks first, after validation; no (the default) sends nothing and exits 130', async () => {
    const { error, deps, service } = await asked(false);
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as CancelledError).exitCode).toBe(130);
    expect((error as Error).message).toMatch(/^cancelled; nothing was sent/);
    expect(deps.prompter.calls.map((call) => call.default)).toEqual([false]);
    // The note with each column's fix is there before the question.
    // (broken at spaces to fit the terminal)
    expect(stripAnsi(deps.io.stderr.text).replace(/\s+/g, ' ')).toContain(
      '"Plan": did you mean properties.Plan or mapping.Plan? --column Plan=properties.Plan maps it',
    );
    expect(service.gets).toHaveLength(0);
  });

  it('yes sends the rows without those columns', async () => {
    const { error, deps, service } = await asked(true);
    expect(error).toBeUndefined();
    deps.prompter.assertDone();
    expect(service.gets).toEqual([
      { user_group_id: 'acme', name: 'Acme' },
      { user_group_id: 'beta', name: 'Beta' },
    ]);
  });

  it('an input with problems is refused before any question', async () => {
    const sandbox = makeSandbox();
    const from = join(sandbox.root, 'bad.csv');
    writeFileSync(from, 'user_group_id;name;Plan\nacme;;pro\n');
    // An empty stdin: a question would end the run (exit 130).
    const result = await runMain(['get', '--from', from], {
      sandbox,
      env: { UGS_BASE_URL: 'http://127.0.0.1:9', UGS_API_TOKEN: API_TOKEN },
      tty: true,
    });
    expect(result.code, show(result)).toBe(2);
    expect(result.stderr).not.toContain('Send anyway?');
  });

  it('-y or --no-input do not ask: the note stays', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sandbox = makeSandbox();
    const env = { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN };
    const from = sheet(sandbox);
    for (const argv of [
      ['get', '--from', from, '-y'],
      ['--no-input', 'get', '--from', from],
    ]) {
      // An empty stdin: a question would end the run (exit 130).
      const result = await runMain(argv, { sandbox, env, tty: true });
      expect(result.code, show(result)).toBe(0);
      expect(result.stderr).not.toContain('Send anyway?');
      expect(result.stderr).toContain('ignored columns ugs does not know: "Plan", "Region"');
    }
    expect(service.requests).toHaveLength(4);
  });
});
