/**
 * One event of the token history (`history.ndjson`, one JSON object per line): what reached the
 * service, by whom, and the tokens involved as fingerprints only. Types and small pure helpers;
 * the writer is log.ts, the reader read.ts (loaded only by the commands that read).
 */
import { lastFour as tokenTail } from '../text/redact.js';

/**
 * What a request came to. `stale`: a rotation refused because the token was not current.
 * `updated`: an update changed the group's data (its token stays). `deleted`: the group of
 * the token sent was removed (its token matches nothing any more).
 */
export type HistoryOutcome =
  | 'created'
  | 'found'
  | 'rotated'
  | 'updated'
  | 'deleted'
  | 'unknown'
  | 'failed'
  | 'stale';

export const HISTORY_OUTCOMES: readonly HistoryOutcome[] = [
  'created',
  'found',
  'rotated',
  'updated',
  'deleted',
  'unknown',
  'failed',
  'stale',
];

/** An event as written: never a whole token, only its last 4 characters and a keyed hash. */
export interface HistoryEvent {
  /** UTC, ISO 8601 with milliseconds. */
  time: string;
  /** The OS user who ran ugs. */
  user: string;
  host: string;
  profile: string;
  base_url: string;
  dialect: string;
  user_group_id: string | null;
  name: string | null;
  outcome: HistoryOutcome;
  /** The answer's `api_environment_tag` (rotation answers), when it carried one. */
  environment_tag?: string;
  /** The token sent (`current_token` of a rotation); null for a get. */
  sent_last4: string | null;
  sent_fingerprint: string | null;
  /** The token the service answered (the group's token, or the new one of a rotation). */
  token_last4: string | null;
  token_fingerprint: string | null;
}

/**
 * An event before it is written: the tokens are still whole, in memory only, and become
 * fingerprints (log.ts) under the key kept beside the history file.
 */
export interface HistoryEntry {
  time: Date;
  profile: string;
  baseUrl: string;
  dialect: string;
  userGroupId: string | null;
  name: string | null;
  outcome: HistoryOutcome;
  environmentTag?: string | undefined;
  sentToken?: string | null | undefined;
  token?: string | null | undefined;
}

/** redact.ts's last 4 characters of a token (none of a short one), as a field: null when none. */
export function lastFour(token: string | null | undefined): string | null {
  return token === null || token === undefined ? null : (tokenTail(token) ?? null);
}

/** A 12-hex-digit fingerprint, as the history writes them. */
export const FINGERPRINT_PATTERN = /^[0-9a-f]{12}$/;
