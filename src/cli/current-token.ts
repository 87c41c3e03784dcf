/**
 * The user group token a command acts on (`rotate`, `delete`): from `--current-token <token>`,
 * from stdin with `--current-token-stdin` or `--current-token -`, or from a masked prompt. One
 * place, so that every command that takes a token takes it the same way.
 */
import type { Deps } from '../context/factory.js';
import { UsageError } from '../errors.js';
import { readStdin } from '../platform/io.js';

export interface CurrentTokenFlags {
  currentToken?: string;
  currentTokenStdin?: boolean;
}

/** Where the token comes from, once the flags are checked. */
export interface CurrentTokenSource {
  /** From `--current-token`, trimmed; undefined when read from stdin or prompted for. */
  currentToken: string | undefined;
  currentTokenFromStdin: boolean;
}

/**
 * Checks the token flags. `-` is stdin, as for --from, --mapping-json and whois: no token is
 * `-`, and sending the dash would only bring back a 404 that blames the token.
 */
export function parseCurrentTokenFlags(given: CurrentTokenFlags): CurrentTokenSource {
  const fromStdin = given.currentTokenStdin === true || given.currentToken === '-';
  const token = given.currentToken === '-' ? undefined : given.currentToken;
  if (token !== undefined && fromStdin) {
    throw new UsageError('use either --current-token or --current-token-stdin, not both');
  }
  if (token !== undefined && token.trim() === '') {
    throw new UsageError('--current-token cannot be empty');
  }
  return { currentToken: token?.trim(), currentTokenFromStdin: fromStdin };
}

/** The token itself: the flag's, stdin's (trimmed, not empty), or typed at a masked prompt. */
export async function readCurrentToken(
  source: CurrentTokenSource,
  deps: Pick<Deps, 'io' | 'prompter'>,
  question: string,
): Promise<string> {
  if (source.currentToken !== undefined) return source.currentToken;
  if (source.currentTokenFromStdin) {
    const token = (await readStdin(deps.io, '--current-token-stdin')).trim();
    if (token === '') throw new UsageError('--current-token-stdin: stdin was empty');
    return token;
  }
  const token = await deps.prompter.password(question, {
    validate: (value) => value.trim() !== '' || 'the token is required',
  });
  return token.trim();
}
