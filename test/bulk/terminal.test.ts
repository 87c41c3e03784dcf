/**
 * A bulk run read by a person: at a terminal without `--output`, one line
 * per row (row, id, status, the token's last 4), never NDJSON with whole tokens; into a pipe the
 * NDJSON records stay as they are (CI scripts parse them). And the summary of a run stopped by a
 * refused API token says so, and how many rows were not sent.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
