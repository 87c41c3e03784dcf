/** One failure (at least) per documented exit code, through main(), in-process. */
import { describe, expect, it } from 'vitest';
import {
  closedPort,
  describeRun,
  destroy,
  expectFailure,
  json as jsonReply,
  makeSandbox,
  type RunResult,
  runMain,
  STACK_LINE,
  serviceForTest,
  stall,
  startEmulator,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-exit-codes-3456mnop';

/** Every failure: one `error:` line first, at most a hint, no stack trace, no API token. */
function expectCleanFailure(result: RunResult): void {
  expectFailure(result, result.code ?? -1, { stdout: 'any' });
  expect(result.stderr + result.stdout).not.toContain(API_TOKEN);
}

describe('exit codes (main in-process)', () => {
  it('1: the service answers success 0; stderr has its message, --json also prints the body', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
    const failure = { success: 0, error: 'user group quota exceeded' };
    service.failAlways(jsonReply(200, failure));
    const [table, json] = await Promise.all([
      runMain(['get', '--id', 'acme', '--name', 'Acme'], { sandbox: sb }),
      runMain(['get', '--id', 'acme', '--name', 'Acme', '--json'], { sandbox: sb }),
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
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
    service.failAlways(jsonReply(422, { detail: 'name is too long' }));
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toMatch(/^error: .*422.*name is too long/m);
    expectCleanFailure(result);
    expect(service.requests).toHaveLength(1);
  });

  it('2: unknown flag, unknown command, missing --id/--name, bad JSON, insecure URL', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
    const [unknownFlag, unknownCommand, missingId, missingName, array, insecure, badTimeout] =
      await Promise.all([
        runMain(['get', '--id', 'a', '--name', 'A', '--bogus'], { sandbox: sb }),
        runMain(['frobnicate'], { sandbox: sb }),
        runMain(['get', '--name', 'A'], { sandbox: sb }),
        runMain(['get', '--id', 'a'], { sandbox: sb }),
        runMain(['get', '--id', 'a', '--name', 'A', '--properties', '[1]'], { sandbox: sb }),
        runMain(['get', '--id', 'a', '--name', 'A', '--base-url', 'http://example.com'], {
          sandbox: sb,
        }),
        runMain(['get', '--id', 'a', '--name', 'A', '--timeout', 'soon'], { sandbox: sb }),
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
    expect(service.requests).toHaveLength(0);
  });

  it('2: a missing flag fails at once even though stdin is open, never waiting on it', async () => {
    const sb = makeSandbox();
    writeConfig(sb, {
      profiles: { default: { baseUrl: 'https://ugs.example.com', apiToken: API_TOKEN } },
    });
    const result = await runMain(['get', '--id', 'a'], { sandbox: sb, timeoutMs: 5_000 });
    expect(result.code, describeRun(result)).toBe(2);
  });

  it('3: no API token (fresh config dir), and the service answering 401', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const fresh = makeSandbox();
    const wrong = makeSandbox();
    writeConfig(wrong, {
      profiles: { default: { baseUrl: service.url, apiToken: 'wrong-token-0000qrst' } },
    });
    const [noToken, unauthorized, rotateDenied] = await Promise.all([
      runMain(['get', '--id', 'a', '--name', 'A', '--base-url', service.url], { sandbox: fresh }),
      runMain(['get', '--id', 'a', '--name', 'A'], { sandbox: wrong }),
      runMain(['rotate', '--current-token', 'ugt_12345678', '--yes', '--json'], { sandbox: wrong }),
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
    const refusal = service.answers.find((answer) => answer.status === 401)?.body;
    expect(refusal).toMatchObject({ detail: 'Invalid token.' });
    expect(JSON.parse(rotateDenied.stdout)).toEqual(refusal);

    // Only the two requests that had a token reached the service; 401 is not retried.
    expect(service.requests).toHaveLength(2);
  });

  it('3: the service answering 403', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
    service.failAlways(jsonReply(403, { detail: 'Not allowed.' }));
    const result = await runMain(['get', '--id', 'a', '--name', 'A'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(3);
    expect(result.stderr).toMatch(/^error: .*403.*Not allowed/m);
    expectCleanFailure(result);
  });

  it("3: a read-only API token's 403 on get, rotate and update says so, with a read-write hint", async () => {
    const readOnly = 'ro-key-exit-codes-9a8b';
    const readWrite = 'rw-key-exit-codes-7c6d';
    const emulator = await startEmulator({
      dialect: 'customer',
      apiTokens: [
        { token: readWrite, environment: 'Customer' },
        { token: readOnly, environment: 'Customer', readOnly: true },
      ],
    });
    try {
      const sb = makeSandbox();
      const profile = { baseUrl: emulator.url, dialect: 'customer' };
      writeConfig(sb, { profiles: { default: { ...profile, apiToken: readWrite } } });
      const made = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--field', 'token'], {
        sandbox: sb,
      });
      expect(made.code, describeRun(made)).toBe(0);
      writeConfig(sb, { profiles: { default: { ...profile, apiToken: readOnly } } });
      const runs = [
        await runMain(['get', '--id', 'acme', '--name', 'Acme'], { sandbox: sb }),
        await runMain(['rotate', '--current-token', made.stdout.trim(), '--yes'], { sandbox: sb }),
        await runMain(['update', '--id', 'acme', '--name', 'Acme Corp'], { sandbox: sb }),
      ];
      for (const result of runs) {
        const { error, hint } = expectFailure(result, 3);
        expect(error).toBe(
          'the API token is read-only (or lacks permission) for this call, which changes data: the service refused it (HTTP 403: You do not have permission to perform this action.)',
        );
        expect(hint).toMatch(/^use a read-write API token: run `ugs login`/);
        expect(result.stderr).not.toContain(readOnly);
      }
      // What only reads is answered as for any token.
      const shown = await runMain(['show', '--id', 'acme', '--field', 'name'], { sandbox: sb });
      expect(shown.code, describeRun(shown)).toBe(0);
      expect(shown.stdout).toBe('Acme\n');
    } finally {
      await emulator.close();
    }
  });

  it('3: a 403 with the permission detail on a call that only reads keeps the general words', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, {
      profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN, dialect: 'customer' } },
    });
    service.failAlways(
      jsonReply(403, { detail: 'You do not have permission to perform this action.' }),
    );
    const result = await runMain(['show', '--id', 'acme'], { sandbox: sb });
    const { error } = expectFailure(result, 3);
    expect(error).toBe(
      'the API token may not do this (HTTP 403: You do not have permission to perform this action.)',
    );
  });

  it('4: connection refused: one error line, a hint, no stack trace', async () => {
    const sb = makeSandbox();
    const port = await closedPort();
    writeConfig(sb, {
      profiles: { default: { baseUrl: `http://127.0.0.1:${port}`, apiToken: API_TOKEN } },
    });
    const [plain, debug] = await Promise.all([
      runMain(['get', '--id', 'a', '--name', 'A'], { sandbox: sb }),
      runMain(['get', '--id', 'a', '--name', 'A', '--debug'], { sandbox: sb }),
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
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
    service.failAlways(destroy());
    const result = await runMain(['get', '--id', 'a', '--name', 'A'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(4);
    expectCleanFailure(result);
    // Get User is get-or-create by id: it is retried up to 2 times.
    expect(service.requests).toHaveLength(3);
  });

  it('4: a GET with no answer within --timeout', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
    service.failAlways(stall());
    const result = await runMain(['get', '--id', 'a', '--name', 'A', '--timeout', '0.5'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(4);
    expect(result.stderr).toMatch(/^error: .*0\.5 s/m);
    expect(result.stderr).toMatch(/^hint: .*--timeout/m);
    expectCleanFailure(result);
  });

  it('5: rotate whose socket is destroyed after the request was read', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
    const group = await service.seed('acme', 'Acme');
    service.failAlways(destroy());
    const result = await runMain(['rotate', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      stdin: group.token,
    });
    expect(result.code, describeRun(result)).toBe(5);
    expect(result.stderr).toMatch(/may or may not/);
    expect(result.stderr).toMatch(/^hint: .*ugs get --id/m);
    expectCleanFailure(result);
    expect(service.requests).toHaveLength(1);
  });

  // 130 (Ctrl+C at a prompt) needs a terminal: test/e2e/interactive.process.test.ts drives it on a pty.
});
