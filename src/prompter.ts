/**
 * The one place that knows the prompt library. Commands ask a `Prompter`; tests answer with a
 * fake. Prompts draw on stderr so that stdout stays clean for `--json` and `--field`.
 */
import { CancelledError } from './errors.js';
import type { IO } from './io.js';

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
    const { input } = await import('./vendor/prompts.js');
    return cancelable(input({ message, ...options }, this.context()));
  }

  async password(message: string, options: { validate?: Validate } = {}): Promise<string> {
    const { password } = await import('./vendor/prompts.js');
    return cancelable(password({ message, mask: '*', ...options }, this.context()));
  }

  async confirm(message: string, options: { default?: boolean } = {}): Promise<boolean> {
    const { confirm } = await import('./vendor/prompts.js');
    return cancelable(confirm({ message, ...options }, this.context()));
  }

  private context() {
    return { input: this.io.stdin, output: this.io.stderr };
  }
}

/** Ctrl+C at a prompt rejects with ExitPromptError; the user wanted out, not a stack trace. */
async function cancelable<T>(prompt: Promise<T>): Promise<T> {
  try {
    return await prompt;
  } catch (error) {
    if (
      error instanceof Error &&
      (error.name === 'ExitPromptError' || error.name === 'AbortPromptError')
    ) {
      throw new CancelledError();
    }
    throw error;
  }
}
