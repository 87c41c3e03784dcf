/**
 * Reading the token history: its events, filters, `whois` and the ids it knows (the typo guard).
 * The one entry of this chunk: `ugs history`, `ugs whois`, the typo question of `get` at a
 * terminal and bulk `get`'s validation load it with `import()`; a plain `get` never does.
 */
import { constants, promises as fsp } from 'node:fs';
import { errorCode } from '../guards.js';
import { FINGERPRINT_PATTERN, HISTORY_OUTCOMES, type HistoryEvent } from './event.js';
import {
  fingerprintWith,
  type HistoryLocation,
  keyPath,
  parseKey,
  readKeyFile,
  rotatedPath,
} from './log.js';

export { fingerprintWith } from './log.js';

const NO_FOLLOW = (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * Every readable event, oldest first: the rotated file, then the current one. A line that is not
 * an event (cut short by a crash, written by hand) is skipped.
 */
export async function readHistory(location: HistoryLocation): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  for (const path of [rotatedPath(location.path), location.path]) {
    const text = await readIfExists(path);
    if (text === undefined) continue;
    for (const line of text.split('\n')) {
      const event = parseEvent(line);
      if (event !== undefined) events.push(event);
    }
  }
  return events;
}

async function readIfExists(path: string): Promise<string | undefined> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(path, constants.O_RDONLY | NO_FOLLOW);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile()) throw new Error(`${path} is not a regular file`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

function parseEvent(line: string): HistoryEvent | undefined {
  if (line.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const event = value as Record<string, unknown>;
  if (typeof event.time !== 'string' || Number.isNaN(Date.parse(event.time))) return undefined;
  if (!(HISTORY_OUTCOMES as readonly unknown[]).includes(event.outcome)) return undefined;
  const text = (field: string) => (typeof event[field] === 'string' ? event[field] : null);
  return {
    ...(event as unknown as HistoryEvent),
    user: text('user') ?? '?',
    host: text('host') ?? '?',
    profile: text('profile') ?? '?',
    base_url: text('base_url') ?? '?',
    user_group_id: text('user_group_id'),
    name: text('name'),
    sent_last4: text('sent_last4'),
    sent_fingerprint: text('sent_fingerprint'),
    token_last4: text('token_last4'),
    token_fingerprint: text('token_fingerprint'),
  };
}

/** The history's key, or undefined when nothing was ever written there. */
export async function readKey(location: HistoryLocation): Promise<Buffer | undefined> {
  const path = keyPath(location.path);
  const text = await readKeyFile(path);
  return text === undefined ? undefined : parseKey(text, path);
}

/** Removes the history, its rotated file and their lock leftovers; the key stays. */
export async function clearHistory(location: HistoryLocation): Promise<string[]> {
  const removed: string[] = [];
  for (const path of [location.path, rotatedPath(location.path)]) {
    try {
      await fsp.unlink(path);
      removed.push(path);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
  }
  return removed;
}

export interface HistoryFilter {
  id?: string | undefined;
  profile?: string | undefined;
  /** Events at or after this time (ms since the epoch). */
  sinceMs?: number | undefined;
  limit?: number | undefined;
}

/** The events that pass the filter, newest first (the later line first at the same time). */
export function selectEvents(
  events: readonly HistoryEvent[],
  filter: HistoryFilter,
): HistoryEvent[] {
  const selected: HistoryEvent[] = [];
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as HistoryEvent;
    if (filter.id !== undefined && event.user_group_id !== filter.id) continue;
    if (filter.profile !== undefined && event.profile !== filter.profile) continue;
    if (filter.sinceMs !== undefined && Date.parse(event.time) < filter.sinceMs) continue;
    selected.push(event);
  }
  // Two processes may append out of time order: the times decide, the file order breaks ties.
  const order = new Map(selected.map((event, index) => [event, index]));
  selected.sort(
    (a, b) => Date.parse(b.time) - Date.parse(a.time) || (order.get(a) ?? 0) - (order.get(b) ?? 0),
  );
  return filter.limit === undefined ? selected : selected.slice(0, filter.limit);
}

// ---------------------------------------------------------------------------------------------
// whois

export type TokenQuery =
  | { kind: 'token'; token: string }
  | { kind: 'last4'; last4: string }
  | { kind: 'fingerprint'; fingerprint: string };

/**
 * What `whois` was given: `…a1b2`, `...a1b2` or 4 characters are the last 4; 12 lowercase hex
 * digits a fingerprint; anything else a whole token.
 */
export function parseTokenQuery(text: string): TokenQuery {
  const trimmed = text.trim();
  const tail = /^(?:…|\.\.\.|\*{4})(.{4})$/u.exec(trimmed);
  if (tail) return { kind: 'last4', last4: tail[1] as string };
  if ([...trimmed].length === 4) return { kind: 'last4', last4: trimmed };
  if (FINGERPRINT_PATTERN.test(trimmed)) return { kind: 'fingerprint', fingerprint: trimmed };
  return { kind: 'token', token: trimmed };
}

/** A group the token belonged to, and what became of the token there. */
export interface TokenGroup {
  base_url: string;
  profile: string;
  user_group_id: string;
  name: string | null;
  fingerprint: string;
  last4: string | null;
  first_seen: string;
  last_seen: string;
  /**
   * `current`: nothing in this history replaced it; `rotated`: a rotation replaced it;
   * `superseded`: the group answered another token later (rotated elsewhere); `stale`: a rotation
   * of it was refused because it was not current.
   */
  status: 'current' | 'rotated' | 'superseded' | 'stale';
  /** The event that ended it (rotated, superseded, stale). */
  ended_by?: HistoryEvent;
}

export interface WhoisAnswer {
  fingerprints: string[];
  groups: TokenGroup[];
  /** Every event that names one of the fingerprints, oldest first. */
  events: HistoryEvent[];
}

/** The fingerprints a query stands for in these events (a whole token: its one fingerprint). */
export async function queryFingerprints(
  query: TokenQuery,
  events: readonly HistoryEvent[],
  key: Buffer | undefined,
): Promise<string[]> {
  if (query.kind === 'token') {
    return key === undefined ? [] : [await fingerprintWith(key, query.token)];
  }
  if (query.kind === 'fingerprint') return [query.fingerprint];
  const found = new Set<string>();
  for (const event of events) {
    if (event.sent_last4 === query.last4 && event.sent_fingerprint !== null) {
      found.add(event.sent_fingerprint);
    }
    if (event.token_last4 === query.last4 && event.token_fingerprint !== null) {
      found.add(event.token_fingerprint);
    }
  }
  return [...found];
}

const groupKey = (event: Pick<HistoryEvent, 'base_url' | 'user_group_id'>) =>
  `${event.base_url}\u0000${event.user_group_id ?? ''}`;

/** Which groups held these fingerprints, and what became of each (events oldest first). */
export function whois(
  events: readonly HistoryEvent[],
  fingerprints: readonly string[],
): WhoisAnswer {
  const wanted = new Set(fingerprints);
  const mentions = events.filter(
    (event) =>
      (event.sent_fingerprint !== null && wanted.has(event.sent_fingerprint)) ||
      (event.token_fingerprint !== null && wanted.has(event.token_fingerprint)),
  );
  const groups = new Map<string, TokenGroup>();
  for (const event of mentions) {
    if (event.user_group_id === null) continue;
    const print = [event.token_fingerprint, event.sent_fingerprint].find(
      (value) => value !== null && wanted.has(value),
    ) as string;
    const key = `${groupKey(event)}\u0000${print}`;
    const seen = groups.get(key);
    if (seen !== undefined) {
      seen.last_seen = event.time;
      continue;
    }
    groups.set(key, {
      base_url: event.base_url,
      profile: event.profile,
      user_group_id: event.user_group_id,
      name: event.name,
      fingerprint: print,
      last4: print === event.token_fingerprint ? event.token_last4 : event.sent_last4,
      first_seen: event.time,
      last_seen: event.time,
      status: 'current',
    });
  }
  for (const group of groups.values()) {
    const later = events.filter(
      (event) =>
        groupKey(event) === groupKey(group) &&
        Date.parse(event.time) >= Date.parse(group.first_seen),
    );
    for (const event of later) {
      if (event.name !== null && event.outcome !== 'failed') group.name = event.name;
      if (group.status !== 'current') continue;
      if (event.outcome === 'rotated' && event.sent_fingerprint === group.fingerprint) {
        group.status = 'rotated';
        group.ended_by = event;
      } else if (
        (event.outcome === 'found' || event.outcome === 'created' || event.outcome === 'rotated') &&
        event.token_fingerprint !== null &&
        event.token_fingerprint !== group.fingerprint
      ) {
        group.status = 'superseded';
        group.ended_by = event;
      } else if (event.outcome === 'stale' && event.sent_fingerprint === group.fingerprint) {
        group.status = 'stale';
        group.ended_by = event;
      }
    }
  }
  return { fingerprints: [...wanted], groups: [...groups.values()], events: mentions };
}

// ---------------------------------------------------------------------------------------------
// Ids that look like known ones (the typo guard)

/**
 * An id as a person means it: accents and case dropped, surrounding punctuation and spaces cut
 * (`Müller-GmbH.` and `muller-gmbh` are one), Unicode-normalised.
 */
export function looseId(id: string): string {
  return id
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/^[\p{P}\p{S}\s]+|[\p{P}\p{S}\s]+$/gu, '');
}

/**
 * Edit distance with adjacent transpositions counting one (optimal string alignment), or
 * `max + 1` as soon as it is known to exceed `max` (compared by code points).
 */
export function editDistance(a: string, b: string, max: number): number {
  const x = [...a];
  const y = [...b];
  if (Math.abs(x.length - y.length) > max) return max + 1;
  let before: number[] = [];
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let value = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        value = Math.min(value, (before[j - 2] as number) + 1);
      }
      current.push(value);
      if (value < best) best = value;
    }
    if (best > max) return max + 1;
    before = previous;
    previous = current;
  }
  return previous[y.length] as number;
}

/**
 * How far apart two ids may be and still look like one typo: at most 2 edits, fewer for short
 * ids (in a 3-character id, 2 edits make another word: `abc` and `xbz` are not one customer).
 */
function maxEdits(id: string): number {
  const length = [...id].length;
  return length <= 2 ? 0 : length <= 5 ? 1 : 2;
}

/**
 * Edit-distance comparisons a bulk run may spend (about 0.1 s) before it looks no further than
 * case, accents and punctuation, which cost one lookup per row whatever the history's size: a
 * 50,000-row run against a 50,000-id history must not spend minutes on a note.
 */
export const BULK_EDIT_BUDGET = 200_000;

/** The ids a profile's history knows, and which of them a new id looks like. */
export class KnownIds {
  private readonly exact = new Set<string>();
  private readonly loose = new Map<string, string>();
  private readonly byLength = new Map<number, { id: string; loose: string }[]>();
  private budget: number;

  constructor(ids: Iterable<string>, budget = Number.POSITIVE_INFINITY) {
    this.budget = budget;
    for (const id of ids) {
      if (this.exact.has(id)) continue;
      this.exact.add(id);
      const loose = looseId(id);
      if (!this.loose.has(loose)) this.loose.set(loose, id);
      const length = [...loose].length;
      const list = this.byLength.get(length) ?? [];
      list.push({ id, loose });
      this.byLength.set(length, list);
    }
  }

  get size(): number {
    return this.exact.size;
  }

  has(id: string): boolean {
    return this.exact.has(id);
  }

  /**
   * A known id that `id` (not itself known) looks like a typo of, or undefined. The closest by
   * loose form first (case, accents, punctuation), then by edit distance.
   */
  similar(id: string): string | undefined {
    if (this.exact.has(id)) return undefined;
    const loose = looseId(id);
    const same = this.loose.get(loose);
    if (same !== undefined) return same;
    const max = maxEdits(loose);
    if (max === 0 || this.budget <= 0) return undefined;
    const length = [...loose].length;
    let best: { id: string; distance: number } | undefined;
    for (let l = length - max; l <= length + max; l++) {
      for (const known of this.byLength.get(l) ?? []) {
        this.budget--;
        const distance = editDistance(loose, known.loose, max);
        if (distance <= max && (best === undefined || distance < best.distance)) {
          best = { id: known.id, distance };
        }
      }
    }
    return best?.id;
  }
}

/** The ids of groups this profile's history saw answered. */
export function knownIds(
  events: readonly HistoryEvent[],
  profile: string,
  budget?: number,
): KnownIds {
  const ids: string[] = [];
  for (const event of events) {
    if (event.profile !== profile || event.user_group_id === null) continue;
    if (event.outcome === 'created' || event.outcome === 'found' || event.outcome === 'rotated') {
      ids.push(event.user_group_id);
    }
  }
  return new KnownIds(ids, budget);
}

/** The known ids of `profile` in the history at `location` (none when there is no history). */
export async function loadKnownIds(
  location: HistoryLocation | undefined,
  profile: string,
  budget?: number,
): Promise<KnownIds> {
  if (location === undefined) return new KnownIds([]);
  return knownIds(await readHistory(location), profile, budget);
}
