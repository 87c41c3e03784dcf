/**
 * Reading the token history: its events, filters, `whois` and the ids it knows (the typo guard).
 * The one entry of this chunk: `ugs history`, `ugs whois`, the typo question of `get` at a
 * terminal and bulk `get`'s validation load it with `import()`; a plain `get` never does.
 */
import { promises as fsp, type Stats } from 'node:fs';
import { HistoryFileError } from '../errors.js';
import { errorCode } from '../platform/guards.js';
import { message } from '../text/message.js';
import { editDistance } from '../text/suggest.js';
import {
  FINGERPRINT_PATTERN,
  HISTORY_OUTCOMES,
  type HistoryEvent,
  type HistoryOutcome,
} from './event.js';
import {
  fingerprintWith,
  type HistoryLocation,
  keyPath,
  openIfExists,
  parseKey,
  readIfExists,
  readKeyFile,
  rotatedPath,
} from './log.js';

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

/** A file `--clear` found to be a history: its identity, so that only this very file goes. */
export interface ClearTarget {
  path: string;
  dev: number;
  ino: number;
}

/** An event line is about 330 bytes; a first line longer than this is no event of ugs's. */
const FIRST_LINE_MAX_BYTES = 64 * 1024;

/**
 * The history file and its rotated file as `--clear` would delete them, each checked to be a
 * token history: empty, or its first line an event as `readHistory` parses it. The file is
 * whatever `--history-file`/`UGS_HISTORY_FILE` names, and a wrong name there (a bulk results
 * file, holding the only copy of new tokens) must never be deleted: anything else is refused
 * (HistoryFileError) before either file is touched. Absent files are left out.
 */
export async function historyFilesToClear(location: HistoryLocation): Promise<ClearTarget[]> {
  const targets: ClearTarget[] = [];
  for (const path of [location.path, rotatedPath(location.path)]) {
    const handle = await openIfExists(path);
    if (handle === undefined) continue;
    try {
      const stats = await handle.stat();
      if (stats.size > 0 && parseEvent(await firstLine(handle)) === undefined) {
        throw new HistoryFileError(
          message`will not clear ${path}: it is not a ugs token history (its first line is not a history event); nothing was deleted`,
          path,
          'it is not a ugs token history',
          {
            hint: '--clear deletes only a history ugs wrote; check --history-file and UGS_HISTORY_FILE, or delete the file yourself if it is one',
          },
        );
      }
      targets.push({ path, dev: stats.dev, ino: stats.ino });
    } finally {
      await handle.close();
    }
  }
  return targets;
}

/** The text before the first newline (all of a short file without one). */
async function firstLine(handle: fsp.FileHandle): Promise<string> {
  const data = Buffer.alloc(FIRST_LINE_MAX_BYTES);
  let filled = 0;
  for (;;) {
    const { bytesRead } = await handle.read(data, filled, data.length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
    const end = data.subarray(0, filled).indexOf(0x0a);
    if (end >= 0) return data.toString('utf8', 0, end);
    if (filled === data.length) return '';
  }
  return data.toString('utf8', 0, filled);
}

/**
 * Deletes the files `historyFilesToClear` checked; the key stays. A file replaced since the check
 * (another file renamed over the name) is left alone and refused.
 */
export async function removeHistoryFiles(targets: readonly ClearTarget[]): Promise<string[]> {
  const removed: string[] = [];
  for (const target of targets) {
    let stats: Stats;
    try {
      stats = await fsp.lstat(target.path);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') continue;
      throw error;
    }
    if (stats.dev !== target.dev || stats.ino !== target.ino) {
      throw new HistoryFileError(
        message`will not clear ${target.path}: it was replaced by another file while ugs checked it`,
        target.path,
        'it was replaced by another file',
        { hint: 'run ugs history --clear again' },
      );
    }
    try {
      await fsp.unlink(target.path);
      removed.push(target.path);
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
  /** Events at or before this time (ms since the epoch). */
  untilMs?: number | undefined;
  /** Only events with one of these outcomes. */
  outcomes?: readonly HistoryOutcome[] | undefined;
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
    if (filter.untilMs !== undefined && Date.parse(event.time) > filter.untilMs) continue;
    if (filter.outcomes !== undefined && !filter.outcomes.includes(event.outcome)) continue;
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
   * of it was refused because it was not current; `deleted`: its group was deleted (by this
   * token, or by its id with whichever token it had then).
   */
  status: 'current' | 'rotated' | 'superseded' | 'stale' | 'deleted';
  /** The event that ended it (rotated, superseded, stale, deleted). */
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
    // A delete by token names no group (the service knows it by the token alone): it is the
    // group's when it sent this token to the same service.
    const later = events.filter(
      (event) =>
        (groupKey(event) === groupKey(group) ||
          (event.outcome === 'deleted' &&
            event.base_url === group.base_url &&
            event.sent_fingerprint === group.fingerprint)) &&
        Date.parse(event.time) >= Date.parse(group.first_seen),
    );
    for (const event of later) {
      if (event.name !== null && event.outcome !== 'failed') group.name = event.name;
      // Once deleted, nothing older matters: every token of the group is dead.
      if (event.outcome === 'deleted') {
        group.status = 'deleted';
        group.ended_by = event;
        continue;
      }
      if (group.status !== 'current') continue;
      if (event.outcome === 'rotated' && event.sent_fingerprint === group.fingerprint) {
        group.status = 'rotated';
        group.ended_by = event;
      } else if (
        // An update's answer carries the group's token as it is now, as a get's does.
        (event.outcome === 'found' ||
          event.outcome === 'created' ||
          event.outcome === 'rotated' ||
          event.outcome === 'updated') &&
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
  // Most ids are already loose (lower-case ASCII, no punctuation at either end): no new string.
  if (PLAIN_ID.test(id)) return id;
  return id
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/^[\p{P}\p{S}\s]+|[\p{P}\p{S}\s]+$/gu, '');
}

const PLAIN_ID = /^[a-z0-9](?:[a-z0-9_.-]*[a-z0-9])?$/;

/** Code points in `text`, without making an array of them. */
function codePoints(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/**
 * How far apart two ids may be and still look like one typo: at most 2 edits, fewer for short
 * ids (in a 3-character id, 2 edits make another word: `abc` and `xbz` are not one customer).
 */
function maxEdits(id: string): number {
  const length = codePoints(id);
  return length <= 2 ? 0 : length <= 5 ? 1 : 2;
}

/**
 * Edit-distance comparisons a bulk run may spend (about 0.1 s) before it looks no further than
 * case, accents and punctuation, which cost one lookup per row whatever the history's size: a
 * 50,000-row run against a 50,000-id history must not spend minutes on a note.
 */
export const BULK_EDIT_BUDGET = 200_000;
/**
 * A bulk run compares its ids with this many of the most recent known ids, which bounds the
 * memory the comparison takes (a history holds up to ~60,000 events).
 */
export const BULK_KNOWN_IDS = 20_000;

/** The ids a profile's history knows, and which of them a new id looks like. */
export class KnownIds {
  private readonly exact = new Set<string>();
  private readonly loose = new Map<string, string>();
  /** Indexes into `ids`/`looseIds` by the length of the loose form (compact for 100k ids). */
  private readonly byLength = new Map<number, number[]>();
  private readonly ids: string[] = [];
  private readonly looseIds: string[] = [];
  private budget: number;

  constructor(ids: Iterable<string>, budget = Number.POSITIVE_INFINITY) {
    this.budget = budget;
    for (const id of ids) {
      if (this.exact.has(id)) continue;
      this.exact.add(id);
      const made = looseId(id);
      // Most ids are their own loose form: one string kept, not two.
      const loose = made === id ? id : made;
      if (!this.loose.has(loose)) this.loose.set(loose, id);
      const length = codePoints(loose);
      let list = this.byLength.get(length);
      if (list === undefined) {
        list = [];
        this.byLength.set(length, list);
      }
      list.push(this.ids.length);
      this.ids.push(id);
      this.looseIds.push(loose);
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
    const length = codePoints(loose);
    let best: { index: number; distance: number } | undefined;
    for (let l = length - max; l <= length + max; l++) {
      for (const index of this.byLength.get(l) ?? []) {
        if (this.budget-- <= 0) break;
        const distance = editDistance(loose, this.looseIds[index] as string, max);
        if (distance <= max && (best === undefined || distance < best.distance)) {
          best = { index, distance };
        }
      }
    }
    return best === undefined ? undefined : this.ids[best.index];
  }
}

/** The known ids of `profile` in the history at `location`. */
export async function loadKnownIds(
  location: HistoryLocation,
  profile: string,
  budget?: number,
  limit = Number.POSITIVE_INFINITY,
): Promise<KnownIds> {
  const seen: string[] = [];
  const scan = idScanner(profile, (id) => seen.push(id));
  for (const path of [rotatedPath(location.path), location.path]) {
    await forEachLineBytes(path, scan);
  }
  // The most recent `limit` distinct ids: the file's order is the order they were seen.
  const recent = new Set<string>();
  for (let i = seen.length - 1; i >= 0 && recent.size < limit; i--) recent.add(seen[i] as string);
  return new KnownIds(recent, budget);
}

/**
 * The profiles whose history says a group of id `id` exists, in the order first seen. Only lines
 * holding the id's JSON text are parsed, so a large history costs one scan of its bytes.
 */
export async function profilesKnowing(location: HistoryLocation, id: string): Promise<string[]> {
  const needle = Buffer.from(`"user_group_id":${JSON.stringify(id)}`);
  const profiles = new Set<string>();
  const visit = (data: Buffer, start: number, end: number) => {
    const line = data.subarray(start, end);
    if (line.indexOf(needle) < 0) return;
    const event = parseEvent(line.toString('utf8'));
    if (event === undefined || event.user_group_id !== id) return;
    if (!KNOWN_OUTCOMES.includes(event.outcome)) return;
    profiles.add(event.profile);
  };
  for (const path of [rotatedPath(location.path), location.path]) {
    await forEachLineBytes(path, visit);
  }
  return [...profiles];
}

/**
 * Calls `visit(data, start, end)` for each line of the file, read in 64 KiB pieces into one
 * buffer: a bulk run reads up to ~20 MB of history to learn the known ids, and decoding all of it
 * into strings (then events) made enough garbage to grow its peak memory by tens of MiB.
 */
async function forEachLineBytes(
  path: string,
  visit: (data: Buffer, start: number, end: number) => void,
): Promise<void> {
  const handle = await openIfExists(path);
  if (handle === undefined) return;
  try {
    // One buffer for the whole file: a line cut by a read moves to its front, no copies made.
    let data = Buffer.allocUnsafe(64 * 1024);
    let filled = 0;
    for (;;) {
      if (filled === data.length) {
        const bigger = Buffer.allocUnsafe(data.length * 2);
        data.copy(bigger, 0, 0, filled);
        data = bigger;
      }
      const { bytesRead } = await handle.read(data, filled, data.length - filled, null);
      if (bytesRead === 0) break;
      const stop = filled + bytesRead;
      let start = 0;
      for (;;) {
        const end = data.indexOf(0x0a, start);
        if (end < 0 || end >= stop) break;
        visit(data, start, end);
        start = end + 1;
      }
      data.copyWithin(0, start, stop);
      filled = stop - start;
    }
    if (filled > 0) visit(data, 0, filled);
  } finally {
    await handle.close();
  }
}

/** The outcomes that say the group exists. */
const KNOWN_OUTCOMES: readonly string[] = ['created', 'found', 'rotated', 'updated'];
const OUTCOME_KNOWN = KNOWN_OUTCOMES.map((outcome) => Buffer.from(`"outcome":"${outcome}"`));
const ID_KEY = Buffer.from('"user_group_id":"');

/**
 * The ids of the lines that say their group exists for `profile`, found by their bytes. Keys are
 * matched with their quotes, which JSON escapes inside a string value: a name cannot fake them.
 */
function idScanner(
  profile: string,
  found: (id: string) => void,
): (data: Buffer, start: number, end: number) => void {
  const profileKey = Buffer.from(`"profile":${JSON.stringify(profile)},`);
  return (data, start, end) => {
    // The line alone: a search in the whole buffer would run on past the line's end.
    const line = data.subarray(start, end);
    if (line.indexOf(profileKey) < 0) return;
    if (!OUTCOME_KNOWN.some((pattern) => line.includes(pattern))) return;
    const key = line.indexOf(ID_KEY);
    if (key < 0) return;
    const valueStart = key + ID_KEY.length - 1;
    let at = valueStart + 1;
    let escaped = false;
    while (at < line.length && line[at] !== 0x22) {
      if (line[at] === 0x5c) {
        escaped = true;
        at++;
      }
      at++;
    }
    if (at >= line.length) return;
    // Without escapes the bytes are the id; otherwise JSON says what they stand for.
    if (!escaped) {
      found(line.toString('utf8', valueStart + 1, at));
      return;
    }
    try {
      const id: unknown = JSON.parse(line.toString('utf8', valueStart, at + 1));
      if (typeof id === 'string') found(id);
    } catch {
      // Not an event ugs wrote: no id from it.
    }
  };
}
