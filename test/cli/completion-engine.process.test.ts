/**
 * The completion engine against the real commander program: what the shell scripts print comes
 * from here, so a command or option added to the program completes with no change elsewhere.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { complete } from '../../src/cli/completion-engine.js';
import { readProfileNames, runCompletion } from '../../src/commands/completion.js';
import { buildProgram } from '../../src/main.js';
import { tempDir } from '../kit/binary.js';
import { makeDeps, makeIO } from '../kit/fakes.js';

function program(): Command {
  const io = makeIO();
  return buildProgram(io, () => makeDeps({ io }));
}

const values = (p: Command, words: string[], profiles: string[] = []) =>
  complete(p, words, () => profiles).candidates.map((c) => c.value);

describe('complete()', () => {
  it('offers a command and options added to the program, with no change to completion', () => {
    const p = program();
    p.addCommand(
      new Command('purge')
        .description('Remove a user group')
        .option('--force', 'no questions')
        .addOption(new Option('--mode <mode>', 'how').choices(['soft', 'hard'])),
    );
    expect(values(p, ['pu'])).toEqual(['purge']);
    expect(complete(p, ['pu'], () => []).candidates[0]?.description).toBe('Remove a user group');
    expect(values(p, ['purge', '--f'])).toEqual(['--force']);
    expect(values(p, ['purge', '--mode', ''])).toEqual(['soft', 'hard']);
    expect(values(p, ['purge', '--mode=h'])).toEqual(['--mode=hard']);
  });

  it('takes option values from placeholders: word lists, files, the profile', () => {
    const p = program();
    expect(values(p, ['get', '--format', ''])).toEqual(['csv', 'ndjson', 'json']);
    expect(complete(p, ['get', '--from', ''], () => []).files).toBe(true);
    expect(complete(p, ['--ca-file', ''], () => []).files).toBe(true);
    // `<json|@file|->` is JSON text, not a file name to complete; `<path>` is a URL path.
    expect(complete(p, ['get', '--properties', ''], () => []).files).toBe(false);
    expect(complete(p, ['--api-path', ''], () => []).files).toBe(false);
    expect(values(p, ['get', '--profile', 'w'], ['work', 'west', 'default'])).toEqual([
      'work',
      'west',
    ]);
    expect(values(p, ['-p', ''], ['a', 'b'])).toEqual(['a', 'b']);
  });

  it('skips option values when finding the command, and stops at --', () => {
    const p = program();
    // `get` here is the value of --profile, not the command.
    expect(values(p, ['--profile', 'get', 'ro'])).toEqual(['rotate']);
    expect(values(p, ['-pwork', 'ro'])).toEqual(['rotate']);
    expect(values(p, ['get', '--', '--fo'])).toEqual([]);
  });

  it('lists each option once, long names only for a bare "-"', () => {
    const p = program();
    const dash = values(p, ['status', '-']);
    expect(dash).toContain('--json');
    expect(dash).toContain('--profile');
    expect(dash).not.toContain('-p');
    expect(new Set(dash).size).toBe(dash.length);
  });

  it('never offers a hidden command or one of its options', () => {
    const p = program();
    expect(values(p, ['completion', ''])).toEqual(['bash', 'zsh', 'fish', 'powershell']);
    expect(values(p, ['completion', '__'])).toEqual([]);
  });

  it('__complete prints the directive line, then value<TAB>description lines', async () => {
    const io = makeIO();
    const p = program();
    await runCompletion(
      { kind: 'complete', words: ['get', '--js'] },
      { io, program: p, listProfiles: () => [] },
    );
    expect(io.stdout.text).toBe('nofiles\n--json\tprint the response body as JSON on stdout\n');
  });
});

describe('readProfileNames', () => {
  it('lists the names a shell can take back, sorted', () => {
    const file = join(tempDir('profiles'), 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        profiles: { work: {}, default: {}, 'has space': {}, 'x;rm': {}, 'prod-eu': {} },
      }),
    );
    expect(readProfileNames(file)).toEqual(['default', 'prod-eu', 'work']);
  });

  it('gives none, at once, for what is not a readable config file', () => {
    const dir = tempDir('profiles');
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    writeFileSync(join(dir, 'real.json'), '{"profiles": {"a": {}}}');
    symlinkSync(join(dir, 'real.json'), join(dir, 'link.json'));
    writeFileSync(join(dir, 'corrupt.json'), '{"profiles": ');
    writeFileSync(join(dir, 'array.json'), '{"profiles": ["a"]}');
    mkdirSync(join(dir, 'directory'));
    // Valid, but past the 1 MiB a config file can be: not read on a keypress.
    writeFileSync(join(dir, 'huge.json'), `{"profiles": {"a": {}}}${' '.repeat(2 * 1024 * 1024)}`);
    for (const name of [
      'fifo',
      'link.json',
      'corrupt.json',
      'array.json',
      'directory',
      'huge.json',
      'missing',
    ]) {
      expect(readProfileNames(join(dir, name)), name).toEqual([]);
    }
  });
});
