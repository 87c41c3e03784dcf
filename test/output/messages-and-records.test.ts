/**
 * Small promises of messages and records: a profile name (argv, UGS_PROFILE, a config file) is
 * escaped in every message that names it; bulk records keep the service's values as sent (a
 * string `team_id` stays a string); counts of one row read "1 row".
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BulkOptions, runBulk } from '../../src/bulk/run.js';
import { ApiError } from '../../src/errors.js';
import { main } from '../../src/main.js';
import type { GetUserRequest } from '../../src/operations/get-user/operation.js';
import { bulkSpecs } from '../kit/bulk.js';
import { FakeService, groupResult, makeDeps, makeIO } from '../kit/fakes.js';
import { json, startServer, type TestServer, tempDir } from '../kit/index.js';

const SYSTEM = {
  platform: 'linux' as const,
  homedir: '/nonexistent',
  nodeVersion: 'v20.0.0',
  uid: process.getuid?.(),
  waitForShutdown: () => new Promise<string>(() => {}),
};

/** Any C0 control but the newline that ends a line, DEL, or C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

const HOSTILE_PROFILE = 'work\u001b]0;pwned\u0007\u009b2J';

let server: TestServer;
beforeAll(async () => {
  server = await startServer(json(401, { detail: 'Invalid token.' }));
});
afterAll(async () => {
  await server.close();
});

async function run(argv: string[], env: Record<string, string>, stdinText?: string) {
  const configDir = join(tempDir('config'), 'ugs');
  const io = makeIO({
    env: { UGS_CONFIG_DIR: configDir, ...env },
    ...(stdinText !== undefined && { stdinText }),
  });
  const code = await main(argv, io, SYSTEM);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text, configDir };
}

describe('profile names are escaped in every message', () => {
  const cases: [string, string[], Record<string, string>][] = [
    ['no base URL (get)', ['get', '--id', 'a', '--name', 'A'], {}],
    [
      'no API token (get)',
      ['get', '--id', 'a', '--name', 'A', '--base-url', 'http://127.0.0.1:9'],
      {},
    ],
    ['no API token (status)', ['status'], {}],
    [
      'UGS_API_TOKEN refused by the service',
      ['get', '--id', 'a', '--name', 'A'],
      { UGS_API_TOKEN: 'api-token-0123456789' },
    ],
  ];
  for (const [label, argv, env] of cases) {
    for (const via of ['--profile', 'UGS_PROFILE'] as const) {
      it(`${label}, profile from ${via}`, async () => {
        const fullEnv = { UGS_BASE_URL: server.url, ...env };
        if (label.startsWith('no base URL'))
          delete (fullEnv as Record<string, string>).UGS_BASE_URL;
        const result =
          via === '--profile'
            ? await run(['--profile', HOSTILE_PROFILE, ...argv], fullEnv)
            : await run(argv, { ...fullEnv, UGS_PROFILE: HOSTILE_PROFILE });
        const context = JSON.stringify(result);
        expect(result.code, context).not.toBe(0);
        expect(result.stderr, context).toContain('work\\u001b]0;pwned\\u0007\\u009b2J');
        expect(result.stderr, context).not.toMatch(RAW_CONTROL);
      });
    }
  }

  it('login: the refusal of a profile name that would not paste names it escaped', async () => {
    // The login's check of the token: 400 to `{}` means the token was accepted.
    const ok = await startServer(json(400, { user_group_id: ['This field is required.'] }));
    try {
      const result = await run(
        ['login', '--profile', HOSTILE_PROFILE, '--base-url', ok.url, '--with-token'],
        {},
        'api-token-0123456789\n',
      );
      const context = JSON.stringify(result);
      expect(result.code, context).toBe(2);
      expect(result.stderr, context).toMatch(/profile name "work\\u001b/);
      expect(result.stderr, context).not.toMatch(RAW_CONTROL);
    } finally {
      await ok.close();
    }
  });
});

function rowsFile(ids: string[]): string {
  const path = join(tempDir('rows'), 'rows.ndjson');
  writeFileSync(
    path,
    ids.map((id) => `${JSON.stringify({ user_group_id: id, name: id.toUpperCase() })}\n`).join(''),
  );
  return path;
}

function getOptions(from: string, output?: string, resume = false): BulkOptions {
  return {
    spec: bulkSpecs.get,
    from,
    format: 'ndjson',
    concurrency: 1,
    output,
    resume,
    yes: false,
  };
}

function echo(extra: Record<string, unknown> = {}) {
  return new FakeService({
    get: (request: GetUserRequest) =>
      groupResult(
        { provided_id: request.user_group_id, name: request.name, ...extra },
        { new_user_group: true },
      ),
  });
}

describe('bulk records keep the service values as sent', () => {
  it('a string team_id stays a string, on stdout and in a CSV file', async () => {
    const deps = makeDeps({ service: echo({ team_id: 'T-42' }) });
    await runBulk(getOptions(rowsFile(['a'])), deps);
    expect(JSON.parse(deps.io.stdout.text)).toMatchObject({ team_id: 'T-42' });

    const csv = join(tempDir('out'), 'out.csv');
    await runBulk(
      getOptions(rowsFile(['a']), csv),
      makeDeps({ service: echo({ team_id: 'T-42' }) }),
    );
    expect(readFileSync(csv, 'utf8')).toMatch(/^1,a,A,created,ug-token-aaaaaaaaaaaa,T-42,/m);
  });

  it('and a file with such records can be resumed', async () => {
    const output = join(tempDir('out'), 'out.ndjson');
    await runBulk(
      getOptions(rowsFile(['a']), output),
      makeDeps({ service: echo({ team_id: 'T-1' }) }),
    );
    const service = echo();
    const deps = makeDeps({ service });
    await runBulk(getOptions(rowsFile(['a', 'b']), output, true), deps);
    expect(service.gets.map((g) => g.user_group_id)).toEqual(['b']);
    // One row: "1 row", never "1 rows".
    expect(deps.io.stderr.text).toContain('--resume: 1 row is done already and is not sent again');
  });
});

describe('"1 row"', () => {
  it('a run of one row that failed', async () => {
    const deps = makeDeps({
      service: new FakeService({
        get: () => {
          throw new ApiError('HTTP 400: refused', { status: 400 });
        },
      }),
    });
    const error = await runBulk(getOptions(rowsFile(['a'])), deps).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as Error).message).toBe('1 of 1 row failed');
    expect(`${deps.io.stderr.text}${(error as Error).message}`).not.toMatch(/\b1 rows\b/);
  });
});
