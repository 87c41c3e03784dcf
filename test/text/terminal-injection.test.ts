/**
 * Terminal injection: text the server controls (ids, names, tokens, field names and values) must
 * reach the terminal as visible escapes, never as ESC/CSI/OSC sequences or C1 controls, in every
 * output mode this CLI draws itself (headline, table, --field) and in the error messages that
 * quote a value.
 */
import { describe, expect, it } from 'vitest';
import { runLogout } from '../../src/commands/logout.js';
import { ApiError, UsageError } from '../../src/errors.js';
import { main } from '../../src/main.js';
import { parseGetFlags, runGet } from '../../src/operations/get-user/command.js';
import { runRotate } from '../../src/operations/rotate-token/command.js';
import type { OutputFormat } from '../../src/output/results.js';
import { FakeService, groupResult, makeDeps, makeIO, rejection } from '../kit/fakes.js';

/** Each attack class: a raw 7-bit sequence, and the 8-bit C1 forms some terminals obey. */
const ATTACKS: Record<string, string> = {
  'CSI clear screen': '\u001b[2J\u001b[H',
  'OSC set title': '\u001b]0;pwned\u0007',
  'OSC 8 hyperlink': '\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\',
  'C1 CSI (U+009B)': '\u009b31m',
  'C1 OSC (U+009D)': '\u009d0;pwned\u009c',
  'DEL and BEL': '\u007f\u0007',
  'carriage return overwrite': 'ok\rFAKE',
  'newline forging a line': 'x\nerror: forged',
};

/** Any C0 control except the newline that ends a line, DEL, or C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

/** Our own colour codes (FORCE_COLOR is on) are not the server's: only they are removed. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching our colour codes
const OWN_COLOUR = /\u001b\[[0-9;]*m/g;
const withoutOwnColour = (text: string) => text.replace(OWN_COLOUR, '');

const FIELDS = ['provided_id', 'name', 'token', 'environment', 'api_environment_tag', 'extra'];

const FORMATS: OutputFormat[] = [
  { kind: 'table' },
  ...FIELDS.map((name): OutputFormat => ({ kind: 'field', name })),
];

function hostileGroup(attack: string): Record<string, unknown> {
  return Object.fromEntries(FIELDS.map((field) => [field, `${field}${attack}`]));
}

/**
 * Each line printed, with its final newline removed: none may hold a raw control. Into a pipe
 * the table is `key<TAB>value` lines: the first TAB of a line is ugs's own separator.
 */
function expectClean(text: string, context: string): void {
  for (const line of text.split('\n')) {
    expect(line.replace('\t', ''), context).not.toMatch(RAW_CONTROL);
  }
}

/** `get` of group `acme` (the id every answer below is for), through the command's run. */
function getAcme(name: string, format: OutputFormat, deps: Parameters<typeof runGet>[1]) {
  return runGet({ id: 'acme', name, mapping: undefined, properties: undefined, format }, deps);
}

type Failure = Error & { hint?: string };

describe('get: server text in headline, table and --field', () => {
  for (const [label, attack] of Object.entries(ATTACKS)) {
    for (const created of [true, false]) {
      it.each(FORMATS)(`${label} (new_user_group ${created}) in %j`, async (format) => {
        const io = makeIO({ env: { FORCE_COLOR: '1' } });
        // The answer is for the group asked for (a hostile provided_id names another group,
        // which is refused: that case is below).
        const service = new FakeService({
          get: () =>
            groupResult(
              { ...hostileGroup(attack), provided_id: 'acme' },
              { new_user_group: created },
            ),
        });
        await getAcme('Acme', format, makeDeps({ io, service }));
        const context = JSON.stringify({ stdout: io.stdout.text, stderr: io.stderr.text });
        expectClean(withoutOwnColour(io.stdout.text), context);
        expectClean(withoutOwnColour(io.stderr.text), context);
        expect(io.stdout.text.length, context).toBeGreaterThan(0);
      });
    }
  }

  it.each(Object.entries(ATTACKS))(
    '%s in a provided_id that names another group: exit 1, the id escaped in the message',
    async (_label, attack) => {
      const io = makeIO();
      const service = new FakeService({ get: () => groupResult(hostileGroup(attack)) });
      const error = (await rejection(
        getAcme('Acme', { kind: 'table' }, makeDeps({ io, service })),
      )) as Failure;
      expect(error).toBeInstanceOf(ApiError);
      expect(`${error.message}\n${error.hint}`).not.toMatch(RAW_CONTROL);
      expect(error.message).toContain('the service answered for user group "provided_id');
      expect(io.stdout.text).toBe('');
    },
  );

  it('a key chosen by the server is escaped in the table too', async () => {
    const io = makeIO();
    const service = new FakeService({
      get: () => groupResult({ '\u001b]0;title\u0007key': 'v', '\u009bkey2': 'w' }),
    });
    await getAcme('A', { kind: 'table' }, makeDeps({ io, service }));
    expectClean(io.stdout.text, io.stdout.text);
    expect(io.stdout.text).toContain('\\u001b]0;title\\u0007key');
    expect(io.stdout.text).toContain('\\u009bkey2');
  });

  it('--field of a missing field quotes the asked name and the server keys escaped', async () => {
    const io = makeIO();
    const service = new FakeService({ get: () => groupResult({ '\u009b2J': 'v' }) });
    const error = (await rejection(
      getAcme('A', { kind: 'field', name: 'nope\u009b' }, makeDeps({ io, service })),
    )) as Failure;
    expect(error).toBeInstanceOf(ApiError);
    expect(`${error.message}\n${error.hint}`).not.toMatch(RAW_CONTROL);
    expect(error.message).toContain('nope\\u009b');
  });
});

describe('rotate: server text in headline, table and --field', () => {
  for (const [label, attack] of Object.entries(ATTACKS)) {
    it.each(FORMATS)(`${label} in %j`, async (format) => {
      const io = makeIO();
      const service = new FakeService({ rotate: () => groupResult(hostileGroup(attack)) });
      await runRotate(
        { currentToken: 'old-token-1234', currentTokenFromStdin: false, yes: true, format },
        makeDeps({ io, service }),
      );
      const context = JSON.stringify({ stdout: io.stdout.text, stderr: io.stderr.text });
      expectClean(io.stdout.text, context);
      expectClean(io.stderr.text, context);
    });
  }

  it('the new token in the headline is escaped, not obeyed', async () => {
    const io = makeIO({ stdoutIsTTY: true, env: { NO_COLOR: '1' } });
    const service = new FakeService({
      rotate: () => groupResult({ token: 'tok\u001b]52;c;ZXZpbA==\u0007' }),
    });
    await runRotate(
      {
        currentToken: 'old-token-1234',
        currentTokenFromStdin: false,
        yes: true,
        format: { kind: 'table' },
      },
      makeDeps({ io, service }),
    );
    expect(io.stdout.text).toContain('New token: tok\\u001b]52;c;ZXZpbA==\\u0007');
  });
});

describe('values the user or a file controls, quoted in messages', () => {
  it('a profile name with ESC and C1 is escaped by logout', async () => {
    const io = makeIO();
    await runLogout(
      makeDeps({ io, settings: { profile: 'p\u001b]0;x\u0007\u009b' }, profiles: {} }),
    );
    expectClean(io.stderr.text, io.stderr.text);
    expect(io.stderr.text).toContain('\\u001b]0;x\\u0007\\u009b');
  });

  it('a JSON file path with controls is escaped in its error', async () => {
    const error = await parseGetFlags(
      {
        id: 'a',
        name: 'A',
        mapping: [],
        property: [],
        properties: '@/nonexistent/\u001b[2J\u009b',
      },
      makeDeps(),
    ).then(
      () => new Error('no error'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).not.toMatch(RAW_CONTROL);
    expect(error.message).toContain('\\u001b[2J\\u009b');
  });
});

describe('more quoted values', () => {
  it('invalid JSON holding an ESC: the parser quotes the text, escaped', async () => {
    const error = await parseGetFlags(
      { id: 'a', name: 'A', mapping: [], property: [], properties: '{"a":\u001b[2J\u009b}' },
      makeDeps(),
    ).then(
      () => new Error('no error'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toMatch(/not valid JSON/);
    expect(error.message).not.toMatch(RAW_CONTROL);
  });

  it("an unknown option with an ESC in it: commander's own error is escaped", async () => {
    const io = makeIO();
    const code = await main(['get', '--\u001b]0;x\u0007', '--id', 'a'], io, {
      platform: 'linux',
      homedir: '/nonexistent',
      nodeVersion: 'v20.0.0',
      uid: process.getuid?.(),
      waitForShutdown: () => new Promise<string>(() => {}),
    });
    expect(code).toBe(2);
    expect(io.stderr.text).toMatch(/unknown option/);
    expectClean(io.stderr.text, io.stderr.text);
  });

  it('a server value nested 20,000 deep is shown whole, not a crash', async () => {
    const io = makeIO();
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const service = new FakeService({ get: () => groupResult({ properties: deep }) });
    await getAcme('A', { kind: 'table' }, makeDeps({ io, service }));
    // Printed without recursion, every level of it: nothing read from the wire has a depth limit.
    expect(io.stdout.text).toContain(`${'['.repeat(20_000)}1${']'.repeat(20_000)}`);
  });

  it('a successful rotate whose provided_id nests 100,000 deep still prints its new token', async () => {
    const io = makeIO({ stdoutIsTTY: true, env: { NO_COLOR: '1' } });
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const service = new FakeService({ rotate: () => groupResult({ provided_id: deep }) });
    await runRotate(
      {
        currentToken: 'old-token-1234',
        currentTokenFromStdin: false,
        yes: true,
        format: { kind: 'table' },
      },
      makeDeps({ io, service }),
    );
    // At 80 columns the 200,000-character id wraps onto lines of its own.
    expect(io.stdout.text).toMatch(/^Rotated token of user group\s+\[\[\[/);
    expect(io.stdout.text).toContain('New token:');
  });
});
