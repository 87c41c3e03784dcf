/**
 * What a call is aimed at (base URL, API token, path, profile) and how to tell a user to log in
 * to that profile. Below both credentials.ts, which works the target out, and service.ts, which
 * sends to it, so neither imports the other.
 */

import { shellWord } from '../input/parse.js';
import type { Dialect } from './dialect.js';

/** Where the API token of a call came from: named in hints after a 401/403. */
export type TokenSource = 'profile' | 'env UGS_API_TOKEN';

/** The endpoint both operations use when neither a flag, the environment nor the profile says. */
export const USER_PATH = '/api/user';

export interface Target {
  baseUrl: URL;
  apiToken: string;
  /** The endpoint's path, joined to the base URL (its path prefix kept); USER_PATH by default. */
  apiPath?: string;
  /** The profile in use, for `ugs login --profile <name>` hints. */
  profile?: string;
  tokenSource?: TokenSource;
  /** The service's wire format; absent: `interface`. */
  dialect?: Dialect;
  /** The CA certificate file that verifies the service (`--ca-file`, `UGS_CA_FILE`, the profile). */
  caFile?: string;
}

/** `ugs login` for the default profile, `ugs login --profile <name>` (shell-quoted) otherwise. */
export function loginCommandFor(profile: string, verb: 'login' | 'logout' = 'login'): string {
  if (profile === 'default') return `ugs ${verb}`;
  return `ugs ${verb} --profile ${shellWord(profile)}`;
}
