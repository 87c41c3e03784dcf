/**
 * The one place that knows the prompt library. Commands ask a `Prompter`; tests answer with a
 * fake. Prompts draw on stderr so that stdout stays clean for `--json` and `--field`.
 */
import type { Readable, Writable } from 'node:stream';
import { CancelledError } from '../errors.js';
import type { IO } from '../platform/io.js';

export type Validate = (value: string) => string | true;

export interface Prompter {
  input(message: string, options?: { default?: string; validate?: Validate }): Promise<string>;
  /** Masked input; the value never echoes. */
  password(message: string, options?: { validate?: Validate }): Promise<string>;
  confirm(message: string, options?: { default?: boolean }): Promise<boolean>;
}

export class InquirerPrompter implements Prompter {
  constructor(private readonly io: IO) {}

  async input(
    message: string,
    options: { default?: string; validate?: Validate } = {},
  ): Promise<string> {
    const { input } = await import('../vendor/prompts.js');
    return this.ask((context) => input({ message, ...options }, context));
  }

  async password(message: string, options: { validate?: Validate } = {}): Promise<string> {
    const { password } = await import('../vendor/prompts.js');
    return this.ask((context) => password({ message, mask: '*', ...options }, context));
  }

  async confirm(message: string, options: { default?: boolean } = {}): Promise<boolean> {
    const { confirm } = await import('../vendor/prompts.js');
    return this.ask((context) => confirm({ message, ...options }, context));
  }

  /**
   * End of input (Ctrl+D on an empty line, a closed terminal) makes readline close its interface,
   * which pauses stdin; the prompt library only clears its hooks then and never settles, so the
   * process drained its event loop and exited 0 with nothing done. Watching stdin for that pause
   * (or its end) turns it into a cancellation. When the prompt settles normally its own cleanup
   * removes the abort listener before readline closes, so a late pause changes nothing.
   */
  private async ask<T>(
    prompt: (context: { input: Readable; output: Writable; signal: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    const { stdin } = this.io;
    const controller = new AbortController();
    const endOfInput = () => controller.abort(END_OF_INPUT);
    stdin.once('pause', endOfInput);
    stdin.once('end', endOfInput);
    stdin.once('close', endOfInput);
    try {
      return await prompt({ input: stdin, output: this.io.stderr, signal: controller.signal });
    } catch (error) {
      // Ctrl+C rejects with ExitPromptError and then closes readline, which pauses stdin and so
      // aborts too: only an abort that was the rejection's cause is end of input.
      if (
        error instanceof Error &&
        error.name === 'AbortPromptError' &&
        controller.signal.reason === END_OF_INPUT
      ) {
        throw new CancelledError(
          'cancelled: end of input (Ctrl+D) at the prompt; nothing was saved or sent',
        );
      }
      return cancelled(error);
    } finally {
      stdin.off('pause', endOfInput);
      stdin.off('end', endOfInput);
      stdin.off('close', endOfInput);
    }
  }
}

const END_OF_INPUT = Symbol('end of input');

/** Ctrl+C at a prompt rejects with ExitPromptError; the user wanted out, not a stack trace. */
function cancelled(error: unknown): never {
  if (
    error instanceof Error &&
    (error.name === 'ExitPromptError' || error.name === 'AbortPromptError')
  ) {
    throw new CancelledError('cancelled (Ctrl+C) at the prompt; nothing was saved or sent');
  }
  throw error;
}
