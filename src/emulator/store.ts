import { createHash } from 'node:crypto';
import { isPlainObject } from '../platform/guards.js';
import { type ApiToken, type Environment, isEnvironment, randomToken } from './auth.js';

export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface UserGroup {
  teamId: number;
  token: string;
  name: string;
  providedId: string;
  environment: Environment;
  mapping: Record<string, string>;
  properties: JsonObject | null;
  /** The vendor's demo watermark, set when the group was created (`is_demo_group`). */
  isDemoGroup: boolean;
  // The Customer API's own data (`--dialect customer`); empty or null for a group of the other
  // dialects, which have no such fields.
  emails: string[];
  groupTags: string[];
  /** The name of its hierarchy level, or null when it has none. */
  hierarchyLevel: string | null;
  /**
   * Its parent, a group of the same environment, or null. The link is to the group itself, not
   * to its id, so renaming the parent (`new_provided_id`) leaves its children under it; the data
   * file names the parent by its team_id, which never changes either. Never the group itself or
   * one of its descendants (the store refuses a cycle).
   */
  parent: UserGroup | null;
}

export interface GetOrCreateInput {
  userGroupId: string;
  name: string;
  mapping: Record<string, string> | undefined;
  properties: JsonObject | undefined;
  isDemoGroup?: boolean;
  emails?: string[];
  groupTags?: string[];
  hierarchyLevel?: string | null;
  /** A group of the same environment (the route finds it by its id); never the one created. */
  parent?: UserGroup | null;
}

/** A group as the data file holds it. */
interface StoredGroup {
  team_id: number;
  token: string;
  name: string;
  provided_id: string;
  environment: Environment;
  mapping: Record<string, string>;
  properties: JsonObject | null;
  /** Only when true in a snapshot (a file without it is the same as before the field existed); an
   * update's change may set it false. */
  is_demo_group?: boolean;
  // The Customer API's data, each only when set, so a file written before these fields existed
  // is read as groups without them; an update's change may set them empty or null.
  emails?: string[];
  group_tags?: string[];
  hierarchy_level?: string | null;
  /** The parent by its team_id: it stays the same when the parent is renamed. */
  parent_team_id?: number | null;
}

/**
 * A token a rotation replaced, as the data file holds it: by its SHA-256 only. A replaced token
 * is often one that leaked; the emulator needs to recognise it, never to hold it again.
 */
interface StoredPreviousToken {
  token_sha256: string;
  provided_id: string;
  environment: Environment;
  rotated_at: string;
}

/** The on-disk shape. Snake case because it is JSON read by people debugging a test run. */
interface Snapshot {
  version: 1;
  next_team_id: number;
  user_groups: StoredGroup[];
  /** API tokens the emulator generated for this file, so a saved login survives a restart. */
  api_tokens?: ApiToken[];
  /** Tokens rotations replaced, oldest first (at most MAX_PREVIOUS_TOKENS). */
  previous_tokens?: StoredPreviousToken[];
}

/** Whose token this was before a rotation replaced it, and when. */
export interface PreviousToken {
  providedId: string;
  environment: Environment;
  rotatedAt: Date;
}

/**
 * The replaced tokens kept for the access log: enough for every token of a 50,000-row bulk
 * rotation run twice over, and a bound on what a long-lived emulator (or its data file) holds.
 */
export const MAX_PREVIOUS_TOKENS = 100_000;

/**
 * One change, as appended to the data file after its snapshot: what replaying it on that
 * snapshot needs, and no more, so a write costs the size of the change, not of the store.
 */
export type StoreChange =
  | { op: 'create'; group: StoredGroup }
  // rotated_at: when the replaced token stopped working (a file written before it existed has
  // none, and its replaced tokens are then not remembered).
  | { op: 'rotate'; team_id: number; token: string; rotated_at?: string }
  | { op: 'update'; team_id: number; fields: Partial<Pick<StoredGroup, UpdatableField>> }
  | { op: 'delete'; team_id: number };

/**
 * What `update` may change: the group's own data and its id (an update may rename it, as the
 * Customer API's `new_provided_id` does), never its token or its environment.
 */
type UpdatableField =
  | 'name'
  | 'mapping'
  | 'properties'
  | 'is_demo_group'
  | 'provided_id'
  | 'emails'
  | 'group_tags'
  | 'hierarchy_level'
  | 'parent_team_id';
export type GroupUpdate = Partial<
  Pick<
    UserGroup,
    | 'name'
    | 'mapping'
    | 'properties'
    | 'isDemoGroup'
    | 'providedId'
    | 'emails'
    | 'groupTags'
    | 'hierarchyLevel'
    | 'parent'
  >
>;

export class CorruptStateError extends Error {
  override name = 'CorruptStateError';
}

/**
 * All user groups and the rules on them. Every method is synchronous: node runs one at a time,
 * so a check and the change that depends on it can never interleave with another request.
 *
 * A route (operations/<op>/route.ts) works on the generic primitives (`find`, `findByToken`,
 * `create` through `getOrCreate`, `update`, `replaceToken` through `rotate`, `remove`; and
 * `inEnvironment`, which lists and changes nothing), each of
 * which keeps the indexes and records its change for the data file: a new operation needs no
 * new method here.
 */
export class Store {
  private nextTeamId = 1;
  // Ids are unique per environment, so the key is environment + id.
  private readonly byProvidedId = new Map<string, UserGroup>();
  // Tokens are unique across every environment, so one index serves both uniqueness and lookup.
  private readonly byToken = new Map<string, UserGroup>();
  private readonly groups: UserGroup[] = [];
  /**
   * Tokens a rotation replaced, by their SHA-256 (tokenDigest), oldest first, and kept in the
   * data file with --data, so a refused rotation of one can say in the access log that it was
   * this group's token once: the answer stays DRF's 404.
   */
  private readonly previousTokens = new Map<string, PreviousToken>();
  /** The API tokens generated for this state; kept with it so they survive a restart. */
  generatedApiTokens: ApiToken[] | undefined;
  /** Told of every change as it is made, synchronously, so it can be written out. */
  onChange: ((change: StoreChange) => void) | undefined;

  /** `maxPreviousTokens`: how many replaced tokens are kept (a test sets a small number). */
  constructor(private readonly maxPreviousTokens = MAX_PREVIOUS_TOKENS) {}

  get size(): number {
    return this.groups.length;
  }

  /** The group with this id in this environment (ids are unique per environment). */
  find(environment: Environment, providedId: string): UserGroup | undefined {
    return this.byProvidedId.get(providedIdKey(environment, providedId));
  }

  /**
   * The groups of this environment in a stable order, the order they were created in (a list
   * pages through them: a page must not shift while nothing is created or removed).
   */
  inEnvironment(environment: Environment): UserGroup[] {
    return this.groups.filter((group) => group.environment === environment);
  }

  /**
   * The group holding this token in this environment. A token from another environment is
   * treated as unknown, the same as if it did not exist.
   */
  findByToken(environment: Environment, token: string): UserGroup | undefined {
    const group = this.byToken.get(token);
    return group?.environment === environment ? group : undefined;
  }

  getOrCreate(
    environment: Environment,
    input: GetOrCreateInput,
  ): { created: boolean; group: UserGroup } {
    const existing = this.find(environment, input.userGroupId);
    if (existing) return { created: false, group: existing };
    const group: UserGroup = {
      teamId: this.nextTeamId,
      token: this.uniqueToken(),
      name: input.name,
      providedId: input.userGroupId,
      environment,
      mapping: input.mapping ?? {},
      properties: input.properties ?? null,
      isDemoGroup: input.isDemoGroup === true,
      emails: input.emails ?? [],
      groupTags: input.groupTags ?? [],
      hierarchyLevel: input.hierarchyLevel ?? null,
      parent: input.parent ?? null,
    };
    if (group.parent) this.owned(group.parent);
    if (group.parent && group.parent.environment !== environment) {
      throw new Error(`team ${group.parent.teamId} is in another environment`);
    }
    this.nextTeamId += 1;
    this.add(group);
    this.onChange?.({ op: 'create', group: stored(group) });
    return { created: true, group };
  }

  /**
   * Replaces the token at once: the old token stops matching anything, since a rotation is
   * usually done because the old token leaked. A token from another environment is treated as
   * unknown, the same as if it did not exist.
   */
  rotate(environment: Environment, currentToken: string): UserGroup | undefined {
    const group = this.findByToken(environment, currentToken);
    if (!group) return undefined;
    this.byToken.delete(group.token);
    const rotatedAt = new Date();
    this.rememberPrevious(tokenDigest(group.token), {
      providedId: group.providedId,
      environment: group.environment,
      rotatedAt,
    });
    group.token = this.uniqueToken();
    this.byToken.set(group.token, group);
    this.onChange?.({
      op: 'rotate',
      team_id: group.teamId,
      token: group.token,
      rotated_at: rotatedAt.toISOString(),
    });
    return group;
  }

  /** Whose token this was before a rotation replaced it, and when (same environment only). */
  previousOwner(environment: Environment, token: string): PreviousToken | undefined {
    const previous = this.previousTokens.get(tokenDigest(token));
    return previous?.environment === environment ? previous : undefined;
  }

  private rememberPrevious(digest: string, previous: PreviousToken): void {
    this.previousTokens.set(digest, previous);
    if (this.previousTokens.size > this.maxPreviousTokens) {
      // A Map iterates in insertion order: the first key is the oldest.
      const oldest = this.previousTokens.keys().next();
      if (oldest.done !== true) this.previousTokens.delete(oldest.value);
    }
  }

  /**
   * Changes a group's own data (name, mapping, properties, demo flag, emails, tags, level,
   * parent) and, given a new id, its id; its token stays. A new id another group of the
   * environment holds, or a parent that would make a cycle or is in another environment,
   * throws: the route checks those first and refuses the request.
   */
  update(group: UserGroup, fields: GroupUpdate): void {
    this.owned(group);
    const parent = fields.parent;
    if (parent) {
      this.owned(parent);
      if (parent.environment !== group.environment) {
        throw new Error(`team ${parent.teamId} is in another environment`);
      }
      if (descendsFrom(parent, group)) {
        throw new Error(`team ${parent.teamId} is team ${group.teamId} or one of its descendants`);
      }
    }
    const change: Partial<Pick<StoredGroup, UpdatableField>> = {};
    if (fields.name !== undefined) change.name = group.name = fields.name;
    if (fields.mapping !== undefined) change.mapping = group.mapping = fields.mapping;
    if (fields.properties !== undefined) change.properties = group.properties = fields.properties;
    if (fields.isDemoGroup !== undefined) {
      group.isDemoGroup = fields.isDemoGroup;
      change.is_demo_group = fields.isDemoGroup;
    }
    // Copies: the caller's array must not become the stored one behind the store's back.
    if (fields.emails !== undefined) change.emails = group.emails = [...fields.emails];
    if (fields.groupTags !== undefined) change.group_tags = group.groupTags = [...fields.groupTags];
    if (fields.hierarchyLevel !== undefined) {
      change.hierarchy_level = group.hierarchyLevel = fields.hierarchyLevel;
    }
    if (parent !== undefined) {
      group.parent = parent;
      change.parent_team_id = parent?.teamId ?? null;
    }
    if (fields.providedId !== undefined && fields.providedId !== group.providedId) {
      const key = providedIdKey(group.environment, fields.providedId);
      if (this.byProvidedId.has(key)) {
        throw new Error(`id ${fields.providedId} is taken in ${group.environment}`);
      }
      this.byProvidedId.delete(providedIdKey(group.environment, group.providedId));
      this.byProvidedId.set(key, group);
      change.provided_id = group.providedId = fields.providedId;
    }
    this.onChange?.({ op: 'update', team_id: group.teamId, fields: change });
  }

  /**
   * Removes a group: its token matches nothing any more, and its id can be created again. Its
   * children stay, without a parent (Django's `on_delete=SET_NULL`): deleting a customer does
   * not delete the customers under it, and none is left pointing at a group that is gone. The
   * change line is the delete alone: replaying it clears the children's links the same way.
   */
  remove(group: UserGroup): void {
    this.owned(group);
    for (const child of this.groups) if (child.parent === group) child.parent = null;
    this.byToken.delete(group.token);
    this.byProvidedId.delete(providedIdKey(group.environment, group.providedId));
    this.groups.splice(this.groups.indexOf(group), 1);
    this.onChange?.({ op: 'delete', team_id: group.teamId });
  }

  toJSON(): Snapshot {
    return {
      version: 1,
      next_team_id: this.nextTeamId,
      user_groups: this.groups.map(stored),
      ...(this.generatedApiTokens && {
        api_tokens: this.generatedApiTokens.map((t) => ({ ...t })),
      }),
      ...(this.previousTokens.size > 0 && {
        previous_tokens: [...this.previousTokens].map(([digest, previous]) => ({
          token_sha256: digest,
          provided_id: previous.providedId,
          environment: previous.environment,
          rotated_at: previous.rotatedAt.toISOString(),
        })),
      }),
    };
  }

  /** One change as a line of the data file (no newline). */
  changeLine(change: StoreChange): string {
    return JSON.stringify(change);
  }

  /**
   * Rebuilds a store from a snapshot and the changes made after it, refusing anything that
   * breaks the store's invariants.
   */
  static fromJSON(snapshot: unknown, changes: readonly unknown[] = []): Store {
    const data = changes.length === 0 ? snapshot : replay(snapshot, changes);
    if (!isPlainObject(data)) throw new CorruptStateError('top level is not a JSON object');
    if (data.version !== 1) {
      throw new CorruptStateError(`unsupported version ${JSON.stringify(data.version)}`);
    }
    const next = data.next_team_id;
    if (typeof next !== 'number' || !Number.isSafeInteger(next) || next < 1) {
      throw new CorruptStateError('next_team_id is not a positive integer');
    }
    if (!Array.isArray(data.user_groups)) {
      throw new CorruptStateError('user_groups is not an array');
    }
    const store = new Store();
    const teamIds = new Set<number>();
    // Parents are linked once every group is read: a parent may come after its child.
    const parents: { where: string; child: unknown; parent: number }[] = [];
    data.user_groups.forEach((raw: unknown, index) => {
      const where = `user_groups[${index}]`;
      if (!isPlainObject(raw)) throw new CorruptStateError(`${where} is not an object`);
      const { team_id, token, name, provided_id, environment, mapping, properties, is_demo_group } =
        raw;
      const { emails, group_tags, hierarchy_level, parent_team_id } = raw;
      if (emails !== undefined && !isStringList(emails)) {
        throw new CorruptStateError(`${where}.emails is not a list of strings`);
      }
      if (group_tags !== undefined && !isStringList(group_tags)) {
        throw new CorruptStateError(`${where}.group_tags is not a list of strings`);
      }
      if (hierarchy_level != null && typeof hierarchy_level !== 'string') {
        throw new CorruptStateError(`${where}.hierarchy_level is neither a string nor null`);
      }
      if (
        parent_team_id != null &&
        (typeof parent_team_id !== 'number' || !Number.isSafeInteger(parent_team_id))
      ) {
        throw new CorruptStateError(`${where}.parent_team_id is neither an integer nor null`);
      }
      if (parent_team_id != null) parents.push({ where, child: team_id, parent: parent_team_id });
      if (is_demo_group !== undefined && typeof is_demo_group !== 'boolean') {
        throw new CorruptStateError(`${where}.is_demo_group is not a boolean`);
      }
      if (typeof team_id !== 'number' || !Number.isSafeInteger(team_id) || team_id < 1) {
        throw new CorruptStateError(`${where}.team_id is not a positive integer`);
      }
      if (team_id >= next || teamIds.has(team_id)) {
        throw new CorruptStateError(`${where}.team_id is duplicated or not below next_team_id`);
      }
      if (typeof token !== 'string' || token === '') {
        throw new CorruptStateError(`${where}.token is not a non-empty string`);
      }
      if (typeof name !== 'string' || typeof provided_id !== 'string' || provided_id === '') {
        throw new CorruptStateError(`${where}.name or provided_id is not a string`);
      }
      if (!isEnvironment(environment)) {
        throw new CorruptStateError(`${where}.environment is not Customer or Testing`);
      }
      if (!isPlainObject(mapping) || !Object.values(mapping).every((v) => typeof v === 'string')) {
        throw new CorruptStateError(`${where}.mapping is not an object of strings`);
      }
      if (properties !== null && !isPlainObject(properties)) {
        throw new CorruptStateError(`${where}.properties is neither an object nor null`);
      }
      if (store.byToken.has(token)) throw new CorruptStateError(`${where}.token is duplicated`);
      if (store.byProvidedId.has(providedIdKey(environment, provided_id))) {
        throw new CorruptStateError(`${where}.provided_id is duplicated in ${environment}`);
      }
      teamIds.add(team_id);
      store.add({
        teamId: team_id,
        token,
        name,
        providedId: provided_id,
        environment,
        mapping: mapping as Record<string, string>,
        properties: properties as JsonObject | null,
        isDemoGroup: is_demo_group === true,
        emails: emails ?? [],
        groupTags: group_tags ?? [],
        hierarchyLevel: hierarchy_level ?? null,
        parent: null,
      });
    });
    store.linkParents(parents);
    store.nextTeamId = next;
    store.generatedApiTokens = parseApiTokens(data.api_tokens);
    for (const [digest, previous] of parsePreviousTokens(data.previous_tokens)) {
      store.rememberPrevious(digest, previous);
    }
    return store;
  }

  /** Links each child to its parent, refusing a parent that is missing, foreign or a cycle. */
  private linkParents(links: readonly { where: string; child: unknown; parent: number }[]): void {
    const byTeamId = new Map(this.groups.map((group) => [group.teamId, group]));
    for (const { where, child, parent } of links) {
      const group = byTeamId.get(child as number);
      const found = byTeamId.get(parent);
      if (!group || !found || found.environment !== group.environment) {
        throw new CorruptStateError(`${where}.parent_team_id is no group of its environment`);
      }
      if (descendsFrom(found, group)) {
        throw new CorruptStateError(`${where}.parent_team_id makes a cycle of parents`);
      }
      group.parent = found;
    }
  }

  private add(group: UserGroup): void {
    this.groups.push(group);
    this.byProvidedId.set(providedIdKey(group.environment, group.providedId), group);
    this.byToken.set(group.token, group);
  }

  /** A group from another store (or one removed) would leave the indexes inconsistent. */
  private owned(group: UserGroup): void {
    if (this.byToken.get(group.token) !== group) {
      throw new Error(`team ${group.teamId} is not a group of this store`);
    }
  }

  private uniqueToken(): string {
    // A collision of 256 random bits will not happen, but uniqueness is a promise, so check it.
    for (;;) {
      const token = randomToken();
      if (!this.byToken.has(token)) return token;
    }
  }
}

function stored(g: UserGroup): StoredGroup {
  return {
    team_id: g.teamId,
    token: g.token,
    name: g.name,
    provided_id: g.providedId,
    environment: g.environment,
    mapping: g.mapping,
    properties: g.properties,
    ...(g.isDemoGroup && { is_demo_group: true as const }),
    ...(g.emails.length > 0 && { emails: [...g.emails] }),
    ...(g.groupTags.length > 0 && { group_tags: [...g.groupTags] }),
    ...(g.hierarchyLevel !== null && { hierarchy_level: g.hierarchyLevel }),
    ...(g.parent !== null && { parent_team_id: g.parent.teamId }),
  };
}

/**
 * Whether `group` is `ancestor` or sits under it: made the parent of `ancestor`, it would close
 * a cycle (a group its own parent, or its own grandparent, ...).
 */
export function descendsFrom(group: UserGroup, ancestor: UserGroup): boolean {
  // The chain is acyclic (every link is checked when made), so this walk ends.
  for (let at: UserGroup | null = group; at !== null; at = at.parent) {
    if (at === ancestor) return true;
  }
  return false;
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/**
 * Applies the changes to the parsed snapshot, in place; `fromJSON` then checks the result as it
 * checks any snapshot, so a change cannot smuggle in what a snapshot could not hold.
 */
function replay(data: unknown, changes: readonly unknown[]): unknown {
  // A snapshot of the wrong shape is reported by fromJSON, in its words.
  if (!isPlainObject(data) || !Array.isArray(data.user_groups)) return data;
  if (typeof data.next_team_id !== 'number') return data;
  const groups: unknown[] = data.user_groups;
  const byTeamId = new Map<unknown, Record<string, unknown>>();
  for (const group of groups) if (isPlainObject(group)) byTeamId.set(group.team_id, group);
  let next = data.next_team_id;
  changes.forEach((change, index) => {
    const where = `change ${index + 1} after the snapshot`;
    if (!isPlainObject(change)) throw new CorruptStateError(`${where} is not an object`);
    if (change.op === 'create' && isPlainObject(change.group)) {
      const teamId = change.group.team_id;
      if (typeof teamId !== 'number' || byTeamId.has(teamId)) {
        throw new CorruptStateError(`${where} creates a group with a missing or taken team_id`);
      }
      groups.push(change.group);
      byTeamId.set(teamId, change.group);
      next = Math.max(next, teamId + 1);
    } else if (change.op === 'rotate' && typeof change.token === 'string') {
      const group = byTeamId.get(change.team_id);
      if (!group) throw new CorruptStateError(`${where} rotates a group that does not exist`);
      if (typeof change.rotated_at === 'string') {
        if (data.previous_tokens === undefined) data.previous_tokens = [];
        // Checked with the rest by fromJSON: a list that is not one is reported there.
        if (Array.isArray(data.previous_tokens)) {
          data.previous_tokens.push({
            token_sha256: typeof group.token === 'string' ? tokenDigest(group.token) : undefined,
            provided_id: group.provided_id,
            environment: group.environment,
            rotated_at: change.rotated_at,
          });
        }
      }
      group.token = change.token;
    } else if (change.op === 'update' && isPlainObject(change.fields)) {
      const group = byTeamId.get(change.team_id);
      if (!group) throw new CorruptStateError(`${where} updates a group that does not exist`);
      const { name, mapping, properties, is_demo_group, provided_id } = change.fields;
      const { emails, group_tags, hierarchy_level, parent_team_id } = change.fields;
      // Only these fields: a change cannot rewrite a group's token or environment this way (a
      // duplicate id, or a parent that is missing or makes a cycle, is refused by fromJSON, as
      // in any snapshot).
      if (emails !== undefined) group.emails = emails;
      if (group_tags !== undefined) group.group_tags = group_tags;
      if (hierarchy_level !== undefined) group.hierarchy_level = hierarchy_level;
      if (parent_team_id !== undefined) group.parent_team_id = parent_team_id;
      if (name !== undefined) group.name = name;
      if (mapping !== undefined) group.mapping = mapping;
      if (properties !== undefined) group.properties = properties;
      if (is_demo_group !== undefined) group.is_demo_group = is_demo_group;
      if (provided_id !== undefined) group.provided_id = provided_id;
    } else if (change.op === 'delete') {
      const group = byTeamId.get(change.team_id);
      if (!group) throw new CorruptStateError(`${where} deletes a group that does not exist`);
      groups.splice(groups.indexOf(group), 1);
      byTeamId.delete(change.team_id);
      // As Store.remove does: its children stay, without a parent.
      for (const child of byTeamId.values()) {
        if (child.parent_team_id === change.team_id) child.parent_team_id = null;
      }
    } else {
      throw new CorruptStateError(`${where} is not a create, rotate, update or delete`);
    }
  });
  data.next_team_id = next;
  return data;
}

function parseApiTokens(raw: unknown): ApiToken[] | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new CorruptStateError('api_tokens is not a non-empty array');
  }
  const seen = new Set<string>();
  return raw.map((entry: unknown, index) => {
    const where = `api_tokens[${index}]`;
    if (!isPlainObject(entry)) throw new CorruptStateError(`${where} is not an object`);
    const { token, environment } = entry;
    if (typeof token !== 'string' || !/^[\x21-\x7e]+$/.test(token) || seen.has(token)) {
      throw new CorruptStateError(`${where}.token is not a unique printable string`);
    }
    if (!isEnvironment(environment)) {
      throw new CorruptStateError(`${where}.environment is not Customer or Testing`);
    }
    seen.add(token);
    return { token, environment };
  });
}

function parsePreviousTokens(raw: unknown): [string, PreviousToken][] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new CorruptStateError('previous_tokens is not an array');
  return raw.map((entry: unknown, index) => {
    const where = `previous_tokens[${index}]`;
    if (!isPlainObject(entry)) throw new CorruptStateError(`${where} is not an object`);
    const { token_sha256, provided_id, environment, rotated_at } = entry;
    if (typeof token_sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(token_sha256)) {
      throw new CorruptStateError(`${where}.token_sha256 is not 64 hex digits`);
    }
    if (typeof provided_id !== 'string') {
      throw new CorruptStateError(`${where}.provided_id is not a string`);
    }
    if (!isEnvironment(environment)) {
      throw new CorruptStateError(`${where}.environment is not Customer or Testing`);
    }
    const rotatedAt = typeof rotated_at === 'string' ? new Date(rotated_at) : undefined;
    if (rotatedAt === undefined || Number.isNaN(rotatedAt.getTime())) {
      throw new CorruptStateError(`${where}.rotated_at is not a date`);
    }
    return [token_sha256, { providedId: provided_id, environment, rotatedAt }];
  });
}

/** How a replaced token is kept: its SHA-256, in hex. */
function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function providedIdKey(environment: Environment, providedId: string): string {
  // An environment never contains ':', so this key cannot be shared by two (env, id) pairs.
  return `${environment}:${providedId}`;
}
