import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { EmulatorSpecError, EmulatorStartError } from './errors.js';

export type Environment = 'Customer' | 'Testing';

const ENVIRONMENTS: readonly Environment[] = ['Customer', 'Testing'];

export interface ApiToken {
  token: string;
  environment: Environment;
  /**
   * A read-only token (`--api-token KEY:ENV:ro`), as the vendor's service has them ("An API
   * token is read-write or read-only"): refused every call that may change data. Absent: it
   * reads and writes, as every token did before, so tokens saved in a data file stay as they were.
   */
  readOnly?: boolean;
}

/** Who an accepted API token is: its environment, and whether it may only read. */
export interface Caller {
  environment: Environment;
  readOnly: boolean;
}

export function isEnvironment(value: unknown): value is Environment {
  return value === 'Customer' || value === 'Testing';
}

export function randomToken(): string {
  return randomBytes(32).toString('hex');
}

// Whitespace or control characters could never round-trip through "Authorization: Token <t>".
const BAD_TOKEN_CHAR = /[\s\p{Cc}]/u;

/**
 * Parses "<token>:<Customer|Testing>[:ro|:rw]" (`ro`: read-only; `rw`, or nothing: read-write).
 * Split from the end so tokens may contain colons: the last part is the environment, or, when it
 * is not one but the part before it is, the access. A token spec never appears in a message.
 */
export function parseApiTokenSpec(text: string): ApiToken {
  let rest = text;
  let access: string | undefined;
  const last = rest.slice(rest.lastIndexOf(':') + 1);
  if (rest.includes(':') && !isEnvironment(last)) {
    const head = rest.slice(0, rest.lastIndexOf(':'));
    if (head.includes(':') && isEnvironment(head.slice(head.lastIndexOf(':') + 1))) {
      access = last;
      rest = head;
    }
  }
  if (access !== undefined && access !== 'ro' && access !== 'rw') {
    throw new EmulatorSpecError(
      `invalid API token spec: access "${access}" must be ro (read-only) or rw (read-write)`,
    );
  }
  const at = rest.lastIndexOf(':');
  if (at < 0) {
    throw new EmulatorSpecError(
      'invalid API token spec: expected <token>:<Customer|Testing>[:ro|:rw], e.g. "s3cret:Testing"',
    );
  }
  const token = rest.slice(0, at);
  const environment = rest.slice(at + 1);
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
  return { token, environment, ...(access === 'ro' && { readOnly: true }) };
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
  return given.map(({ token, environment, readOnly }) => ({
    token,
    environment,
    ...(readOnly === true && { readOnly }),
  }));
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
  private readonly known: { hash: Buffer; caller: Caller }[];

  constructor(tokens: readonly ApiToken[]) {
    this.known = tokens.map(({ token, environment, readOnly }) => ({
      hash: digest(token),
      caller: { environment, readOnly: readOnly === true },
    }));
  }

  /**
   * The caller (environment, read-only or not), or the reason DRF's TokenAuthentication gives for refusing the
   * header (its own words, so a client sees locally what the real service answers). A header
   * with another scheme counts as no credentials at all, as in DRF.
   */
  authenticate(authorization: string | undefined): Caller | { refused: string } {
    const parts = (authorization ?? '').trim().split(/\s+/);
    if (parts[0]?.toLowerCase() !== 'token') {
      return { refused: 'Authentication credentials were not provided.' };
    }
    if (parts.length === 1) return { refused: 'Invalid token header. No credentials provided.' };
    if (parts.length > 2) {
      return { refused: 'Invalid token header. Token string should not contain spaces.' };
    }
    const hash = digest(parts[1] ?? '');
    let found: Caller | undefined;
    for (const entry of this.known) {
      if (timingSafeEqual(entry.hash, hash)) found = entry.caller;
    }
    return found ?? { refused: 'Invalid token.' };
  }
}
