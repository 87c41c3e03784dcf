/** The command printed to recover a rotated token whose output was lost: exact and pasteable. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OutcomeUnknownError } from '../../src/errors.js';
import { commandWord, powershellWord, shellWord } from '../../src/input/parse.js';
import {
  recoveryCommand,
  recoveryHint,
  runRotate,
} from '../../src/operations/rotate-token/command.js';
import type { ServiceResult } from '../../src/service/service.js';
import { FakeService, groupResult, makeDeps, makeIO } from '../kit/fakes.js';
import { describeRun, runMain, serviceWithProfile } from '../kit/index.js';

/** `runRotate --field token` that rotates (answering `answer`), then finds stdout failing (EIO). */
async function rotateWithFailingStdout(answer: ServiceResult): Promise<Error> {
  const io = makeIO();
  io.stdout.write = ((_chunk: unknown, callback?: (error?: Error) => void) => {
    const error = Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    if (typeof callback === 'function') process.nextTick(() => callback(error));
    return false;
  }) as typeof io.stdout.write;
  const service = new FakeService({ rotate: () => answer });
  return runRotate(
    {
      currentToken: 'old-token-1234',
      currentTokenFromStdin: false,
      yes: true,
      format: { kind: 'field', name: 'token' },
    },
    makeDeps({ io, service }),
  ).then(
    () => new Error('no error'),
    (e: unknown) => e as Error,
  );
}

/** The words of a command as a POSIX shell reads them (bare, '...' and \' only: shellWord's). */
function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let at = 0; at < command.length; at++) {
    const c = command[at] ?? '';
    if (c === ' ') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const close = command.indexOf("'", at + 1);
      word = (word ?? '') + command.slice(at + 1, close);
      at = close;
    } else if (c === '\\') {
      word = (word ?? '') + (command[++at] ?? '');
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

describe('shellWord', () => {
  it.each([
    ['acme', 'acme'],
    ['acme-01_x.y', 'acme-01_x.y'],
    ['Acme Corp', "'Acme Corp'"],
    ["Acme's", "'Acme'\\''s'"],
    ['$(rm -rf ~)', "'$(rm -rf ~)'"],
    ['a\u001b[2Jb', "'a\\u001b[2Jb'"],
    ['', "''"],
  ])('%j → %s', (value, expected) => {
    expect(shellWord(value)).toBe(expected);
  });
});

/**
 * The words of a command as PowerShell passes them to a program: bare, '...' with '' for a quote
 * (the typographic single quotes count as quotes too), and ('...'+'...').
 */
function powershellWords(command: string): string[] {
  const QUOTES = "'\u2018\u2019\u201a\u201b";
  const words: string[] = [];
  let at = 0;
  const quoted = (): string => {
    let text = '';
    for (at++; at < command.length; at++) {
      const c = command[at] ?? '';
      if (QUOTES.includes(c)) {
        if (QUOTES.includes(command[at + 1] ?? '')) {
          text += c;
          at++;
        } else {
          at++;
          return text;
        }
      } else text += c;
    }
    throw new Error(`unclosed quote in ${command}`);
  };
  while (at < command.length) {
    if (command[at] === ' ') {
      at++;
      continue;
    }
    let word = '';
    if (command[at] === '(') {
      at++;
      for (;;) {
        word += quoted();
        if (command[at] === '+') at++;
        else break;
      }
      if (command[at] !== ')') throw new Error(`unclosed ( in ${command}`);
      at++;
    } else if (QUOTES.includes(command[at] ?? '')) word = quoted();
    else {
      while (at < command.length && command[at] !== ' ') word += command[at++];
    }
    words.push(word);
  }
  return words;
}

describe('powershellWord', () => {
  it.each([
    ['acme', 'acme'],
    ['acme-01_x.y', 'acme-01_x.y'],
    ['C:\\Users\\me', 'C:\\Users\\me'],
    ['Acme Corp', "'Acme Corp'"],
    ["Acme's", "'Acme''s'"],
    ['Acme\u2019s', "'Acme\u2019\u2019s'"],
    ['$(rm -rf ~)', "'$(rm -rf ~)'"],
    ['a,b', "'a,b'"],
    ['@acme', "'@acme'"],
    ['-acme', "'-acme'"],
    ['##[error]x', "('#'+'#[error]x')"],
    ['', "''"],
  ])('%j → %s', (value, expected) => {
    expect(powershellWord(value)).toBe(expected);
  });

  it('any printable text comes back as one word, the same text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (value) => {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: controls are shown escaped, not pasted
        fc.pre(!/[\u0000-\u001f\u007f-\u009f]/.test(value));
        expect(powershellWords(`ugs ${commandWord(value, 'powershell')} x`)).toEqual([
          'ugs',
          value,
          'x',
        ]);
      }),
    );
  });
});

describe('recoveryCommand on Windows: quoted for PowerShell', () => {
  const windows = () => makeDeps({ system: { platform: 'win32' } });

  it("a name with a space and a quote: PowerShell's quoting, which POSIX quoting is not", () => {
    const command = recoveryCommand({ provided_id: "acme's", name: "Acme's Corp" }, windows());
    expect(command).toBe("ugs get --id 'acme''s' --name 'Acme''s Corp' --must-exist --field token");
    expect(powershellWords(command)).toEqual([
      'ugs',
      'get',
      '--id',
      "acme's",
      '--name',
      "Acme's Corp",
      '--must-exist',
      '--field',
      'token',
    ]);
  });

  it('the profile, --base-url and --api-path too', () => {
    const deps = makeDeps({
      system: { platform: 'win32' },
      settings: {
        profile: 'my work',
        baseUrl: 'https://x.example',
        baseUrlSource: 'flag',
        apiPath: '/api/user/',
        apiPathSource: 'flag',
      },
    });
    expect(recoveryCommand({ provided_id: 'a', name: 'A' }, deps)).toBe(
      "ugs get --id a --name A --must-exist --field token --profile 'my work' --base-url https://x.example --api-path /api/user/",
    );
  });

  it('macOS and Linux keep POSIX quoting', () => {
    for (const platform of ['darwin', 'linux'] as const) {
      const deps = makeDeps({ system: { platform } });
      expect(recoveryCommand({ provided_id: "acme's", name: 'A' }, deps)).toBe(
        "ugs get --id 'acme'\\''s' --name A --must-exist --field token",
      );
    }
  });
});

describe('recoveryCommand', () => {
  it('uses the answer id and name', () => {
    expect(recoveryCommand({ provided_id: 'acme', name: 'Acme Corp' }, makeDeps())).toBe(
      "ugs get --id acme --name 'Acme Corp' --must-exist --field token",
    );
  });
  it('placeholders when the answer lacks them', () => {
    expect(recoveryCommand({}, makeDeps())).toBe(
      'ugs get --id <user_group_id> --name <name> --must-exist --field token',
    );
  });
  it('keeps a non-default profile and a --base-url flag, so it asks the same service', () => {
    const deps = makeDeps({
      settings: { profile: 'staging', baseUrl: 'https://x.example', baseUrlSource: 'flag' },
    });
    expect(recoveryCommand({ provided_id: 'a', name: 'A' }, deps)).toBe(
      'ugs get --id a --name A --must-exist --field token --profile staging --base-url https://x.example',
    );
  });
  it('keeps an --api-path flag, so a trailing-slash service is asked at the same path', () => {
    const deps = makeDeps({ settings: { apiPath: '/api/user/', apiPathSource: 'flag' } });
    expect(recoveryCommand({ provided_id: 'a', name: 'A' }, deps)).toBe(
      'ugs get --id a --name A --must-exist --field token --api-path /api/user/',
    );
  });
});

describe('rotate whose output fails', () => {
  it('is OutcomeUnknown (exit 5) with the recovery command', async () => {
    const error = await rotateWithFailingStdout(groupResult({ name: 'Acme Corp' }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.message).toMatch(/^could not write the output: EIO.*; the token WAS rotated/);
    expect((error as OutcomeUnknownError).hint).toContain(
      "ugs get --id acme --name 'Acme Corp' --must-exist --field token",
    );
  });
});

describe('the recovery command, run', () => {
  const API_TOKEN = 'apitoken-recovery-1234abcd';

  it('carries --must-exist: pasted as printed it reads the rotated token; with a mangled id it fails and prints no token', async () => {
    const { sb, service } = await serviceWithProfile(API_TOKEN);
    const group = await service.seed('acme-corp', "Acme's Corp");
    const error = await rotateWithFailingStdout(groupResult({ ...group }));
    const command = /`(ugs get [^`]*)`/.exec((error as OutcomeUnknownError).hint ?? '')?.[1] ?? '';
    expect(command).toContain(' --must-exist ');
    const [ugs, ...argv] = shellWords(command);
    expect(ugs).toBe('ugs');

    const pasted = await runMain(argv, { sandbox: sb });
    expect(pasted.code, describeRun(pasted)).toBe(0);
    expect(pasted.stdout).toBe(`${group.token}\n`);

    // The id as a shell or a paste may mangle it (a character lost): get-or-create would make
    // a new group and print its token as the rotated one. With --must-exist: exit 1, no token.
    const mangled = argv.map((word) => (word === 'acme-corp' ? 'acme-cor' : word));
    expect(mangled).not.toEqual(argv);
    const wrong = await runMain(mangled, { sandbox: sb });
    expect(wrong.code, describeRun(wrong)).toBe(1);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toContain('--must-exist: user group "acme-cor" did not exist');
    // The service has no read-only lookup: the get that checks made the group (the message says
    // so), but its token reached no one; the rotated group is untouched.
    expect(service.createdIds()).toEqual(['acme-cor']);
    expect((await service.group('acme-corp')).token).toBe(group.token);
  });
});

describe('recovery of a group whose id cannot be pasted', () => {
  const target = { baseUrl: new URL('https://ugs.example.com'), apiToken: 'api-token-0123456789' };

  // Each would be shown escaped (or altered by the terminal): pasted, `ugs get` would ask for
  // another id, and get-or-create would make a new group and print ITS token.
  it.each([
    ['a C1 control', 'acme\u0085x', 'U+0085'],
    ['a line separator', 'acme\u2028x', 'U+2028'],
    ['an escape sequence', 'acme\u001b[2Jx', 'U+001B'],
    ['a bidi override', 'acme\u202ex', 'U+202E'],
    ['a zero-width space', 'acme\u200bx', 'U+200B'],
    ['a no-break space', 'acme\u00a0x', 'U+00A0'],
    ['decomposed text', 'acme\u0301', 'NFC'],
  ])('%s: says so and gives the JSON way, never a `ugs get` command', (_label, id, named) => {
    const hint = recoveryHint({ provided_id: id, name: 'Acme' }, makeDeps(), target);
    expect(hint).not.toContain('ugs get --id');
    expect(hint).toContain(named);
    expect(hint).toContain('a terminal or shell would not paste as it is');
    // The JSON body carries the id exactly, and is printable ASCII, so it survives the paste.
    const body = /-d '([^']*)'`$/.exec(hint)?.[1];
    expect(body).toMatch(/^[\x20-\x7e]+$/);
    expect(JSON.parse(body ?? '')).toEqual({ user_group_id: id, name: 'Acme' });
    expect(hint).toContain('curl -X GET https://ugs.example.com/api/user -H');
    // Nothing in the hint itself can drive the terminal (a combining accent is just shown).
    expect(hint.replace(/\u0301/g, '')).toMatch(/^[\x20-\x7e]+$/);
  });

  it('on Windows the JSON way is for PowerShell: the body piped in whole (5.1 would strip its quotes as an argument), curl.exe, $env:API_TOKEN', () => {
    const id = "acme's\u2028x";
    const deps = makeDeps({ system: { platform: 'win32' } });
    const hint = recoveryHint({ provided_id: id, name: 'Acme' }, deps, target);
    const command = /`([^`]*)`$/.exec(hint)?.[1] ?? '';
    expect(command).toMatch(
      /^'.*' \| curl\.exe -X GET https:\/\/ugs\.example\.com\/api\/user -H "Authorization: Token \$env:API_TOKEN" -H 'Content-Type: application\/json' --data-binary '@-'$/,
    );
    // The string literal as PowerShell reads it ('' is one quote) is the exact JSON body.
    const literal = /^'((?:[^']|'')*)' \|/.exec(command)?.[1] ?? '';
    expect(JSON.parse(literal.replace(/''/g, "'"))).toEqual({ user_group_id: id, name: 'Acme' });
    expect(command).not.toContain(' -d ');
  });

  it('an id that pastes fine gets the `ugs get` command', () => {
    expect(recoveryHint({ provided_id: 'acme', name: 'Acme Corp' }, makeDeps(), target)).toBe(
      "read it with `ugs get --id acme --name 'Acme Corp' --must-exist --field token`",
    );
  });

  it('a name that would not paste is written as visible escapes: the group is found by its id', () => {
    expect(recoveryCommand({ provided_id: 'acme', name: 'Acme\u202eCorp\u2028' }, makeDeps())).toBe(
      "ugs get --id acme --name 'Acme\\u202eCorp\\u2028' --must-exist --field token",
    );
  });

  it('rotate whose output fails, for such an id, is exit 5 with the JSON way', async () => {
    const error = await rotateWithFailingStdout(groupResult({ provided_id: 'acme\u0085' }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    const hint = (error as OutcomeUnknownError).hint ?? '';
    expect(hint).toContain('"acme\\u0085"');
    expect(hint).not.toContain('ugs get --id');
    expect(hint).toContain('\'{"user_group_id":"acme\\u0085","name":"Acme"}\'');
  });
});
