import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeRun, makeSandbox, PACKAGE_VERSION, runMain, STACK_LINE } from '../kit/index.js';

const COMMANDS = ['login', 'logout', 'status', 'get', 'rotate'];

describe('help and version (main in-process)', () => {
  it('--help of the program and of every command exits 0 with examples on stdout', async () => {
    const sb = makeSandbox();
    const invocations = [
      ['--help'],
      ['-h'],
      [],
      ...COMMANDS.map((command) => [command, '--help']),
      ...COMMANDS.map((command) => ['help', command]),
    ];
    const results = await Promise.all(invocations.map((args) => runMain(args, { sandbox: sb })));
    results.forEach((result, i) => {
      const label = `ugs ${invocations[i]?.join(' ')}\n${describeRun(result)}`;
      expect(result.code, label).toBe(0);
      expect(result.stdout, label).toContain('Examples:');
      expect(result.stdout, label).toMatch(/^ {2}\$ ugs /m);
      expect(result.stdout, label).toContain('Usage: ugs');
      expect(result.stderr, label).toBe('');
    });
    const [programHelp] = results;
    for (const command of COMMANDS) expect(programHelp?.stdout).toContain(command);
    for (const option of ['--profile', '--base-url', '--timeout', '--no-input', '--debug']) {
      expect(programHelp?.stdout).toContain(option);
    }
    // Help never touches the config: the directory was not created.
    expect(() => statSync(sb.configDir)).toThrow();
  });

  it('each command documents its own flags', async () => {
    const sb = makeSandbox();
    const expected: Record<string, string[]> = {
      login: ['--with-token'],
      logout: [],
      status: ['--json'],
      get: [
        '--id',
        '--name',
        '--mapping',
        '--mapping-json',
        '--property',
        '--properties',
        '--json',
        '--field',
      ],
      rotate: ['--current-token', '--current-token-stdin', '--yes', '--json', '--field'],
    };
    const results = await Promise.all(COMMANDS.map((c) => runMain([c, '--help'], { sandbox: sb })));
    results.forEach((result, i) => {
      const command = COMMANDS[i] ?? '';
      for (const flag of expected[command] ?? []) {
        expect(result.stdout, `ugs ${command} --help`).toContain(flag);
      }
    });
  });

  it('--version and -V print the package.json version', async () => {
    const sb = makeSandbox();
    const [long, short, afterCommand] = await Promise.all([
      runMain(['--version'], { sandbox: sb }),
      runMain(['-V'], { sandbox: sb }),
      runMain(['--version', 'status'], { sandbox: sb }),
    ]);
    for (const result of [long, short, afterCommand]) {
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stdout).toBe(`${PACKAGE_VERSION}\n`);
      expect(result.stderr).not.toMatch(STACK_LINE);
    }
  });
});
