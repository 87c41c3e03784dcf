/**
 * `--dry-run` of every bulk run (get, rotate, update, delete --from): the input validated as for
 * a real run, each row's request shown as it would go on the wire (current tokens by their last
 * 4 characters), and nothing sent: no API token, no profile, no results file, no question.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeSandbox, runMain, serviceForTest, describeRun as show } from '../kit/index.js';

const API_TOKEN = 'api-token-dry-run';
// The sheet of the incident: a Plan column ugs did not know, and a blank row below the data.
const SHEET = 'User Group ID;Name;Plan\r\nacme;Acme;pro\r\nbeta;Beta;free\r\n;;\r\n';
const TOKENS = ['tok-first-0000000000a1b2', 'tok-second-000000000c3d4'];

function files() {
  const sandbox = makeSandbox();
  const groups = join(sandbox.root, 'groups.csv');
  writeFileSync(groups, SHEET);
  const tokens = join(sandbox.root, 'tokens.csv');
  writeFileSync(tokens, `current_token,user_group_id\n${TOKENS[0]},acme\n${TOKENS[1]},beta\n`);
  return { sandbox, groups, tokens };
}

/** Parsed stdout lines of `--dry-run --json`. */
function lines(stdout: string): unknown[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}

describe('--dry-run', () => {
  it('get --from: a summary of what would be sent, with no API token, profile or service', async () => {
    const { sandbox, groups } = files();
    const output = join(sandbox.root, 'results.ndjson');
    // No login, no UGS_API_TOKEN, no base URL: anything that needed them would fail.
    const result = await runMain(['get', '--from', groups, '--dry-run', '--output', output], {
      sandbox,
    });
    expect(result.code, show(result)).toBe(0);
    expect(result.stdout).toBe(
      [
        `Dry run of get --from ${groups}: nothing was sent.`,
        '  would send      2 rows (GET /api/user each); each group is created, or found as it is: which, only the service can tell',
        '  fields sent     name 2, user_group_id 2',
        '  columns ignored "Plan" (see the note above)',
        '  skipped         1 row left blank',
        '',
      ].join('\n'),
    );
    expect(result.stderr).toContain(
      '"Plan": did you mean properties.Plan or mapping.Plan? --column Plan=properties.Plan maps it',
    );
    // No results file is written, not even created.
    expect(existsSync(output)).toBe(false);
  });

  it('--json: one line per row, the body as the dialect sends it; --column shows in it', async () => {
    const { sandbox, groups } = files();
    const result = await runMain(
      ['get', '--from', groups, '--dry-run', '--json', '--column', 'Plan=properties.plan'],
      { sandbox },
    );
    expect(result.code, show(result)).toBe(0);
    expect(lines(result.stdout)).toEqual([
      { row: 1, would_send: { name: 'Acme', user_group_id: 'acme', properties: { plan: 'pro' } } },
      { row: 2, would_send: { name: 'Beta', user_group_id: 'beta', properties: { plan: 'free' } } },
    ]);
    expect(result.stderr).not.toContain('ugs does not know');
    // The vendor's Customer API names the id its own way: the dry run shows what it would get.
    const customer = await runMain(
      ['--dialect', 'customer', 'update', '--from', groups, '--dry-run', '--json'],
      { sandbox },
    );
    expect(customer.code, show(customer)).toBe(0);
    expect(lines(customer.stdout)).toEqual([
      { row: 1, would_send: { provided_id: 'acme', name: 'Acme' } },
      { row: 2, would_send: { provided_id: 'beta', name: 'Beta' } },
    ]);
  });

  it('rotate and delete --from: no --yes or --output needed, current tokens by their last 4', async () => {
    const { sandbox, tokens } = files();
    for (const command of ['rotate', 'delete']) {
      // The interface has no delete: the vendor's dialect does.
      const dialect = command === 'delete' ? ['--dialect', 'explo'] : [];
      const json = await runMain([...dialect, command, '--from', tokens, '--dry-run', '--json'], {
        sandbox,
      });
      expect(json.code, show(json)).toBe(0);
      expect(lines(json.stdout)).toEqual([
        { row: 1, would_send: { current_token: '\u2026a1b2' } },
        { row: 2, would_send: { current_token: '\u2026c3d4' } },
      ]);
      const summary = await runMain([...dialect, command, '--from', tokens, '--dry-run'], {
        sandbox,
      });
      expect(summary.code, show(summary)).toBe(0);
      expect(summary.stdout).toContain(
        `  would send      2 ${command === 'rotate' ? 'rotations' : 'deletes'} (`,
      );
      expect(summary.stdout).toContain('  fields sent     current_token 2');
      for (const token of TOKENS) {
        for (const run of [json, summary]) {
          expect(run.stdout + run.stderr).not.toContain(token);
        }
      }
    }
  });

  it('sends nothing to the service a profile or the environment names', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const { sandbox, groups, tokens } = files();
    const env = { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN };
    for (const argv of [
      ['get', '--from', groups],
      ['rotate', '--from', tokens],
      ['--dialect', 'explo', 'delete', '--from', tokens],
      ['--dialect', 'explo', 'get', '--from', groups],
    ]) {
      const result = await runMain([...argv, '--dry-run'], { sandbox, env });
      expect(result.code, show(result)).toBe(0);
    }
    expect(service.requests).toHaveLength(0);
  });

  it('at a terminal asks nothing (not about the columns left out, nor to confirm)', async () => {
    const { sandbox, groups, tokens } = files();
    for (const argv of [
      ['get', '--from', groups],
      ['rotate', '--from', tokens],
    ]) {
      // runMain's prompts read an empty stdin: a question would end the run (exit 130).
      const result = await runMain([...argv, '--dry-run'], { sandbox, tty: true });
      expect(result.code, show(result)).toBe(0);
      expect(result.stdout).toContain('nothing was sent');
    }
  });

  it('--resume: rows the results show done are counted, not shown as sent', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const { sandbox, groups } = files();
    const env = { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN };
    const output = join(sandbox.root, 'results.ndjson');
    const real = await runMain(['get', '--from', groups, '--output', output], { sandbox, env });
    expect(real.code, show(real)).toBe(0);
    const sent = service.requests.length;
    const dry = await runMain(
      ['get', '--from', groups, '--output', output, '--resume', '--dry-run'],
      { sandbox, env },
    );
    expect(dry.code, show(dry)).toBe(0);
    expect(dry.stdout).toContain('  would send      0 rows');
    expect(dry.stdout).toContain('  done already    2 rows (--resume: not sent)');
    expect(service.requests).toHaveLength(sent);
  });

  it('an invalid input: exit 2 with every problem listed, and nothing on stdout', async () => {
    const { sandbox } = files();
    const from = join(sandbox.root, 'bad.ndjson');
    writeFileSync(from, '{"user_group_id":"acme"}\n{"user_group_id":"acme","name":"A"}\n');
    const result = await runMain(['get', '--from', from, '--dry-run', '--json'], { sandbox });
    expect(result.code, show(result)).toBe(2);
    expect(result.stderr).toContain('row 1 (line 1): name is missing');
    expect(result.stdout).toBe('');
  });

  it.each([
    [['get', '--dry-run'], '--dry-run works only with --from'],
    [['rotate', '--dry-run', '--current-token-stdin'], '--dry-run works only with --from'],
    [['get', '--from', 'rows.csv', '--json'], '--from cannot be combined with --json'],
  ])('ugs %j is a usage error (exit 2)', async (argv, expected) => {
    const result = await runMain(argv);
    expect(result.code, show(result)).toBe(2);
    expect(result.stderr).toContain(`error: ${expected}`);
  });
});
