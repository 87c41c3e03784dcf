/**
 * The user group token a command acts on (`rotate`, `delete`): from `--current-token <token>`,
 * from stdin with `--current-token-stdin` or `--current-token -`, or from a masked prompt. One
 * place, so that every command that takes a token takes it the same way.
 */
import type { Deps } from '../context/factory.js';
import { UsageError } from '../errors.js';
import { printMessage } from '../output/messages.js';
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

/** What a command that acts on one group's token says in `checkTokenSource`'s three checks. */
export interface TokenCommandWords {
  /** Without a terminal and without `--yes`: the error and what to do. */
  yesRequired: { message: string; hint: string };
  /** Without a terminal, no token and no id: the error and where the token may come from. */
  missing: { message: string; hint: string };
  /** At a terminal, a token typed on the command line: the warning. */
  tokenInArgv: string;
}

/**
 * The checks before a command acts on one group's token (`rotate`, `delete`): the change cannot
 * be undone, so without a person to confirm it the caller must pass --yes; without a person to
 * prompt, the token (or an id to read it by) must be given; and at a terminal a token typed on
 * the command line is warned about once, as it stays in the shell's history file and shows in
 * process lists, where the masked prompt or stdin is as easy (a warning: `-q` silences it).
 */
export async function checkTokenSource(
  given: CurrentTokenSource & { yes: boolean; byId: boolean },
  interactive: boolean,
  deps: Pick<Deps, 'output'>,
  words: TokenCommandWords,
): Promise<void> {
  if (!interactive && !given.yes) {
    throw new UsageError(words.yesRequired.message, { hint: words.yesRequired.hint });
  }
  const tokenGiven = given.currentToken !== undefined || given.currentTokenFromStdin;
  if (!interactive && !tokenGiven && !given.byId) {
    throw new UsageError(words.missing.message, { hint: words.missing.hint });
  }
  if (interactive && given.currentToken !== undefined) {
    await printMessage(deps.output, words.tokenInArgv, 'warning');
  }
}
