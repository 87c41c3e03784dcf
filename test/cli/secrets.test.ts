/** The API token and user group tokens never reach the terminal by accident, --debug included. */
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  destroy,
  json as jsonReply,
  makeSandbox,
  type RunResult,
  runMain,
  serviceForTest,
  text as textReply,
} from '../kit/index.js';

const API_TOKEN = 'APITOKEN-SECRET-7f3a9c';

describe('secrets (main in-process, --debug)', () => {
  it('login, get, rotate and status never print the API token, even with --debug', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    const runs: [string, RunResult][] = [];
    const run = async (args: string[], stdin?: string): Promise<RunResult> => {
      const result = await runMain(args, {
        sandbox: sb,
        ...(stdin === undefined ? {} : { stdin }),
      });
      runs.push([args.join(' '), result]);
      return result;
    };

    const login = await run(
      ['login', '--base-url', service.url, '--with-token', '--debug'],
      API_TOKEN,
    );
    expect(login.code, describeRun(login)).toBe(0);

    const get = await run(['get', '--id', 'acme', '--name', 'Acme Corp', '--debug']);
    expect(get.code, describeRun(get)).toBe(0);
    const groupToken = (await service.group('acme')).token ?? '';
    expect(groupToken).not.toBe('');

    // The request trace: method, URL, the Authorization header as a fingerprint.
    expect(get.stderr).toMatch(/^\[debug\] /m);
    expect(get.stderr).toContain(`[debug] > GET ${service.url}/api/user`);
    expect(get.stderr).toContain(`[debug] > authorization: Token …${API_TOKEN.slice(-4)}\n`);
    expect(get.stderr).toMatch(/^\[debug\] < HTTP 200/m);
    // The request body is traced; the response's token field is fingerprinted.
    expect(get.stderr).toContain('"user_group_id":"acme"');
    expect(get.stderr).not.toContain(groupToken);
    expect(get.stderr).toContain(`"token":"…${groupToken.slice(-4)}"`);
    // The table on stdout is the user's output and does show the group token.
    expect(get.stdout).toContain(groupToken);
    expect(get.stdout).not.toContain('[debug]');

    const getJson = await run(['get', '--id', 'acme', '--name', 'Acme Corp', '--json', '--debug']);
    expect(getJson.code, describeRun(getJson)).toBe(0);
    // stdout is only the JSON body, the trace stays on stderr.
    expect(JSON.parse(getJson.stdout)).toEqual(service.answers.at(-1)?.body);

    const rotate = await run(
      ['rotate', '--current-token-stdin', '--yes', '--json', '--debug'],
      groupToken,
    );
    expect(rotate.code, describeRun(rotate)).toBe(0);
    const newToken = (await service.group('acme')).token ?? '';
    expect(newToken).not.toBe(groupToken);
    expect(rotate.stderr).toContain(`[debug] > POST ${service.url}/api/user`);
    expect(rotate.stderr).toContain(`{"current_token":"…${groupToken.slice(-4)}"}`);
    expect(rotate.stderr).toContain(`"token":"…${newToken.slice(-4)}"`);
    // Neither the token being replaced nor the new one appears in the trace.
    expect(rotate.stderr).not.toContain(groupToken);
    expect(rotate.stderr).not.toContain(newToken);
    expect(JSON.parse(rotate.stdout).user_group.token).toBe(newToken);

    const status = await run(['status', '--debug']);
    expect(status.code, describeRun(status)).toBe(0);
    const statusJson = await run(['status', '--json', '--debug']);
    expect(statusJson.code, describeRun(statusJson)).toBe(0);

    // Failures with --debug (stack traces included) do not leak it either.
    service.failAlways(jsonReply(401, { detail: 'Invalid token.' }));
    const denied = await run(['get', '--id', 'acme', '--name', 'Acme Corp', '--debug']);
    expect(denied.code, describeRun(denied)).toBe(3);
    service.failAlways(destroy());
    const unknown = await run(['rotate', '--current-token', newToken, '--yes', '--debug']);
    expect(unknown.code, describeRun(unknown)).toBe(5);
    expect(unknown.stderr).not.toContain(newToken);

    for (const [command, result] of runs) {
      expect(result.stdout, `stdout of ugs ${command}`).not.toContain(API_TOKEN);
      expect(result.stderr, `stderr of ugs ${command}`).not.toContain(API_TOKEN);
      // Nor any recognisable part of it.
      expect(result.stdout + result.stderr, `output of ugs ${command}`).not.toContain(
        'SECRET-7f3a',
      );
    }
    // Every request carried it, so the redaction was really exercised.
    for (const request of service.requests) {
      expect(request.headers.authorization).toBe(`Token ${API_TOKEN}`);
    }
  });

  it('an API token from UGS_API_TOKEN is fingerprinted in --debug output too', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    // The service echoes the token in its error text: the trace must hide it.
    service.failAlways(
      jsonReply(400, { success: 0, error: `token ${API_TOKEN} is not allowed to create groups` }),
    );
    const result = await runMain(
      ['get', '--id', 'acme', '--name', 'Acme', '--base-url', service.url, '--debug'],
      { sandbox: sb, env: { UGS_API_TOKEN: API_TOKEN } },
    );
    expect(result.code, describeRun(result)).toBe(1);
    const trace = result.stderr.split('\n').filter((line) => line.startsWith('[debug]'));
    const fingerprint = `…${API_TOKEN.slice(-4)}`;
    expect(trace[3]).toBe(`[debug] * API token: ${fingerprint} (env UGS_API_TOKEN)`);
    expect(trace.join('\n')).toContain(`authorization: Token ${fingerprint}`);
    expect(trace.join('\n')).toContain(`"error":"token ${fingerprint} is not allowed`);
    expect(trace.join('\n')).not.toContain(API_TOKEN);
    expect(service.requests[0]?.headers.authorization).toBe(`Token ${API_TOKEN}`);
  });

  it('a --current-token value is redacted from --debug output', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    service.failAlways(textReply(500, 'oops', 'text/plain'));
    const current = 'ugt_current_0123456789';
    const result = await runMain(
      ['rotate', '--current-token', current, '--yes', '--base-url', service.url, '--debug'],
      { sandbox: sb, env: { UGS_API_TOKEN: API_TOKEN } },
    );
    expect(result.code, describeRun(result)).toBe(5); // rotate + 5xx: outcome unknown;
    expect(result.stderr).toContain('[debug] > POST');
    expect(result.stderr).not.toContain(current);
    expect(result.stderr).not.toContain(API_TOKEN);
  });
});
