/**
 * Small additions to test/helpers/fakes.ts for the unit tests: a prompter that also records which
 * kind of prompt was shown (masked or not), its default, and its validator, and canned service
 * answers.
 */
import type { Deps } from '../../src/deps.js';
import { ApiError } from '../../src/errors.js';
import type { Prompter, Validate } from '../../src/prompter.js';
import type { GetUserRequest, ServiceResult } from '../../src/service.js';
import { FakeService, groupResult } from '../helpers/fakes.js';

export type PromptKind = 'input' | 'password' | 'confirm';

export interface PromptCall {
  kind: PromptKind;
  message: string;
  default: string | boolean | undefined;
  validate: Validate | undefined;
}

type Answer = string | boolean | Error;

/**
 * Like FakePrompter (answers in order, matched by a part of the message, an unexpected prompt is
 * an error), but each expected answer also says which kind of prompt must ask it.
 */
export class RecordingPrompter implements Prompter {
  readonly calls: PromptCall[] = [];
  constructor(private readonly script: [PromptKind, string, Answer][] = []) {}

  async input(message: string, options: { default?: string; validate?: Validate } = {}) {
    return this.text('input', message, options);
  }
  async password(message: string, options: { validate?: Validate } = {}) {
    return this.text('password', message, options);
  }
  async confirm(message: string, options: { default?: boolean } = {}): Promise<boolean> {
    const answer = this.next('confirm', message, options.default, undefined);
    if (typeof answer !== 'boolean') throw new Error(`prompt "${message}" expected yes/no`);
    return answer;
  }
  /** Every scripted answer was asked for. */
  assertDone(): void {
    if (this.script.length > 0) {
      throw new Error(`prompts never asked: ${this.script.map(([, m]) => m).join(', ')}`);
    }
  }

  private async text(
    kind: PromptKind,
    message: string,
    options: { default?: string; validate?: Validate },
  ): Promise<string> {
    const answer = this.next(kind, message, options.default, options.validate);
    if (typeof answer !== 'string') throw new Error(`prompt "${message}" expected text`);
    const valid = options.validate?.(answer) ?? true;
    if (valid !== true)
      throw new Error(`answer "${answer}" to "${message}" was rejected: ${valid}`);
    return answer;
  }

  private next(
    kind: PromptKind,
    message: string,
    defaultValue: string | boolean | undefined,
    validate: Validate | undefined,
  ): Answer {
    this.calls.push({ kind, message, default: defaultValue, validate });
    const first = this.script[0];
    if (first === undefined || first[0] !== kind || !message.includes(first[1])) {
      throw new Error(`unexpected ${kind} prompt: "${message}"`);
    }
    this.script.shift();
    if (first[2] instanceof Error) throw first[2];
    return first[2];
  }
}

/** Swap the prompter of a deps object for a recording one. */
export function withPrompter<T extends Deps>(deps: T, prompter: Prompter): T {
  return { ...deps, prompter };
}

/** A service whose Get User echoes the request, as the real one does. */
/** `created: null` leaves `new_user_group` out of the answer. */
export function echoService(created: boolean | null = true): FakeService {
  return new FakeService({
    get: (request: GetUserRequest): ServiceResult =>
      groupResult(
        {
          name: request.name,
          provided_id: request.user_group_id,
          properties: request.properties ?? null,
        },
        created === null ? {} : { new_user_group: created },
      ),
  });
}

export const NEW_TOKEN = 'ug-token-NEW-9f8e7d6c5b4a';

export function rotateService(): FakeService {
  return new FakeService({
    rotate: () =>
      groupResult({ token: NEW_TOKEN, environment: 'Customer' }, { success: 1 }) as ServiceResult,
  });
}

/** A service that fails every call with `error`. */
export function failingService(error: Error): FakeService {
  return new FakeService({
    get: () => {
      throw error;
    },
    rotate: () => {
      throw error;
    },
  });
}

export function apiErrorWithBody(body: Record<string, unknown>, status = 400): ApiError {
  return new ApiError(`the service answered HTTP ${status}: ${String(body.error)}`, {
    status,
    body,
  });
}

/** Rejects with what `promise` rejects with, or fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}
