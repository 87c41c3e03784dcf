/**
 * Where secrets end up. Every command runs with `--debug` against a stub that serves
 * recognisable user group tokens; then stdout, stderr and every file under the sandbox (config
 * dir and HOME) are searched. The API token may live only in config.json; a user group token may
 * appear only on stdout of the command whose result it is (get shows the group's token, rotate
 * the new one), never on stderr, where the debug trace shows only its fingerprint (`…` and the last 4 characters).
 * In-process (`runMain`): what is printed and written does not depend on being a process; the
 * binary with --debug stays in the e2e story.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  describeRun,
  expectFailure,
  makeSandbox,
  type RunResult,
  runMain,
  sendJson,
  startServer,
  userGroup,
} from '../kit/index.js';

const API_TOKEN = 'APITOKEN-7c1e0f5a-secret-api-credential';
const GET_TOKEN = 'UGTOKEN-GET-4b9d2e71a0c3';
const OLD_TOKEN = 'UGTOKEN-OLD-91f3c07d5e2b';
const NEW_TOKEN = 'UGTOKEN-NEW-d28a6b40f1e9';
const SECRETS = { API_TOKEN, GET_TOKEN, OLD_TOKEN, NEW_TOKEN } as const;
type Secret = keyof typeof SECRETS;

/** Every regular file under `dir`, with its text. */
function filesUnder(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (current: string) => {
    let entries: string[];
    try {
      entries = readdirSync(current);
    } catch {
      return;
    }
    for (const name of entries) {
      const path = join(current, name);
      const info = statSync(path);
      if (info.isDirectory()) walk(path);
      else if (info.isFile()) found.set(path, readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return found;
}

interface Step {
  name: string;
  args: string[];
  stdin?: string;
  /** Secrets allowed on this step's stdout (its result). */
  stdoutMay: Secret[];
  /** Must appear on stdout: proves the step did produce its result. */
  stdoutMust: Secret[];
  /** The step makes HTTP requests: its stderr must carry a redacted trace. */
  traced: boolean;
}

describe('secrets in output and on disk', () => {
  test('every command with --debug: API token only in config.json, group tokens only as results', async () => {
    const server = await startServer(({ req, res, request: record }) => {
      if (req.headers.authorization !== `Token ${API_TOKEN}`) {
        sendJson(res, 401, { success: 0, error: 'Invalid token.' });
      } else if (req.method === 'GET' && record.body === '{}') {
        // The login's check of the token (doctor's probe): fields missing, token accepted.
        sendJson(res, 400, { user_group_id: ['This field is required.'] });
      } else if (req.method === 'GET') {
        sendJson(res, 200, {
          success: 1,
          new_user_group: false,
          user_group: userGroup({
            token: GET_TOKEN,
            provided_id: 'acme',
            properties: { plan: 'pro' },
          }),
        });
      } else if (JSON.parse(record.body).current_token === OLD_TOKEN) {
        sendJson(res, 200, {
          success: 1,
          user_group: userGroup({ token: NEW_TOKEN, environment: 'Customer' }),
        });
      } else {
        sendJson(res, 404, { success: 0, error: 'no user group has that token' });
      }
    });
    const sandbox = makeSandbox();
    const steps: Step[] = [
      {
        name: 'login --with-token',
        args: ['login', '--with-token', '--base-url', server.url],
        stdin: `${API_TOKEN}\n`,
        stdoutMay: [],
        stdoutMust: [],
        // Its one request (the token check) answers no group token to see fingerprinted; the
        // leak checks still read its trace.
        traced: false,
      },
      { name: 'status', args: ['status'], stdoutMay: [], stdoutMust: [], traced: false },
      {
        name: 'status --json',
        args: ['status', '--json'],
        stdoutMay: [],
        stdoutMust: [],
        traced: false,
      },
      {
        name: 'get',
        args: ['get', '--id', 'acme', '--name', 'Acme Corp', '--property', 'plan=pro'],
        stdoutMay: ['GET_TOKEN'],
        stdoutMust: ['GET_TOKEN'],
        traced: true,
      },
      {
        name: 'get --json',
        args: ['get', '--id', 'acme', '--name', 'Acme Corp', '--json'],
        stdoutMay: ['GET_TOKEN'],
        stdoutMust: ['GET_TOKEN'],
        traced: true,
      },
      {
        name: 'get --field token',
        args: ['get', '--id', 'acme', '--name', 'Acme Corp', '--field', 'token'],
        stdoutMay: ['GET_TOKEN'],
        stdoutMust: ['GET_TOKEN'],
        traced: true,
      },
      {
        name: 'rotate --yes --current-token-stdin',
        args: ['rotate', '--yes', '--current-token-stdin'],
        stdin: `${OLD_TOKEN}\n`,
        stdoutMay: ['NEW_TOKEN'],
        stdoutMust: ['NEW_TOKEN'],
        traced: true,
      },
      {
        name: 'rotate --yes --current-token-stdin --json',
        args: ['rotate', '--yes', '--current-token-stdin', '--json'],
        stdin: `${OLD_TOKEN}\n`,
        stdoutMay: ['NEW_TOKEN'],
        stdoutMust: ['NEW_TOKEN'],
        traced: true,
      },
      { name: 'logout', args: ['logout'], stdoutMay: [], stdoutMust: [], traced: false },
    ];
    const leaks: string[] = [];
    try {
      for (const step of steps) {
        const result = await runMain([...step.args, '--debug'], {
          sandbox,
          stdin: step.stdin ?? '',
        });
        expect(result.code, describeRun(result)).toBe(0);
        for (const [secretName, secret] of Object.entries(SECRETS) as [Secret, string][]) {
          if (result.stderr.includes(secret)) leaks.push(`${step.name}: ${secretName} on stderr`);
          const allowed = step.stdoutMay.includes(secretName);
          if (!allowed && result.stdout.includes(secret)) {
            leaks.push(`${step.name}: ${secretName} on stdout`);
          }
          if (step.stdoutMust.includes(secretName)) {
            expect(result.stdout, describeRun(result)).toContain(secret);
          }
        }
        if (step.traced) {
          // The trace is really there, tokens as fingerprints: otherwise this test proves nothing.
          expect(result.stderr, describeRun(result)).toMatch(/^\[debug\] > (GET|POST) /m);
          expect(result.stderr).toMatch(/^\[debug\] > authorization: Token …\S{4}$/m);
          expect(result.stderr).toMatch(/^\[debug\] < .*"token":"…[^"]{4}"/m);
        }
        // Files: the API token only in config.json (until logout removes it), nothing else
        // anywhere in the sandbox (config dir, HOME, stray temp or lock files).
        for (const [path, text] of filesUnder(sandbox.root)) {
          const where = relative(sandbox.root, path);
          for (const [secretName, secret] of Object.entries(SECRETS) as [Secret, string][]) {
            if (!text.includes(secret)) continue;
            if (secretName === 'API_TOKEN' && path === sandbox.configPath) continue;
            leaks.push(`${step.name}: ${secretName} in file ${where}`);
          }
        }
        if (step.name === 'login --with-token') {
          expect(readFileSync(sandbox.configPath, 'utf8')).toContain(API_TOKEN);
        }
      }
      // After logout the token is gone from disk too.
      expect(readFileSync(sandbox.configPath, 'utf8')).not.toContain(API_TOKEN);
      expect(leaks).toEqual([]);
      // The first GET is the login's check of the token.
      expect(server.requests.map((r) => r.method)).toEqual([
        'GET',
        'GET',
        'GET',
        'GET',
        'POST',
        'POST',
      ]);
    } finally {
      await server.close();
    }
  });

  test('UGS_API_TOKEN from the environment never reaches output or disk', async () => {
    const server = await startServer(({ res }) =>
      sendJson(res, 200, {
        success: 1,
        user_group: userGroup({ token: GET_TOKEN, provided_id: 'a' }),
      }),
    );
    const sandbox = makeSandbox();
    try {
      const env = { UGS_API_TOKEN: API_TOKEN };
      const results = await Promise.all([
        runMain(['get', '--id', 'a', '--name', 'A', '--base-url', server.url, '--debug'], {
          sandbox,
          env,
        }),
        runMain(['status', '--json', '--base-url', server.url, '--debug'], { sandbox, env }),
      ]);
      for (const result of results) {
        expect(result.code, describeRun(result)).toBe(0);
        expect(result.stdout + result.stderr).not.toContain(API_TOKEN);
      }
      expect(JSON.parse(results[1]?.stdout ?? '{}').tokenSource).toBe('env UGS_API_TOKEN');
      for (const text of filesUnder(sandbox.root).values()) expect(text).not.toContain(API_TOKEN);
    } finally {
      await server.close();
    }
  });

  describe('a server that echoes a secret back in its error message', () => {
    async function echoRun(
      status: number,
      message: (record: { body: string; auth: string }) => string,
      args: string[],
      stdin: string,
      debug: boolean,
    ): Promise<RunResult> {
      const server = await startServer(({ req, res, request: record }) =>
        sendJson(res, status, {
          success: 0,
          error: message({ body: record.body, auth: String(req.headers.authorization) }),
        }),
      );
      try {
        return await runMain([...args, '--base-url', server.url, ...(debug ? ['--debug'] : [])], {
          env: { UGS_API_TOKEN: API_TOKEN },
          stdin,
        });
      } finally {
        await server.close();
      }
    }

    for (const debug of [false, true]) {
      test.concurrent(`401 quoting the Authorization header${debug ? ' (--debug)' : ''}`, async () => {
        const result = await echoRun(
          401,
          ({ auth }) => `invalid credentials: ${auth}`,
          ['get', '--id', 'a', '--name', 'A'],
          '',
          debug,
        );
        if (!debug) expectFailure(result, 3);
        expect(result.code).toBe(3);
        expect(result.stdout + result.stderr, describeRun(result)).not.toContain(API_TOKEN);
      });

      test.concurrent(`404 quoting the current token${debug ? ' (--debug)' : ''}`, async () => {
        const result = await echoRun(
          404,
          ({ body }) => `no user group has token ${JSON.parse(body).current_token}`,
          ['rotate', '--yes', '--current-token-stdin'],
          OLD_TOKEN,
          debug,
        );
        if (!debug) expectFailure(result, 1);
        expect(result.code).toBe(1);
        expect(result.stderr, describeRun(result)).not.toContain(OLD_TOKEN);
      });
    }
  });
});
