import { describe, expect, it } from 'vitest';
import {
  describeRun,
  errorLines,
  makeSandbox,
  runCli,
  type Sandbox,
  STACK_LINE,
  setupCliSuite,
  writeProfiles,
} from './run.js';
import { closedPort, type StubService, stubForTest } from './stub.js';

setupCliSuite();

const API_TOKEN = 'apitoken-rotate-test-9012ijkl';

async function setup(): Promise<{ sb: Sandbox; stub: StubService; oldToken: string }> {
  const stub = await stubForTest([API_TOKEN]);
  const sb = makeSandbox();
  writeProfiles(sb, { default: { baseUrl: stub.url, apiToken: API_TOKEN } });
  const oldToken = stub.seedGroup('acme', 'Acme Corp').token;
  return { sb, stub, oldToken };
}

describe('ugs rotate (built binary)', () => {
  it('--current-token-stdin --yes --json rotates once and prints the body', async () => {
    const { sb, stub, oldToken } = await setup();
    const result = await runCli(sb, ['rotate', '--current-token-stdin', '--yes', '--json'], {
      stdin: `${oldToken}\n`,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]?.method).toBe('POST');
    expect(stub.requests[0]?.url).toBe('/api/user');
    expect(stub.requests[0]?.json).toEqual({ current_token: oldToken });
    expect(stub.requests[0]?.headers.authorization).toBe(`Token ${API_TOKEN}`);

    const sent = stub.lastResponse?.body;
    expect(result.stdout).toBe(`${JSON.stringify(sent, null, 2)}\n`);
    const newToken = stub.groups.get('acme')?.token;
    expect(newToken).not.toBe(oldToken);
    expect(JSON.parse(result.stdout).user_group.token).toBe(newToken);
    // The warning goes to stderr, so stdout stays parseable.
    expect(result.stderr).toMatch(/previous token may stop working/i);
    expect(result.stderr).not.toContain(API_TOKEN);
    expect(result.stderr).not.toContain(oldToken);

    // The old token no longer matches: the service says so and ugs exits 1.
    const again = await runCli(sb, ['rotate', '--current-token-stdin', '--yes'], {
      stdin: oldToken,
    });
    expect(again.code, describeRun(again)).toBe(1);
    expect(again.stderr).toContain('error: current_token does not match any user group');
  });

  it('table output leads with the new token and the warning', async () => {
    const { sb, stub, oldToken } = await setup();
    const result = await runCli(sb, ['rotate', '--current-token', oldToken, '--yes']);
    expect(result.code, describeRun(result)).toBe(0);
    const newToken = stub.groups.get('acme')?.token ?? '';
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('Rotated token of user group acme');
    expect(lines[1]).toBe(`New token: ${newToken}`);
    expect(lines[2]).toMatch(/previous token may stop working/i);
    expect(result.stdout).toContain('environment');
    expect(result.stdout).toContain('Customer');
  });

  it('--field token prints only the new token', async () => {
    const { sb, stub, oldToken } = await setup();
    const result = await runCli(
      sb,
      ['rotate', '--current-token-stdin', '--yes', '--field', 'token'],
      { stdin: oldToken },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe(`${stub.groups.get('acme')?.token}\n`);
  });

  it('without --yes and without a terminal: exit 2 and nothing is sent', async () => {
    const { sb, stub, oldToken } = await setup();
    const results = await Promise.all([
      runCli(sb, ['rotate', '--current-token-stdin', '--json'], { stdin: oldToken }),
      runCli(sb, ['rotate', '--current-token', oldToken]),
      runCli(sb, ['rotate', '--current-token-stdin', '--no-input'], { stdin: oldToken }),
    ]);
    for (const result of results) {
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stderr).toMatch(/^error: .*--yes/m);
      expect(result.stdout).toBe('');
    }
    expect(stub.requests).toHaveLength(0);
    expect(stub.groups.get('acme')?.token).toBe(oldToken);
  });

  it('missing or empty current token, or both sources: exit 2 and nothing is sent', async () => {
    const { sb, stub, oldToken } = await setup();
    const results = await Promise.all([
      runCli(sb, ['rotate', '--yes']),
      runCli(sb, ['rotate', '--yes', '--current-token-stdin'], { stdin: '\n' }),
      runCli(sb, ['rotate', '--yes', '--current-token', ''], {}),
      runCli(sb, ['rotate', '--yes', '--current-token', oldToken, '--current-token-stdin'], {
        stdin: oldToken,
      }),
    ]);
    for (const result of results) {
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stderr).toMatch(/^error: /m);
    }
    expect(stub.requests).toHaveLength(0);
  });

  it('socket destroyed after the request: exit 5, not retried, says how to check', async () => {
    const { sb, stub, oldToken } = await setup();
    stub.fault = { kind: 'destroy' };
    const result = await runCli(sb, ['rotate', '--current-token-stdin', '--yes', '--json'], {
      stdin: oldToken,
    });
    expect(result.code, describeRun(result)).toBe(5);
    expect(stub.requests).toHaveLength(1);
    expect(result.stdout).toBe('');
    expect(errorLines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/^error: .*may or may not/m);
    expect(result.stderr).toMatch(/^hint: .*ugs get --id/m);
    expect(result.stderr).not.toMatch(STACK_LINE);
    expect(result.stderr).not.toContain(oldToken);
  });

  it('no answer within --timeout: exit 5, not retried', async () => {
    const { sb, stub, oldToken } = await setup();
    stub.fault = { kind: 'hang' };
    const result = await runCli(
      sb,
      ['rotate', '--current-token-stdin', '--yes', '--timeout', '1'],
      {
        stdin: oldToken,
      },
    );
    expect(result.code, describeRun(result)).toBe(5);
    expect(stub.requests).toHaveLength(1);
    expect(result.stderr).toMatch(/^error: .*may or may not/m);
    expect(result.stderr).toMatch(/^hint: .*ugs get --id/m);
  });

  it('connection refused: nothing reached a server, so exit 4 (not 5)', async () => {
    const sb = makeSandbox();
    const port = await closedPort();
    writeProfiles(sb, { default: { baseUrl: `http://127.0.0.1:${port}`, apiToken: API_TOKEN } });
    const result = await runCli(sb, ['rotate', '--current-token', 'ugt_x1234567', '--yes']);
    expect(result.code, describeRun(result)).toBe(4);
    expect(errorLines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/^hint: /m);
  });

  it('a 2xx answer that cannot be read: the rotation may have happened (exit 5)', async () => {
    const { sb, stub, oldToken } = await setup();
    stub.fault = { kind: 'raw', status: 200, contentType: 'text/plain', text: 'ok' };
    const result = await runCli(sb, ['rotate', '--current-token', oldToken, '--yes']);
    expect(result.code, describeRun(result)).toBe(5);
    expect(stub.requests).toHaveLength(1);
    expect(result.stderr).toMatch(/^hint: .*ugs get --id/m);
  });
});
