/**
 * The id and name prompts check each answer as it is typed (the rule of the
 * flags), and `--current-token` given at a terminal warns once that it lands in shell history.
 * The real terminal is in test/input/prompt-checks-terminal.process.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { type GetOptions, runGet } from '../../src/operations/get-user/command.js';
import { parseRotateFlags, runRotate } from '../../src/operations/rotate-token/command.js';
import { echoService, makeDeps, makeIO, rotateService, terminalIO } from '../kit/fakes.js';

const NO_FLAGS: GetOptions = {
  id: undefined,
  name: undefined,
  mapping: undefined,
  properties: undefined,
  format: { kind: 'table' },
};

describe('the id and name prompts', () => {
  const validators = async () => {
    const deps = makeDeps({
      io: terminalIO(),
      service: echoService(true),
      prompts: [
        ['User group id', 'acme'],
        ['User group name', 'Acme'],
        ['Data source mapping', ''],
        ['Property', ''],
      ],
    });
    await runGet(NO_FLAGS, deps);
    const [id, name] = deps.prompter.calls.map((call) => call.validate);
    if (id === undefined || name === undefined) throw new Error('the prompts have no validator');
    return { id, name };
  };

  it.each([
    [' acme', /the id has leading or trailing whitespace/],
    ['acme ', /the id has leading or trailing whitespace/],
    ['ac\u0007me', /the id contains a control character/],
    ['ac\u200bme', /the id contains U\+200B/],
    ['ac\ufffdme', /the id contains U\+FFFD/],
    ['   ', /an id is required/],
  ])('the id prompt refuses %j as it is typed', async (typed, message) => {
    const { id } = await validators();
    expect(id(typed)).toMatch(message);
  });

  it.each([
    ['Acme ', /the name has leading or trailing whitespace/],
    ['Ac\nme', /the name contains a control character/],
    ['', /a name is required/],
  ])('the name prompt refuses %j as it is typed', async (typed, message) => {
    const { name } = await validators();
    expect(name(typed)).toMatch(message);
  });

  it('takes what the flags take: an id with accents, a name with inner spaces', async () => {
    const { id, name } = await validators();
    expect(id('müller-gmbh')).toBe(true);
    expect(name('Müller GmbH & Co. KG')).toBe(true);
  });
});

describe('--current-token at a terminal', () => {
  const rotate = async (
    flags: Parameters<typeof parseRotateFlags>[0],
    io = terminalIO(),
    quiet = false,
  ) => {
    const deps = makeDeps({ io, service: rotateService(), settings: { quiet } });
    await runRotate(parseRotateFlags({ yes: true, ...flags }), deps);
    return deps.io.stderr.text;
  };
  const WARNING = /shell history/g;

  it('prints one warning naming the prompt and --current-token-stdin', async () => {
    const stderr = await rotate({ currentToken: 'ug-old-token-1234' });
    expect(stderr.match(WARNING)).toHaveLength(1);
    // Fitted to the terminal's width: read as one line.
    expect(stderr.replace(/\s+/g, ' ')).toMatch(
      /warning: --current-token puts the token in your shell history .*masked prompt.*--current-token-stdin/,
    );
  });

  it.each([
    ['without a terminal', { currentToken: 'ug-old-token-1234' }, makeIO()],
    ['with CI set', { currentToken: 'ug-old-token-1234' }, terminalIO({ env: { CI: 'true' } })],
  ])('no warning %s', async (_label, flags, io) => {
    expect(await rotate(flags, io)).not.toMatch(WARNING);
  });

  it('no warning for a token typed at the prompt, nor with -q', async () => {
    const io = terminalIO();
    const deps = makeDeps({
      io,
      service: rotateService(),
      prompts: [['password', 'Current user group token', 'ug-old-token-1234']],
    });
    await runRotate(parseRotateFlags({ yes: true }), deps);
    deps.prompter.assertDone();
    expect(io.stderr.text).not.toMatch(WARNING);
    expect(await rotate({ currentToken: 'ug-old-token-1234' }, terminalIO(), true)).toBe('');
  });
});
