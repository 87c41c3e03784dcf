/**
 * Output that fits: the default output at a terminal fits its width (long values wrap inside
 * their cell, or the table becomes `key: value` lines) and never splits a token; into a pipe it
 * is `key<TAB>value` lines; TERM=dumb and non-UTF-8 locales get ASCII borders. `-q` keeps notes
 * and warnings off stderr. Help fits 80 columns and lists the global options of every command;
 * unknown commands are usage errors with the suggestion on the hint line.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  describeRun,
  type EnvChanges,
  expectFailure,
  type InProcessEmulator,
  killAllPtys,
  makeSandbox,
  runMain,
  type Sandbox,
  startEmulator,
  startPty,
  stripAnsi,
} from '../kit/index.js';

const BOX = /[─│┌┐└┘┬┴]/;
const HEX64 = /[0-9a-f]{64}/;

let emulator: InProcessEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(async () => {
  await emulator.close();
});
afterEach(() => killAllPtys());

function serviceEnv(extra: EnvChanges = {}): EnvChanges {
  return {
    UGS_BASE_URL: emulator.url,
    UGS_API_TOKEN: emulator.tokenFor('Customer'),
    LANG: 'C.UTF-8',
    LC_ALL: undefined,
    LC_CTYPE: undefined,
    ...extra,
  };
}

/** Runs ugs on a pty of `columns` and returns the screen's lines (ANSI stripped) and exit. */
async function onTerminal(
  sandbox: Sandbox,
  args: readonly string[],
  columns: number,
  env: EnvChanges = {},
): Promise<{ lines: string[]; text: string; code: number | null }> {
  const session = startPty(sandbox, args, { columns, env: serviceEnv(env) });
  const exit = await session.finish();
  const text = session.text();
  return { lines: screenLines(session.raw), text, code: exit.code };
}

/**
 * The lines as the terminal shows them, from the raw output: a carriage return or a move to the
 * first column (`ESC [ G`, as the spinner goes back) returns to the line's start, so what a slow
 * request's spinner drew there and then erased is not part of the line.
 */
function screenLines(raw: string): string[] {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the cursor move is what it looks for
  return stripAnsi(raw.replace(/\u001b\[1?G/g, '\r'))
    .split(/\r?\n/)
    .map((line) => line.slice(line.lastIndexOf('\r') + 1))
    .filter((line) => line !== '');
}

/** The only 64-hex word on the screen, and the line it is on. */
function tokenLine(lines: readonly string[]): { token: string; line: string } {
  const found = lines.filter((line) => HEX64.test(line));
  expect(found, lines.join('\n')).toHaveLength(1);
  const line = found[0] as string;
  return { token: HEX64.exec(line)?.[0] as string, line };
}

describe('the default output at a terminal', () => {
  it('at 80 columns: every line fits, and the token is whole on one line', async () => {
    const sandbox = makeSandbox();
    const longValue = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    const { lines, text, code } = await onTerminal(
      sandbox,
      ['get', '--id', 'fit-80', '--name', 'Fit 80', '--property', `notes=${longValue}`],
      80,
    );
    expect(code, text).toBe(0);
    for (const line of lines) expect(line.length, `${line}\n${text}`).toBeLessThanOrEqual(80);
    const { token } = tokenLine(lines);
    // Every word of the long property is shown, none cut off.
    for (let i = 0; i < 30; i++) expect(text).toContain(`word${i}`);
    // The whole token, as a script reading the group would get it.
    const field = await runMain(['get', '--id', 'fit-80', '--name', 'Fit 80', '--field', 'token'], {
      sandbox,
      env: serviceEnv(),
    });
    expect(field.stdout.trim()).toBe(token);
  });

  it('at 80 columns the notes fit too: the note on an existing group is broken at spaces', async () => {
    const sandbox = makeSandbox();
    const args = ['get', '--id', 'fit-note', '--name', 'Fit note', '--property', 'plan=pro'];
    expect((await runMain(args, { sandbox, env: serviceEnv() })).code).toBe(0);
    const { lines, text, code } = await onTerminal(sandbox, args, 80);
    expect(code, text).toBe(0);
    expect(text).toMatch(/note: user group fit-note already existed/);
    for (const line of lines) expect(line.length, `${line}\n${text}`).toBeLessThanOrEqual(80);
    tokenLine(lines);
  });

  it('rotate at 80 columns (a wider key column): lines fit, the new token is whole', async () => {
    const sandbox = makeSandbox();
    const created = await runMain(['get', '--id', 'fit-rot', '--name', 'R', '--field', 'token'], {
      sandbox,
      env: serviceEnv(),
    });
    const session = startPty(
      sandbox,
      ['rotate', '--current-token', created.stdout.trim(), '--yes'],
      {
        columns: 80,
        env: serviceEnv(),
      },
    );
    const exit = await session.finish();
    const lines = screenLines(session.raw);
    expect(exit.code, session.text()).toBe(0);
    for (const line of lines) expect(line.length, session.text()).toBeLessThanOrEqual(80);
    const tokens = new Set(lines.flatMap((line) => line.match(new RegExp(HEX64, 'g')) ?? []));
    expect(tokens.size, session.text()).toBe(1);
  });

  it('at 120 columns: a box, a long value wrapped inside its cell, the token whole', async () => {
    const sandbox = makeSandbox();
    const longValue = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const { lines, text, code } = await onTerminal(
      sandbox,
      ['get', '--id', 'fit-120', '--name', 'Fit 120', '--property', `notes=${longValue}`],
      120,
    );
    expect(code, text).toBe(0);
    expect(text).toMatch(BOX);
    for (const line of lines) expect(line.length, text).toBeLessThanOrEqual(120);
    const boxLines = lines.filter((line) => line.startsWith('│'));
    // Every row of the box has its right border at the same column.
    expect(new Set(boxLines.map((line) => line.length)).size, text).toBe(1);
    // The properties value took more than one line of its cell.
    const propertiesAt = boxLines.findIndex((line) => line.startsWith('│ properties'));
    expect(boxLines[propertiesAt + 1], text).toMatch(/^│ +│ \S/);
    expect(tokenLine(lines).line).toMatch(/^│ token +│ [0-9a-f]{64} +│$/);
  });

  it.each([
    ['TERM=dumb', { TERM: 'dumb' }],
    ['LANG=C', { LANG: 'C' }],
    ['LC_ALL=en_US.ISO-8859-1', { LC_ALL: 'en_US.ISO-8859-1' }],
    ['LC_CTYPE=POSIX', { LC_CTYPE: 'POSIX' }],
  ])('%s gets ASCII borders', async (_label, env) => {
    const sandbox = makeSandbox();
    const { text, code } = await onTerminal(
      sandbox,
      ['get', '--id', 'ascii', '--name', 'ASCII'],
      120,
      env,
    );
    expect(code, text).toBe(0);
    expect(text).not.toMatch(BOX);
    expect(text).toMatch(/^\+-+\+-+\+\r?$/m);
    expect(text).toMatch(/^\| token +\| [0-9a-f]{64} \|\r?$/m);
  });

  it('a UTF-8 locale keeps the box characters', async () => {
    const sandbox = makeSandbox();
    const { text } = await onTerminal(sandbox, ['status'], 120, {
      LC_ALL: 'en_US.UTF-8',
      LANG: 'C',
    });
    expect(text).toMatch(/^┌─+┬─+┐/m);
  });
});

describe('the default output into a pipe', () => {
  it('is key<TAB>value lines without box drawing; --json and --field are unchanged', async () => {
    const sandbox = makeSandbox();
    const args = ['get', '--id', 'piped', '--name', 'Piped', '--property', 'plan=pro'];
    const [table, json, field] = await Promise.all([
      runMain(args, { sandbox, env: serviceEnv() }),
      runMain([...args, '--json'], { sandbox, env: serviceEnv() }),
      runMain([...args, '--field', 'token'], { sandbox, env: serviceEnv() }),
    ]);
    for (const result of [table, json, field]) expect(result.code, describeRun(result)).toBe(0);
    expect(table.stdout).not.toMatch(BOX);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.split('\t')[0])).toEqual([
      'provided_id',
      'name',
      'team_id',
      'token',
      'properties',
    ]);
    expect(lines).toContain('properties\t{"plan":"pro"}');
    const token = JSON.parse(json.stdout).user_group.token as string;
    expect(lines).toContain(`token\t${token}`);
    expect(field.stdout).toBe(`${token}\n`);
  });
});

describe('-q/--quiet', () => {
  it('no notes or warnings on stderr; errors still', async () => {
    const sandbox = makeSandbox();
    const args = ['get', '--id', 'quiet', '--name', 'Quiet'];
    const first = await runMain(args, { sandbox, env: serviceEnv() });
    // Without -q: the headline, then the "already existed" note on the second call.
    const loud = await runMain(args, { sandbox, env: serviceEnv() });
    expect(first.stderr).toContain('Created user group quiet');
    expect(loud.stderr).toContain('note:');
    const [quiet, quietAfter, rotated] = await Promise.all([
      runMain(['-q', ...args], { sandbox, env: serviceEnv() }),
      runMain([...args, '--quiet'], { sandbox, env: serviceEnv() }),
      runMain(['rotate', '--current-token-stdin', '--yes', '--field', 'token', '-q'], {
        sandbox,
        env: serviceEnv(),
        stdin: first.stdout.match(HEX64)?.[0] ?? '',
      }),
    ]);
    for (const result of [quiet, quietAfter, rotated]) {
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stderr, describeRun(result)).toBe('');
    }
    expect(quiet.stdout).toMatch(/^token\t[0-9a-f]{64}$/m);
    expect(rotated.stdout).toMatch(/^[0-9a-f]{64}\n$/);

    const failed = await runMain(['-q', 'get', '--id', 'x'], { sandbox, env: serviceEnv() });
    expectFailure(failed, 2);
  });

  it('a bulk run prints no progress or summary with -q', async () => {
    const sandbox = makeSandbox();
    const rows = join(sandbox.root, 'rows.csv');
    writeFileSync(rows, 'user_group_id,name\nq1,One\nq2,Two\n');
    const [loud, quiet] = await Promise.all([
      runMain(['get', '--from', rows], { sandbox, env: serviceEnv() }),
      runMain(['get', '--from', rows, '-q'], { sandbox, env: serviceEnv() }),
    ]);
    expect(loud.stderr).toMatch(/2 rows in/);
    expect(quiet.code, describeRun(quiet)).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout.trim().split('\n')).toHaveLength(2);
  });
});
