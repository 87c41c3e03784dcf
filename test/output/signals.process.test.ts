/**
 * What happens around the result: stdout that cannot be written (full disk), a reader that
 * closes the pipe early, and signals while a request is in flight. The built binary runs against
 * a local recording server.
 */
import { closeSync, openSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acmeBody,
  acmeGroup,
  runShell,
  runUgs,
  STACK_LINE,
  sendJson,
  startServer,
  startUgs,
  type TestServer,
  UGS_SHELL,
} from '../kit/index.js';

/** The group these cases' server answers: the one the commands ask for. */
const userGroup = acmeGroup;
const okBody = acmeBody;

let server: TestServer;
/** Requests whose body holds this never get an answer. */
const HANG = 'hang-forever';

beforeAll(async () => {
  server = await startServer(({ res, request: record }) => {
    if (record.body.includes(HANG)) return;
    if (record.body.includes('rejected-token')) {
      sendJson(res, 401, { detail: 'Invalid token.' });
      return;
    }
    const body = record.body.includes('current_token')
      ? {
          success: 1,
          user_group: userGroup({
            name: "Acme's Corp",
            token: 'ugt_new_token_after_rotation',
            api_environment_tag: 'Customer',
          }),
        }
      : okBody();
    sendJson(res, 200, body);
  });
});
afterAll(() => server.close());

function env() {
  return { UGS_API_TOKEN: 'api-token-output', UGS_BASE_URL: server.url };
}

/**
 * Runs ugs with stdout on /dev/full (every write fails with ENOSPC). Asynchronously: the server
 * answering it runs in this process.
 */
async function toFullDisk(args: string[]) {
  const full = openSync('/dev/full', 'w');
  try {
    const result = await runUgs(args, { env: env(), stdin: null, stdout: full });
    return { status: result.code, stderr: result.stderr };
  } finally {
    closeSync(full);
  }
}

const rotate = ['rotate', '--current-token', 'old-token-for-output', '--yes'];

describe('stdout cannot be written', () => {
  for (const format of [[], ['--json'], ['--field', 'token']]) {
    it(`rotate ${format.join(' ')} > /dev/full: exit 5 with the recovery command`, async () => {
      const result = await toFullDisk([...rotate, ...format]);
      expect(result.status, result.stderr).toBe(5);
      expect(result.stderr).not.toMatch(STACK_LINE);
      expect(result.stderr).toMatch(
        /^error: could not write the output: .*; the token WAS rotated/m,
      );
      expect(result.stderr).toMatch(/ENOSPC/);
      expect(result.stderr).toContain(
        "`ugs get --id acme --name 'Acme'\\''s Corp' --must-exist --field token`",
      );
    });
  }

  for (const format of [[], ['--json'], ['--field', 'token']]) {
    it(`get ${format.join(' ')} > /dev/full: exit 1, one error line`, async () => {
      const result = await toFullDisk(['get', '--id', 'acme', '--name', 'Acme', ...format]);
      expect(result.status, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/^error: could not write the output: ENOSPC/m);
      expect(result.stderr).not.toMatch(STACK_LINE);
    });
  }

  it('--help > /dev/full: exit 1, not a crash', async () => {
    const result = await toFullDisk(['--help']);
    expect(result.status, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/^error: could not write the output/m);
    expect(result.stderr).not.toMatch(STACK_LINE);
  });
});

describe('the reader closes the pipe early: the exit code is still the command result', () => {
  async function pipedIntoTrue(args: string[]) {
    const command = `${UGS_SHELL} ${args.map((a) => `'${a}'`).join(' ')}`;
    const result = await runShell(`${command} | true; exit "\${PIPESTATUS[0]}"`, {
      env: env(),
      stdin: null,
    });
    return { status: result.code, stderr: result.stderr };
  }
  it('a failed rotate | true exits 3', async () => {
    const result = await pipedIntoTrue([
      'rotate',
      '--current-token',
      'rejected-token',
      '--yes',
      '--json',
    ]);
    expect(result.status, result.stderr).toBe(3);
    expect(result.stderr).not.toMatch(STACK_LINE);
  });
  it('a successful get | true exits 0, quietly', async () => {
    const result = await pipedIntoTrue(['get', '--id', 'acme', '--name', 'Acme']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/error/);
  });
});

describe('a signal while a request is in flight', () => {
  async function interrupt(args: string[], signal: NodeJS.Signals) {
    const before = server.requests.length;
    const { child, result: output } = startUgs(args, { env: env(), stdin: null });
    for (let i = 0; i < 500 && server.requests.length === before; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(server.requests.length).toBeGreaterThan(before);
    child.kill(signal);
    return output;
  }

  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s during a rotation: may or may not, with recovery',
    async (signal) => {
      const result = await interrupt(
        ['rotate', '--current-token', `${HANG}-token`, '--yes'],
        signal,
      );
      expect(result.code, result.stderr).toBe(130);
      expect(result.stderr).toMatch(
        /^error: interrupted while the rotation request was in flight: the token may or may not have been rotated$/m,
      );
      expect(result.stderr).toMatch(
        /^hint: .*ugs get --id <user_group_id> --name <name> --must-exist --field token/m,
      );
      expect(result.stderr).not.toMatch(STACK_LINE);
      expect(result.stdout).toBe('');
    },
  );

  // SIGHUP too: the terminal or ssh session closed; by default it would kill ugs mid-request.
  it.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)(
    '%s during get: one line, exit 130',
    async (signal) => {
      const result = await interrupt(['get', '--id', HANG, '--name', 'Acme'], signal);
      expect(result.code, result.stderr).toBe(130);
      expect(result.stderr.trim().split('\n')).toEqual([`error: interrupted by ${signal}`]);
    },
  );
});
