/**
 * `get --demo` sends `is_demo_group: true` (explo only; a usage error with the
 * interface), the bulk column `is_demo_group` does the same per row, and the table shows
 * `is_demo_group` when the answer has it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  runMain,
  type Sandbox,
  type Service,
  serviceWithProfile,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-demo-test-1357acef';

function setup(dialect: 'interface' | 'explo'): Promise<{ sb: Sandbox; service: Service }> {
  return serviceWithProfile(API_TOKEN, { dialect }, dialect === 'explo' ? { dialect } : {});
}

describe('get --demo', () => {
  it('sends is_demo_group: true with explo, and the table shows is_demo_group', async () => {
    const { sb, service } = await setup('explo');
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--demo'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests[0]?.json).toEqual({
      name: 'Acme',
      user_group_id: 'acme',
      is_demo_group: true,
    });
    expect(result.stdout).toMatch(/is_demo_group\s+true/);
    // Without --demo the flag is not sent, and the vendor's answer still says false.
    const plain = await runMain(['get', '--id', 'beta', '--name', 'Beta'], { sandbox: sb });
    expect(service.requests[1]?.json).toEqual({ name: 'Beta', user_group_id: 'beta' });
    expect(plain.stdout).toMatch(/is_demo_group\s+false/);
  });

  it('--field is_demo_group prints the answer of the vendor', async () => {
    const { sb } = await setup('explo');
    const result = await runMain(
      ['get', '--id', 'acme', '--name', 'Acme', '--demo', '--field', 'is_demo_group'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe('true\n');
  });

  it('is a usage error (exit 2) with the interface dialect, nothing sent', async () => {
    const { sb, service } = await setup('interface');
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--demo'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('error: --demo needs the explo dialect');
    expect(result.stdout).toBe('');
    expect(service.requests).toEqual([]);
  });

  it('cannot be combined with --from (each row says it in its is_demo_group column)', async () => {
    const { sb } = await setup('explo');
    const rows = join(sb.root, 'rows.csv');
    writeFileSync(rows, 'user_group_id,name\na,A\n');
    const result = await runMain(['get', '--from', rows, '--demo'], { sandbox: sb });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--from cannot be combined with --demo');
  });
});

describe('get --from with an is_demo_group column', () => {
  it('sends each row its own flag (CSV true/false, blank: not sent)', async () => {
    const { sb, service } = await setup('explo');
    const rows = join(sb.root, 'rows.csv');
    writeFileSync(rows, 'user_group_id,name,is_demo_group\na,A,true\nb,B,false\nc,C,\n');
    const result = await runMain(['get', '--from', rows, '--concurrency', '1'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests.map((r) => r.json)).toEqual([
      { name: 'A', user_group_id: 'a', is_demo_group: true },
      { name: 'B', user_group_id: 'b', is_demo_group: false },
      { name: 'C', user_group_id: 'c' },
    ]);
  });

  it('a CSV cell says yes/no, y/n, 1/0 or TRUE/FALSE as people and spreadsheets write them', async () => {
    const { sb, service } = await setup('explo');
    const rows = join(sb.root, 'words.csv');
    const cells = ['yes', 'No', 'Y', 'n', '1', '0', 'TRUE', 'False'];
    writeFileSync(
      rows,
      `user_group_id,name,is_demo_group\n${cells.map((cell, at) => `g${at},G,${cell}`).join('\n')}\n`,
    );
    const result = await runMain(['get', '--from', rows, '--concurrency', '1'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    const sent = new Map(
      service.requests.map((r) => {
        const body = r.json as { user_group_id: string; is_demo_group: boolean };
        return [body.user_group_id, body.is_demo_group];
      }),
    );
    expect(cells.map((_, at) => sent.get(`g${at}`))).toEqual([
      true,
      false,
      true,
      false,
      true,
      false,
      true,
      false,
    ]);
  });

  it('NDJSON booleans are sent as they are; a value that is no boolean is refused (exit 2)', async () => {
    const { sb, service } = await setup('explo');
    const rows = join(sb.root, 'rows.ndjson');
    writeFileSync(rows, '{"user_group_id":"a","name":"A","is_demo_group":true}\n');
    const ok = await runMain(['get', '--from', rows], { sandbox: sb });
    expect(ok.code, describeRun(ok)).toBe(0);
    expect(service.requests[0]?.json).toMatchObject({ is_demo_group: true });
    const bad = join(sb.root, 'bad.csv');
    writeFileSync(bad, 'user_group_id,name,is_demo_group\na,A,maybe\n');
    const refused = await runMain(['get', '--from', bad], { sandbox: sb });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'is_demo_group must be true or false (or yes/no, 1/0), got "maybe"',
    );
    expect(service.requests).toHaveLength(1);
  });

  it('with the interface dialect a row that sets it is refused before anything is sent', async () => {
    const { sb, service } = await setup('interface');
    const rows = join(sb.root, 'rows.csv');
    writeFileSync(rows, 'user_group_id,name,is_demo_group\na,A,\nb,B,true\n');
    const result = await runMain(['get', '--from', rows], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('is_demo_group needs --dialect explo');
    expect(service.requests).toEqual([]);
  });
});
