/**
 * Help that fits: every command's help (found from the program's own list, so new commands are
 * checked too) fits 80 columns, shows no `(default: [])` and no quoted number, and lists the
 * global options in their own section. Unknown commands are usage errors (exit 2) with the
 * suggestion on the hint line; `ugs --help get` is `get`'s help.
 */
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  expectFailure,
  killAllPtys,
  makeSandbox,
  runMain,
  startPty,
} from '../kit/index.js';

/** The command names listed under `Commands:` in the program's help. */
async function commandNames(): Promise<string[]> {
  const help = await runMain(['--help']);
  const section = help.stdout.split('Commands:\n')[1]?.split('\n\n')[0] ?? '';
  const names = section
    .split('\n')
    .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
  expect(names.length, help.stdout).toBeGreaterThanOrEqual(6);
  return names;
}

const GLOBALS = ['--profile', '--base-url', '--api-path', '--timeout', '--quiet', '--no-input'];

function expectFits(text: string, label: string): void {
  for (const line of text.split(/\r?\n/)) {
    expect(line.length, `${label}: a line over 80 columns:\n${line}`).toBeLessThanOrEqual(80);
  }
  expect(text, label).not.toContain('(default: [])');
  expect(text, label).not.toMatch(/default: "\d/);
}

describe('help fits 80 columns', () => {
  it('every command, as --help and as `ugs help <command>`, into a pipe', async () => {
    const names = await commandNames();
    const sandbox = makeSandbox();
    const invocations = [
      ['--help'],
      ...names.map((name) => [name, '--help']),
      ...names.map((name) => ['help', name]),
    ];
    const results = await Promise.all(invocations.map((args) => runMain(args, { sandbox })));
    results.forEach((result, i) => {
      const args = invocations[i] ?? [];
      const label = describeRun(result);
      expect(result.code, label).toBe(0);
      expectFits(result.stdout, label);
      if (args[0] === '--help') return;
      // A subcommand's help: the global options in a section of their own.
      const globals = result.stdout.split('Global Options:\n')[1]?.split('\n\n')[0];
      expect(globals, label).toBeDefined();
      for (const option of GLOBALS) expect(globals, label).toContain(option);
    });
  });

  it('a wide terminal still gets help of 80 columns at most', async () => {
    const sandbox = makeSandbox();
    const session = startPty(sandbox, ['get', '--help'], { columns: 200 });
    const exit = await session.finish();
    expect(exit.code, session.text()).toBe(0);
    expect(session.text()).toContain('Global Options:');
    expectFits(session.text(), 'ugs get --help at 200 columns');
    killAllPtys();
  });
});

describe('help for unknown commands, and --help before a command', () => {
  it.each([
    [['help', 'nosuch'], 'nosuch', undefined],
    [['nosuch'], 'nosuch', undefined],
    [['gte'], 'gte', 'get'],
    [['help', 'gte'], 'gte', 'get'],
    [['--help', 'rotat'], 'rotat', 'rotate'],
  ])('ugs %j is a usage error in error:/hint: form', async (args, name, suggestion) => {
    const result = await runMain(args);
    const { error, hint } = expectFailure(result, 2);
    expect(error).toBe(`unknown command '${name}'`);
    expect(hint, describeRun(result)).toBeDefined();
    if (suggestion !== undefined)
      expect(hint).toMatch(new RegExp(`^did you mean ${suggestion}\\?`));
    else expect(hint).not.toContain('did you mean');
  });

  // `ugs create` used to get "did you mean rotate?", the destructive command.
  it.each([
    ['create', 'get'],
    ['creat', 'get'],
    ['new', 'get'],
    ['add', 'get'],
    ['provision', 'get'],
    ['Create', 'get'],
  ])('ugs %s suggests %s (it creates), never rotate', async (word, suggestion) => {
    const result = await runMain([word, '--id', 'acme']);
    const { error, hint } = expectFailure(result, 2);
    expect(error).toBe(`unknown command '${word}'`);
    expect(hint).toMatch(new RegExp(`^did you mean ${suggestion}\\? \\(get creates`));
    expect(hint).not.toContain('rotate');
    expect(result.stdout).toBe('');
  });

  it.each([
    // Two edits from both rotate and status: commander offered "one of rotate, status".
    ['state', 'status'],
    // Two edits from login, logout and get alike.
    ['loget', 'get'],
  ])(
    'ugs %s, as close to a changing command as to a reading one, suggests only %s',
    async (word, only) => {
      const { hint } = expectFailure(await runMain([word]), 2);
      expect(hint).toMatch(new RegExp(`^did you mean ${only}\\? see`));
    },
  );

  it('a command that changes data is still suggested when it is the closest', async () => {
    expect(expectFailure(await runMain(['rotat']), 2).hint).toMatch(/^did you mean rotate\?/);
    expect(expectFailure(await runMain(['logut']), 2).hint).toMatch(/^did you mean logout\?/);
  });

  it('an unknown option keeps its suggestion on the hint line', async () => {
    const result = await runMain(['get', '--idd', 'x']);
    const { error, hint } = expectFailure(result, 2);
    expect(error).toBe("unknown option '--idd'");
    expect(hint).toMatch(/^did you mean --id\?/);
  });

  it('an unknown --name=value is reported by its name: the value may be a token', async () => {
    const secret = 'ug-token-typed-after-a-typo-1234';
    const result = await runMain(['rotate', `--current-tokn=${secret}`, '--yes']);
    const { error, hint } = expectFailure(result, 2);
    expect(error).toBe("unknown option '--current-tokn'");
    expect(hint).toMatch(/^did you mean --current-token\?/);
    expect(result.stderr).not.toContain(secret.slice(-8));
  });

  it('an option typed in another case (--ID, --Base-URL) suggests the one it is', async () => {
    for (const [argv, error, meant] of [
      [['get', '--ID', 'x', '--name', 'X'], "unknown option '--ID'", '--id'],
      [
        ['rotate', '--Current-Token-Stdin'],
        "unknown option '--Current-Token-Stdin'",
        '--current-token-stdin',
      ],
      // A global option, with its value after `=` (not repeated in the error).
      [['status', '--Base-URL=http://127.0.0.1:1'], "unknown option '--Base-URL'", '--base-url'],
    ] as const) {
      const failed = expectFailure(await runMain([...argv]), 2);
      expect(failed.error).toBe(error);
      expect(failed.hint).toMatch(new RegExp(`^did you mean ${meant}\\?`));
    }
  });

  it.each([
    [['--help', 'get'], 'get'],
    [['-h', 'rotate'], 'rotate'],
    [['-p', 'work', '--help', 'status'], 'status'],
  ])('ugs %j shows that command’s help', async (args, name) => {
    const result = await runMain(args);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe(`Usage: ugs ${name} [options]`);
    expect(result.stderr).toBe('');
  });
});
