import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { EmulatorSpecError, EmulatorStartError } from './errors.js';

export type Environment = 'Customer' | 'Testing';

const ENVIRONMENTS: readonly Environment[] = ['Customer', 'Testing'];

export interface ApiToken {
  token: string;
  environment: Environment;
}

export function isEnvironment(value: unknown): value is Environment {
  return value === 'Customer' || value === 'Testing';
}

export function randomToken(): string {
  return randomBytes(32).toString('hex');
}

// Whitespace or control characters could never round-trip through "Authorization: Token <t>".
const BAD_TOKEN_CHAR = /[\s\p{Cc}]/u;

/** Parses "<token>:<Customer|Testing>"; splits on the last colon so tokens may contain colons. */
export function parseApiTokenSpec(text: string): ApiToken {
  const at = text.lastIndexOf(':');
  if (at < 0) {
    throw new EmulatorSpecError(
      'invalid API token spec: expected <token>:<Customer|Testing>, e.g. "s3cret:Testing"',
    );
  }
  const token = text.slice(0, at);
  const environment = text.slice(at + 1);
  if (token === '') {
    throw new EmulatorSpecError('invalid API token spec: the token before the last ":" is empty');
  }
  if (BAD_TOKEN_CHAR.test(token)) {
    throw new EmulatorSpecError(
      'invalid API token spec: the token must not contain whitespace or control characters',
    );
  }
  if (!isEnvironment(environment)) {
    throw new EmulatorSpecError(
      `invalid API token spec: environment "${environment}" must be Customer or Testing`,
    );
  }
  return { token, environment };
}

/** Uses the given tokens, or makes one per environment so a bare emulator is usable at once. */
export function resolveApiTokens(given: readonly ApiToken[] | undefined): ApiToken[] {
  if (given === undefined || given.length === 0) {
    return ENVIRONMENTS.map((environment) => ({ token: randomToken(), environment }));
  }
  const seen = new Set<string>();
  for (const { token, environment } of given) {
    if (token === '' || BAD_TOKEN_CHAR.test(token)) {
      throw new EmulatorStartError(
        'an API token is empty or contains whitespace or control characters',
      );
    }
    if (!isEnvironment(environment)) {
      throw new EmulatorStartError(
        `API token environment "${String(environment)}" must be Customer or Testing`,
      );
    }
    // One token in two environments would make the caller's environment ambiguous.
    if (seen.has(token)) throw new EmulatorStartError('the same API token is given twice');
    seen.add(token);
  }
  return given.map(({ token, environment }) => ({ token, environment }));
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * Finds the environment of the API token in an Authorization header. Comparing fixed-length
 * hashes with timingSafeEqual, and checking every token without stopping early, keeps the
 * timing independent of how much of a guess was right.
 */
export class Authenticator {
  private readonly known: { hash: Buffer; environment: Environment }[];

  constructor(tokens: readonly ApiToken[]) {
    this.known = tokens.map(({ token, environment }) => ({ hash: digest(token), environment }));
  }

  /**
   * The caller's environment, or the reason DRF's TokenAuthentication gives for refusing the
   * header (its own words, so a client sees locally what the real service answers). A header
   * with another scheme counts as no credentials at all, as in DRF.
   */
  authenticate(authorization: string | undefined): Environment | { refused: string } {
    const parts = (authorization ?? '').trim().split(/\s+/);
    if (parts[0]?.toLowerCase() !== 'token') {
      return { refused: 'Authentication credentials were not provided.' };
    }
    if (parts.length === 1) return { refused: 'Invalid token header. No credentials provided.' };
    if (parts.length > 2) {
      return { refused: 'Invalid token header. Token string should not contain spaces.' };
    }
    const hash = digest(parts[1] ?? '');
    let found: Environment | undefined;
    for (const entry of this.known) {
      if (timingSafeEqual(entry.hash, hash)) found = entry.environment;
    }
    return found ?? { refused: 'Invalid token.' };
  }
}
