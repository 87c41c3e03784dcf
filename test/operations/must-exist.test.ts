/**
 * `get --must-exist`: the service has no read-only lookup, so a mistyped id is
 * created by the very get that checks it. The flag makes that a failure (exit 1) that says the
 * group now exists, single and bulk.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runGet } from '../../src/operations/get-user/command.js';
import { lastByRow, readRecords } from '../kit/bulk.js';
import { echoService, makeDeps, makeIO, rejection } from '../kit/fakes.js';
import {
  describeRun,
  runMain,
  type Sandbox,
  type Service,
  serviceWithProfile,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-must-exist-1234abcd';

function setup(): Promise<{ sb: Sandbox; service: Service }> {
  return serviceWithProfile(API_TOKEN);
}

describe('get --must-exist', () => {
  it('a new id: exit 1, nothing on stdout, and the message says the group exists now', async () => {
    const { sb, service } = await setup();
    const result = await runMain(
      ['get', '--id', 'muller-gmbh', '--name', 'Müller GmbH', '--must-exist', '--field', 'token'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /error: --must-exist: user group "muller-gmbh" did not exist, so the service created it: it now exists, and ugs cannot remove it/,
    );
    expect(result.stderr).toMatch(/hint: .*typo/);
    expect(result.stderr).not.toMatch(/Created user group/);
    // It does exist now: the service created it.
    expect(service.createdIds()).toEqual(['muller-gmbh']);
  });

  it('an existing id: exit 0 with the token, as without the flag', async () => {
    const { sb, service } = await setup();
    const group = await service.seed('müller-gmbh', 'Müller GmbH');
    const result = await runMain(
      ['get', '--id', 'müller-gmbh', '--name', 'Müller GmbH', '--must-exist', '--field', 'token'],
      { sandbox: sb },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe(`${group.token}\n`);
  });

  it('--json of a new id prints nothing on stdout either', async () => {
    const { sb } = await setup();
    const result = await runMain(['get', '--id', 'typo', '--name', 'T', '--must-exist', '--json'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout).toBe('');
  });

  it('an answer without new_user_group cannot vouch that the group existed: exit 1', async () => {
    const io = makeIO();
    const error = await rejection(
      runGet(
        {
          id: 'acme',
          name: 'Acme',
          mapping: undefined,
          properties: undefined,
          format: { kind: 'field', name: 'token' },
          mustExist: true,
        },
        makeDeps({ io, service: echoService(null) }),
      ),
    );
    expect(error).toMatchObject({ exitCode: 1 });
    expect((error as Error).message).toMatch(/did not say whether user group "acme" existed/);
    expect(io.stdout.text).toBe('');
  });

  it('without the flag a new id is still created and exit 0', async () => {
    const { sb } = await setup();
    const result = await runMain(['get', '--id', 'fresh', '--name', 'F', '--field', 'token'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(0);
  });
});

describe('get --from --must-exist', () => {
  it('rows the service reports as new are failed with that message; found rows are found', async () => {
    const { sb, service } = await setup();
    const known = await service.seed('known', 'Known');
    const input = join(sb.root, 'rows.csv');
    const output = join(sb.root, 'results.ndjson');
    writeFileSync(input, 'user_group_id,name\nknown,Known\ntypo-id,Typo\n');
    const result = await runMain(['get', '--from', input, '--output', output, '--must-exist'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(1);
    const records = lastByRow(
      readRecords<{ row: number; status: string; token: string | null; error: string | null }>(
        output,
      ),
    );
    expect(records.get(1)).toMatchObject({ status: 'found', token: known.token, error: null });
    expect(records.get(2)).toMatchObject({
      status: 'failed',
      token: null,
      new_user_group: true,
      error:
        '--must-exist: user group "typo-id" did not exist, so the service created it: it now exists, and ugs cannot remove it',
    });
    expect(result.stderr).toMatch(/1 found, 1 failed/);
  });

  it('records on stdout without --output: the new row is failed, exit 1', async () => {
    const { sb } = await setup();
    const input = join(sb.root, 'rows.ndjson');
    writeFileSync(input, '{"user_group_id":"a","name":"A"}\n');
    const result = await runMain(['get', '--from', input, '--must-exist'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stdout).toMatch(/"status":"failed"/);
  });
});
