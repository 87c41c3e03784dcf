/** One failure (at least) per documented exit code, through the built binary. */
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  errorLines,
  makeSandbox,
  type RunResult,
  runCli,
  STACK_LINE,
  setupCliSuite,
  writeProfiles,
} from './run.js';
import { closedPort, stubForTest } from './stub.js';

setupCliSuite();

const API_TOKEN = 'apitoken-exit-codes-3456mnop';

/** Every failure: one `error:` line first, no stack trace, no API token. */
function expectCleanFailure(result: RunResult): void {
  expect(errorLines(result.stderr), describeRun(result)).toHaveLength(1);
  expect(result.stderr, describeRun(result)).not.toMatch(STACK_LINE);
  expect(result.stderr + result.stdout).not.toContain(API_TOKEN);
}

describe('exit codes (built binary)', () => {
  it('1: the service answers success 0; stderr has its message, --json also prints the body', async () => {
    const stub = await stubForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeProfiles(sb, { default: { baseUrl: stub.url, apiToken: API_TOKEN } });
    const failure = { success: 0, error: 'user group quota exceeded' };
    stub.fault = { kind: 'json', body: failure };
    const [table, json] = await Promise.all([
      runCli(sb, ['get', '--id', 'acme', '--name', 'Acme']),
      runCli(sb, ['get', '--id', 'acme', '--name', 'Acme', '--json']),
    ]);
    expect(table.code, describeRun(table)).toBe(1);
    expect(table.stderr).toMatch(/^error: user group quota exceeded$/m);
    expect(table.stdout).toBe('');
    expectCleanFailure(table);

    expect(json.code, describeRun(json)).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual(failure);
    expect(json.stderr).toMatch(/^error: user group quota exceeded$/m);
    expectCleanFailure(json);
  });

  it('1: an HTTP error other than 401/403 uses the server message', async () => {
    const stub = await stubForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeProfiles(sb, { default: { baseUrl: stub.url, apiToken: API_TOKEN } });
    stub.fault = { kind: 'json', status: 422, body: { detail: 'name is too long' } };
    const result = await runCli(sb, ['get', '--id', 'acme', '--name', 'Acme']);
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toMatch(/^error: .*422.*name is too long/m);
    expectCleanFailure(result);
    expect(stub.requests).toHaveLength(1);
  });

  it('2: unknown flag, unknown command, missing --id/--name, bad JSON, insecure URL', async () => {
    const stub = await stubForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeProfiles(sb, { default: { baseUrl: stub.url, apiToken: API_TOKEN } });
    const [unknownFlag, unknownCommand, missingId, missingName, array, insecure, badTimeout] =
      await Promise.all([
        runCli(sb, ['get', '--id', 'a', '--name', 'A', '--bogus']),
        runCli(sb, ['frobnicate']),
        runCli(sb, ['get', '--name', 'A']),
        runCli(sb, ['get', '--id', 'a']),
        runCli(sb, ['get', '--id', 'a', '--name', 'A', '--properties', '[1]']),
        runCli(sb, ['get', '--id', 'a', '--name', 'A', '--base-url', 'http://example.com']),
        runCli(sb, ['get', '--id', 'a', '--name', 'A', '--timeout', 'soon']),
      ]);
    for (const result of [unknownFlag, unknownCommand]) {
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stderr).toMatch(/^error: /m);
      expect(result.stderr).not.toMatch(STACK_LINE);
    }
    expect(unknownFlag.stderr).toContain('--bogus');
    for (const result of [missingId, missingName, array, insecure, badTimeout]) {
      expect(result.code, describeRun(result)).toBe(2);
      expectCleanFailure(result);
    }
    expect(missingId.stderr).toMatch(/^error: .*--id/m);
    expect(missingName.stderr).toMatch(/^error: .*--name/m);
    expect(array.stderr).toMatch(/^error: .*--properties.*object/m);
    expect(insecure.stderr).toMatch(/^error: .*http.*example\.com/m);
    expect(insecure.stderr).toMatch(/^hint: .*https/m);
    expect(badTimeout.stderr).toMatch(/^error: .*--timeout/m);
    expect(stub.requests).toHaveLength(0);
  });

  it('2: a missing flag fails at once even though stdin is open, never waiting on it', async () => {
    const sb = makeSandbox();
    writeProfiles(sb, { default: { baseUrl: 'https://ugs.example.com', apiToken: API_TOKEN } });
    const result = await runCli(sb, ['get', '--id', 'a'], { timeoutMs: 5_000 });
    expect(result.code, describeRun(result)).toBe(2);
  });

  it('3: no API token (fresh config dir), and the service answering 401', async () => {
    const stub = await stubForTest([API_TOKEN]);
    const fresh = makeSandbox();
    const wrong = makeSandbox();
    writeProfiles(wrong, { default: { baseUrl: stub.url, apiToken: 'wrong-token-0000qrst' } });
    const [noToken, unauthorized, rotateDenied] = await Promise.all([
      runCli(fresh, ['get', '--id', 'a', '--name', 'A', '--base-url', stub.url]),
      runCli(wrong, ['get', '--id', 'a', '--name', 'A']),
      runCli(wrong, ['rotate', '--current-token', 'ugt_12345678', '--yes', '--json']),
    ]);
    expect(noToken.code, describeRun(noToken)).toBe(3);
    expect(noToken.stderr).toMatch(/^error: .*no API token/m);
    expect(noToken.stderr).toMatch(/^hint: .*ugs login/m);
    expectCleanFailure(noToken);

    expect(unauthorized.code, describeRun(unauthorized)).toBe(3);
    expect(unauthorized.stderr).toMatch(/^error: .*401.*Invalid token/m);
    expect(unauthorized.stderr).toMatch(/^hint: .*ugs login/m);
    expect(unauthorized.stderr + unauthorized.stdout).not.toContain('wrong-token-0000qrst');
    expectCleanFailure(unauthorized);

    expect(rotateDenied.code, describeRun(rotateDenied)).toBe(3);
    // --json: the service's JSON error body is also printed on stdout.
    expect(JSON.parse(rotateDenied.stdout)).toEqual({ detail: 'Invalid token.' });

    // Only the two requests that had a token reached the service; 401 is not retried.
    expect(stub.requests).toHaveLength(2);
  });

  it('3: the service answering 403', async () => {
    const stub = await stubForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeProfiles(sb, { default: { baseUrl: stub.url, apiToken: API_TOKEN } });
    stub.fault = { kind: 'json', status: 403, body: { detail: 'Not allowed.' } };
    const result = await runCli(sb, ['get', '--id', 'a', '--name', 'A']);
    expect(result.code, describeRun(result)).toBe(3);
    expect(result.stderr).toMatch(/^error: .*403.*Not allowed/m);
    expectCleanFailure(result);
  });

  it('4: connection refused: one error line, a hint, no stack trace', async () => {
    const sb = makeSandbox();
    const port = await closedPort();
    writeProfiles(sb, { default: { baseUrl: `http://127.0.0.1:${port}`, apiToken: API_TOKEN } });
    const [plain, debug] = await Promise.all([
      runCli(sb, ['get', '--id', 'a', '--name', 'A']),
      runCli(sb, ['get', '--id', 'a', '--name', 'A', '--debug']),
    ]);
    expect(plain.code, describeRun(plain)).toBe(4);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toMatch(/^error: .*refused/m);
    expect(plain.stderr).toMatch(/^hint: /m);
    expectCleanFailure(plain);
    // Only two kinds of line: the error and the hint.
    expect(plain.stderr.trim().split('\n')).toHaveLength(2);

    // With --debug the stack trace is shown, and the retries are visible.
    expect(debug.code, describeRun(debug)).toBe(4);
    expect(debug.stderr).toMatch(STACK_LINE);
    expect(debug.stderr).toMatch(/\[debug\] .*retry/i);
    expect(debug.stderr).not.toContain(API_TOKEN);
  });

  it('4: the connection is reset before any answer to a GET (retried, then exit 4)', async () => {
    const stub = await stubForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeProfiles(sb, { default: { baseUrl: stub.url, apiToken: API_TOKEN } });
    stub.fault = { kind: 'destroy' };
    const result = await runCli(sb, ['get', '--id', 'a', '--name', 'A']);
    expect(result.code, describeRun(result)).toBe(4);
    expectCleanFailure(result);
    // Get User is get-or-create by id: it is retried up to 2 times.
    expect(stub.requests).toHaveLength(3);
  });

  it('4: a GET with no answer within --timeout', async () => {
    const stub = await stubForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeProfiles(sb, { default: { baseUrl: stub.url, apiToken: API_TOKEN } });
    stub.fault = { kind: 'hang' };
    const result = await runCli(sb, ['get', '--id', 'a', '--name', 'A', '--timeout', '0.5']);
    expect(result.code, describeRun(result)).toBe(4);
    expect(result.stderr).toMatch(/^error: .*0\.5 s/m);
    expect(result.stderr).toMatch(/^hint: .*--timeout/m);
    expectCleanFailure(result);
  });

  it('5: rotate whose socket is destroyed after the request was read', async () => {
    const stub = await stubForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeProfiles(sb, { default: { baseUrl: stub.url, apiToken: API_TOKEN } });
    const group = stub.seedGroup('acme', 'Acme');
    stub.fault = { kind: 'destroy' };
    const result = await runCli(sb, ['rotate', '--current-token-stdin', '--yes'], {
      stdin: group.token,
    });
    expect(result.code, describeRun(result)).toBe(5);
    expect(result.stderr).toMatch(/may or may not/);
    expect(result.stderr).toMatch(/^hint: .*ugs get --id/m);
    expectCleanFailure(result);
    expect(stub.requests).toHaveLength(1);
  });

  // 130 (Ctrl+C at a prompt) needs a terminal; prompts never appear without one.
  it.skip('130: interrupted at a prompt (needs a TTY)', () => {});
});
