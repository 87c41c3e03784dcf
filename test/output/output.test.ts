/**
 * The output object (src/output/output.ts): what every writer of output knows about the run,
 * decided once, and the render functions that take it instead of the IO and the settings.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { printLine, printWarningNote } from '../../src/output/messages.js';
import { createOutput } from '../../src/output/output.js';
import { printFieldTable, printResult } from '../../src/output/results.js';
import { plainStyle } from '../../src/output/style.js';
import { makeIO, terminalIO } from '../kit/fakes.js';

const quietless = { quiet: false, noColor: false, debug: false };

describe('createOutput', () => {
  it('takes what a writer needs from the IO and the preferences, once', () => {
    const io = terminalIO({ env: { LANG: 'C', GITHUB_ACTIONS: 'true' } });
    const out = createOutput(io, { quiet: true, noColor: true, debug: true });
    expect(out.stdout).toBe(io.stdout);
    expect(out.stderr).toBe(io.stderr);
    expect([out.stdoutIsTTY, out.stderrIsTTY]).toEqual([true, true]);
    expect([out.quiet, out.noColor, out.debug]).toEqual([true, true, true]);
    expect(out.unicode).toBe(false);
    expect(out.ci).toBe('github');
    expect(out.underCiRunner).toBe(true);
    expect(out.color('stdout')).toBe(false);
  });

  it('reads a terminal width when asked: a terminal may be resized during a run', () => {
    const io = terminalIO();
    const out = createOutput(io, quietless);
    expect(out.stdoutColumns()).toBe(80);
    Object.assign(io.stdout, { columns: 132 });
    Object.assign(io.stderr, { columns: 40 });
    expect(out.stdoutColumns()).toBe(132);
    expect(out.stderrColumns()).toBe(40);
    // Not a terminal: the width of a pipe is not its writer's business.
    const piped = createOutput(makeIO(), quietless);
    expect(piped.stdoutColumns()).toBe(80);
  });

  it('colours only a terminal, and loads the colours once per run', async () => {
    const out = createOutput(terminalIO(), quietless);
    const first = await out.style('stderr');
    expect(first).not.toBe(plainStyle);
    expect(first.red('x')).toBe('\u001b[31mx\u001b[39m');
    expect(await out.style('stdout')).toBe(first);
    expect(await createOutput(makeIO(), quietless).style('stdout')).toBe(plainStyle);
    expect(await createOutput(terminalIO(), { ...quietless, noColor: true }).style('stdout')).toBe(
      plainStyle,
    );
  });

  it('masks tokens under a CI runner before anything is written, and does nothing elsewhere', () => {
    const ci = makeIO({ env: { GITHUB_ACTIONS: 'true' } });
    createOutput(ci, quietless).maskTokensIn({ user_group: { token: 'ug-secret-1' } });
    expect(ci.stderr.text).toBe('::add-mask::ug-secret-1\n');
    const local = makeIO();
    createOutput(local, quietless).maskSecret('ug-secret-1');
    expect(local.stderr.text).toBe('');
  });
});

describe('render functions take the output object', () => {
  it('messages follow its quiet and width', async () => {
    const io = terminalIO();
    Object.assign(io.stderr, { columns: 20 });
    const out = createOutput(io, { ...quietless, noColor: true });
    printLine(out, 'a message that is longer than twenty columns');
    expect(io.stderr.text).toBe('a message that is\nlonger than twenty\ncolumns\n');
    const quiet = makeIO();
    await printWarningNote(createOutput(quiet, { ...quietless, quiet: true }), 'unseen');
    expect(quiet.stderr.text).toBe('');
  });

  it('results follow its terminal: lines into a pipe, a box at a terminal', async () => {
    const piped = makeIO();
    await printFieldTable(createOutput(piped, quietless), [['profile', 'default']]);
    expect(piped.stdout.text).toBe('profile\tdefault\n');
    const tty = terminalIO({ env: { NO_COLOR: '1' } });
    await printResult(createOutput(tty, quietless), {
      format: { kind: 'table' },
      body: { user_group: { name: 'Acme' } },
      record: { name: 'user_group', fields: { name: 'Acme' } },
      headline: () => ['Found user group acme'],
    });
    expect(tty.stdout.text).toBe(
      'Found user group acme\n┌──────┬──────┐\n│ name │ Acme │\n└──────┴──────┘\n',
    );
  });
});

describe('layers', () => {
  // Output sits below the settings and the factory (src/context): it is given an output object,
  // it does not reach up for the run's settings.
  it('no module of src/output imports the settings, the factory or a command', () => {
    const dir = join(__dirname, '../../src/output');
    for (const file of readdirSync(dir)) {
      const text = readFileSync(join(dir, file), 'utf8');
      const imports = [...text.matchAll(/from '([^']+)'/g)].map((match) => match[1]);
      expect(
        imports.filter((path) => /settings|context\/|commands\/|deps|bulk\//.test(path ?? '')),
        file,
      ).toEqual([]);
    }
  });
});
