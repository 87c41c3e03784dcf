/**
 * An option that takes one value, given twice, is a usage error rather than "last one wins":
 * enumerated from the program itself, so options added later are covered without a new test.
 */
import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, main } from '../../src/main.js';
import { makeIO } from '../kit/fakes.js';

const system = {
  platform: 'linux' as const,
  homedir: '/nonexistent-home',
  nodeVersion: 'v20.0.0',
  uid: process.getuid?.(),
  waitForShutdown: () => new Promise<string>(() => {}),
};

interface Case {
  path: string[];
  option: Option;
}

function valueOptions(command: Command, path: string[] = []): Case[] {
  const own = (command.options as readonly Option[])
    .filter((o) => (o.required || o.optional) && !o.variadic && !Array.isArray(o.defaultValue))
    .map((option) => ({ path, option }));
  return [...own, ...command.commands.flatMap((sub) => valueOptions(sub, [...path, sub.name()]))];
}

const program = buildProgram(makeIO(), () => {
  throw new Error('no command may run');
});
const cases = valueOptions(program);

async function run(argv: string[]) {
  const io = makeIO({ env: { UGS_CONFIG_DIR: '/nonexistent-ugs-config' } });
  const code = await main(argv, io, system);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

describe('a single-value option given twice', () => {
  it('covers the options that matter', () => {
    const names = cases.map((c) => c.option.long);
    for (const name of [
      '--id',
      '--name',
      '--field',
      '--base-url',
      '--profile',
      '--timeout',
      '--current-token',
      '--properties',
      '--mapping-json',
      '--ca-file',
    ]) {
      expect(names).toContain(name);
    }
  });

  for (const { path, option } of cases) {
    const where = path.length === 0 ? ['get'] : path;
    const long = option.long as string;
    const spellings: [string, string[]][] = [
      ['separate values', [long, 'first', long, 'second']],
      ['--opt=value', [`${long}=first`, `${long}=second`]],
    ];
    if (option.short) spellings.push(['short and long', [option.short, 'first', `${long}=second`]]);
    for (const [label, flags] of spellings) {
      it(`${[...where, long].join(' ')} (${label}) is a usage error`, async () => {
        const argv = path.length === 0 ? [...flags, ...where] : [...where, ...flags];
        const result = await run(argv);
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).toMatch(new RegExp(`^error: ${long} was given more than once`));
        expect(result.stderr).toMatch(/^hint: /m);
        // The value may be a token: it is never echoed.
        expect(result.stderr).not.toMatch(/first|second/);
        expect(result.stdout).toBe('');
      });
    }
  }

  it('a global option before and after the command name counts twice', async () => {
    const result = await run(['--timeout', '1', 'get', '--timeout', '2', '--id', 'a']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--timeout was given more than once/);
  });

  it('repeatable options stay repeatable, and defaults do not count as a first value', async () => {
    const result = await run([
      'get',
      '--id',
      'a',
      '--name',
      'A',
      '--mapping',
      'a=b',
      '--mapping',
      'c=d',
      '--property',
      'x=1',
      '--property',
      'y=2',
      '--timeout',
      '5',
    ]);
    // It gets as far as wanting credentials: parsing accepted everything.
    expect(result.stderr).not.toMatch(/more than once/);
    expect(result.code).toBe(3);
  });
});
