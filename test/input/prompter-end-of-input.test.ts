/**
 * The prompt adapter with fake streams: end of input while a prompt waits is a cancellation
 * (exit 130) that says so, not a prompt left pending forever (which let Node exit 0).
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import { InquirerPrompter } from '../../src/input/prompter.js';
import { Capture, terminalIO } from '../kit/fakes.js';

function prompterWith(stdin: PassThrough) {
  const io = { ...terminalIO(), stdin, stderr: new Capture() };
  return new InquirerPrompter(io);
}

const END_OF_INPUT = /end of input/;

describe('end of input at a prompt', () => {
  it.each([
    ['input', (p: InquirerPrompter) => p.input('User group id:')],
    ['password', (p: InquirerPrompter) => p.password('API token:')],
    ['confirm', (p: InquirerPrompter) => p.confirm('Rotate?')],
  ] as const)('%s: stdin ends → CancelledError naming end of input', async (_kind, ask) => {
    const stdin = new PassThrough();
    const answer = ask(prompterWith(stdin));
    setTimeout(() => stdin.end(), 20);
    const error = await answer.then(
      () => new Error('the prompt resolved'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as CancelledError).message).toMatch(END_OF_INPUT);
    expect((error as CancelledError).exitCode).toBe(130);
  });

  it('Ctrl+D on an empty line (readline closes and pauses stdin) cancels', async () => {
    const stdin = new PassThrough();
    const answer = prompterWith(stdin).input('User group id:');
    setTimeout(() => stdin.write('\u0004'), 20);
    await expect(answer).rejects.toThrow(END_OF_INPUT);
  });

  it('a normal answer still resolves, and the next prompt still works', async () => {
    const stdin = new PassThrough();
    const prompter = prompterWith(stdin);
    const first = prompter.input('First:');
    setTimeout(() => stdin.write('one\r'), 20);
    expect(await first).toBe('one');
    const second = prompter.input('Second:');
    setTimeout(() => stdin.write('two\r'), 20);
    expect(await second).toBe('two');
  });
});
