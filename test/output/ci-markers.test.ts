/**
 * CI workflow-command injection: Azure Pipelines obeys `##vso[` anywhere in a line of stdout or
 * stderr, GitHub Actions `::cmd::` at the start of a line (after white space) and the older
 * `##[` anywhere. Under either runner (`TF_BUILD`, `GITHUB_ACTIONS`), text from a server, a file
 * or argv never reaches a line with one of those markers, in any output mode; ugs's own mask and
 * annotation commands still work, and `--json` still parses to the server's values.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shellWord } from '../../src/input/parse.js';
import { main } from '../../src/main.js';
import {
  escapeCiMarkers,
  guardCiOutput,
  hasCiMarker,
  writeCiCommand,
} from '../../src/output/ci.js';
import { Capture, makeIO } from '../kit/fakes.js';
import { json, runShell, startServer, type TestServer, tempDir } from '../kit/index.js';
import {
  AZURE,
  EVIL_ID,
  EVIL_NAME,
  expectNoInjection,
  GITHUB_LINE,
  GITHUB_OLD,
  hostileAnswer,
  offendingLines,
  RUNNERS,
  sent,
} from './ci-markers-fixture.js';

const SYSTEM = {
  platform: 'linux' as const,
  homedir: '/nonexistent',
  nodeVersion: 'v20.0.0',
  uid: process.getuid?.(),
  waitForShutdown: () => new Promise<string>(() => {}),
};

let server: TestServer;

beforeAll(async () => {
  server = await startServer(hostileAnswer);
});
afterAll(async () => {
  await server.close();
});

async function run(argv: string[], env: Record<string, string>, stdinText?: string) {
  const io = makeIO({
    env: {
      UGS_CONFIG_DIR: join(tempDir('config'), 'ugs'),
      UGS_BASE_URL: server.url,
      UGS_API_TOKEN: 'api-token-0123456789',
      ...env,
    },
    ...(stdinText !== undefined && { stdinText }),
  });
  const code = await main(argv, io, SYSTEM);
  const result = { code, stdout: io.stdout.text, stderr: io.stderr.text };
  return { ...result, context: JSON.stringify(result, null, 2) };
}

function csvFile(lines: string[]): string {
  const path = join(tempDir('input'), 'rows.csv');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

for (const [runner, env] of Object.entries(RUNNERS)) {
  describe(`${runner}: no marker from outside in any output line`, () => {
    it('get: the table (a server key at the start of a line too)', async () => {
      const result = await run(['get', '--id', EVIL_ID, '--name', EVIL_NAME], env);
      expect(result.code, result.context).toBe(0);
      expectNoInjection(result, result.context);
      // Shown escaped, not dropped: ugs's \u style, as for control characters.
      expect(result.stdout, result.context).toContain('Acme \\u0023#vso[task.prependpath]');
      expect(result.stdout, result.context).toMatch(/^\\u003a:set-env/m);
    });

    it('get --json: valid JSON with exactly the values the server sent', async () => {
      sent.length = 0;
      const result = await run(['get', '--id', EVIL_ID, '--name', EVIL_NAME, '--json'], env);
      expect(result.code, result.context).toBe(0);
      expectNoInjection(result, result.context);
      expect(JSON.parse(result.stdout)).toEqual(sent[0]);
    });

    it('get --field of a value with a marker: exit 1, nothing on stdout, --json suggested', async () => {
      for (const field of ['name', 'provided_id', 'api_environment_tag']) {
        const result = await run(
          ['get', '--id', EVIL_ID, '--name', EVIL_NAME, '--field', field],
          env,
        );
        expect(result.code, result.context).toBe(1);
        expect(result.stdout, result.context).toBe('');
        expect(result.stderr, result.context).toMatch(/--json/);
        expectNoInjection(result, result.context);
      }
    });

    it('get --field of a value that starts with :: is refused too', async () => {
      const result = await run(
        ['get', '--id', 'acme', '--name', GITHUB_LINE, '--field', 'name'],
        env,
      );
      expect(result.code, result.context).toBe(1);
      expect(result.stdout, result.context).toBe('');
      expectNoInjection(result, result.context);
    });

    it('get --field of a clean value is printed as it is', async () => {
      const result = await run(
        ['get', '--id', EVIL_ID, '--name', EVIL_NAME, '--field', 'token'],
        env,
      );
      expect(result.code, result.context).toBe(0);
      expect(result.stdout, result.context).toMatch(/^tok-\d+-0123456789abcdef\n$/);
      expectNoInjection(result, result.context);
    });

    it('rotate --field of a value with a marker: exit 5 and a recovery command that pastes', async () => {
      const result = await run(
        ['rotate', '--current-token-stdin', '--yes', '--field', 'name'],
        env,
        'old-token-0123456789',
      );
      expect(result.code, result.context).toBe(5);
      expect(result.stdout, result.context).toBe('');
      expectNoInjection(result, result.context);
      const hint = /^hint: read it with `(.*)`$/m.exec(result.stderr)?.[1];
      // The id and name as the shell reads them, with no marker in the text: `#''#[`.
      expect(hint, result.context).toBe(
        `ugs get --id 'acme-#''#[set-env name=PATH;]/tmp/evil' --name 'Acme #''#vso[task.prependpath]/tmp/evil #''#[set-env name=PATH;]/tmp/evil' --must-exist --json`,
      );
      const words = await runShell(`printf '%s\\n' ${hint?.replace(/^ugs get /, '')}`);
      expect(words.stdout.split('\n').slice(0, 4)).toEqual(['--id', EVIL_ID, '--name', EVIL_NAME]);
    });

    it('rotate: table and --json', async () => {
      for (const extra of [[], ['--json']]) {
        sent.length = 0;
        const result = await run(
          ['rotate', '--current-token-stdin', '--yes', ...extra],
          env,
          'old-token-0123456789',
        );
        expect(result.code, result.context).toBe(0);
        expectNoInjection(result, result.context);
        if (extra.length > 0) expect(JSON.parse(result.stdout)).toEqual(sent[0]);
      }
    });

    it('bulk get: NDJSON records on stdout parse to the values sent, and nothing injects', async () => {
      const from = csvFile([
        'user_group_id,name',
        `"${EVIL_ID}","${EVIL_NAME}"`,
        `b,"${GITHUB_LINE}"`,
        `c,"x ${AZURE}"`,
      ]);
      const result = await run(['get', '--from', from], env);
      expect(result.code, result.context).toBe(0);
      expectNoInjection(result, result.context);
      const records = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(records.map((r) => [r.user_group_id, r.name])).toEqual([
        [EVIL_ID, EVIL_NAME],
        ['b', GITHUB_LINE],
        ['c', `x ${AZURE}`],
      ]);
    });

    it('bulk rotate with --output: messages and progress on stderr', async () => {
      const from = csvFile(['current_token', 'old-token-aaaaaaaaaaaa', 'old-token-bbbbbbbbbbbb']);
      const output = join(tempDir('out'), 'rotated.ndjson');
      const result = await run(['rotate', '--from', from, '--output', output, '--yes'], env);
      expect(result.code, result.context).toBe(0);
      expectNoInjection(result, result.context);
    });

    it('validation errors quoting a file and argv', async () => {
      const duplicates = csvFile(['user_group_id,name', `"${EVIL_ID}",A`, `"${EVIL_ID}",B`]);
      const fromFile = await run(['get', '--from', duplicates], env);
      expect(fromFile.code, fromFile.context).toBe(2);
      expect(fromFile.stderr, fromFile.context).toMatch(/also in row 1/);
      expectNoInjection(fromFile, fromFile.context);

      const fromArgv = await run(['get', '--id', 'a', '--name', 'b', `--${AZURE}`], env);
      expect(fromArgv.code, fromArgv.context).toBe(2);
      expectNoInjection(fromArgv, fromArgv.context);

      const badJson = await run(
        ['get', '--id', 'a', '--name', 'b', '--properties', `{${AZURE}`],
        env,
      );
      expect(badJson.code, badJson.context).toBe(2);
      expectNoInjection(badJson, badJson.context);
    });

    it("error messages from a server's body, with and without --json", async () => {
      for (const body of [
        { success: 0, detail: `refused: ${AZURE}` },
        { success: 0, name: [`${GITHUB_OLD} is taken`] },
      ]) {
        server.script(json(400, body));
        try {
          for (const extra of [[], ['--json']]) {
            const result = await run(['get', '--id', 'a', '--name', 'b', ...extra], env);
            expect(result.code, result.context).toBe(1);
            expect(result.stderr, result.context).toMatch(/^error: /m);
            expectNoInjection(result, result.context);
            if (extra.length > 0) expect(JSON.parse(result.stdout)).toEqual(body);
          }
        } finally {
          server.script(hostileAnswer);
        }
      }
    });

    it('--debug traces', async () => {
      const result = await run(['get', '--id', EVIL_ID, '--name', EVIL_NAME, '--debug'], env);
      expect(result.code, result.context).toBe(0);
      expect(result.stderr, result.context).toMatch(/^\[debug\] < HTTP 200/m);
      expectNoInjection(result, result.context);
    });

    it("ugs's own commands still work: the token's mask and the error annotation", async () => {
      const ok = await run(['get', '--id', 'a', '--name', 'b'], env);
      expect(ok.stderr, ok.context).toMatch(
        /^(::add-mask::|##vso\[task\.setsecret\])tok-\d+-0123456789abcdef$/m,
      );
      server.script(json(400, { success: 0, detail: `no ${AZURE}` }));
      try {
        const failed = await run(['get', '--id', 'a', '--name', 'b'], env);
        expect(failed.stderr, failed.context).toMatch(
          /^(::error title=ugs::|##vso\[task\.logissue type=error\]ugs: ).*no \\u0023#vso/m,
        );
      } finally {
        server.script(hostileAnswer);
      }
    });
  });
}

describe('outside a CI runner', () => {
  it('values are printed as they are', async () => {
    const result = await run(['get', '--id', 'acme', '--name', EVIL_NAME, '--field', 'name'], {});
    expect(result.code, result.context).toBe(0);
    expect(result.stdout).toBe(`${EVIL_NAME}\n`);
  });
});

describe('escapeCiMarkers', () => {
  it.each([
    ['##vso[x]', '\\u0023#vso[x]'],
    ['##VSO[x]', '\\u0023#VSO[x]'],
    ['a ##[x]', 'a \\u0023#[x]'],
    ['###[x]', '#\\u0023#[x]'],
    ['::x::y', '\\u003a:x::y'],
    [' \t\u00a0::x', ' \t\u00a0\\u003a:x'],
    ['a\n  ::x\r::y', 'a\n  \\u003a:x\r\\u003a:y'],
    ['a ::x', 'a ::x'],
    ['# vso[', '# vso['],
  ])('%j -> %j', (text, escaped) => {
    expect(escapeCiMarkers(text)).toBe(escaped);
    expect(hasCiMarker(text)).toBe(text !== escaped);
    expect(hasCiMarker(escaped)).toBe(false);
  });

  it('keeps JSON valid and equal', () => {
    const value = { a: `x ${AZURE} ${GITHUB_OLD}`, [GITHUB_LINE]: [GITHUB_LINE] };
    const text = escapeCiMarkers(JSON.stringify(value, null, 2));
    expect(hasCiMarker(text)).toBe(false);
    expect(JSON.parse(text)).toEqual(value);
  });

  it('shellWord splits a marker with an empty quote', () => {
    expect(shellWord('a ##vso[b]')).toBe("'a #''#vso[b]'");
    expect(hasCiMarker(shellWord(`${AZURE} ${GITHUB_OLD}`))).toBe(false);
  });
});

describe('the guard on an output stream', () => {
  it('finds a marker split across writes, and keeps write callbacks', async () => {
    const stream = new Capture();
    guardCiOutput(stream);
    for (const piece of ['a #', '#', 'v', 'so[x] ', ':', ':y\n', ' ', ':', ':z\n']) {
      stream.write(piece);
    }
    stream.write(Buffer.from('##[b]\n'));
    await new Promise<void>((resolve) => stream.write('', () => resolve()));
    expect(offendingLines(stream.text)).toEqual([]);
    // A `#` that ends a write may start a marker: it is escaped before the next write comes.
    expect(stream.text).toBe('a \\u0023\\u0023vso[x] ::y\n \\u003a:z\n\\u0023#[b]\n');
  });

  it("lets ugs's own commands through, each on a line of its own", () => {
    const stream = new Capture();
    guardCiOutput(stream);
    stream.write('partial line ##');
    writeCiCommand(stream, '::add-mask::secret');
    stream.write('::next\n');
    expect(stream.text.split('\n')).toEqual([
      'partial line \\u0023#',
      '::add-mask::secret',
      '\\u003a:next',
      '',
    ]);
  });
});
