import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_PREVIOUS_TOKENS, Store, type StoreChange } from '../../src/emulator/store.js';

const input = (userGroupId: string) => ({
  userGroupId,
  name: 'N',
  mapping: { s: 'd' },
  properties: { k: [1, { x: null }] },
});

describe('Store', () => {
  it('round-trips through its JSON snapshot', () => {
    const store = new Store();
    store.getOrCreate('Customer', input('a'));
    const b = store.getOrCreate('Testing', input('a')).group;
    store.rotate('Testing', b.token);
    const copy = Store.fromJSON(JSON.parse(JSON.stringify(store)));
    expect(copy.toJSON()).toEqual(store.toJSON());
    expect(copy.getOrCreate('Customer', input('new')).group.teamId).toBe(3);
  });

  it('remembers whose token a rotation replaced, and when, across a snapshot and its change lines', () => {
    const store = new Store();
    const a = store.getOrCreate('Customer', input('a')).group;
    const first = a.token;
    store.rotate('Customer', first);
    const snapshot = JSON.parse(JSON.stringify(store));
    const changes: StoreChange[] = [];
    store.onChange = (change) => changes.push(JSON.parse(store.changeLine(change)));
    const second = a.token;
    store.rotate('Customer', second);
    expect(changes).toEqual([
      { op: 'rotate', team_id: a.teamId, token: a.token, rotated_at: expect.any(String) },
    ]);

    const copy = Store.fromJSON(snapshot, changes);
    for (const token of [first, second]) {
      expect(copy.previousOwner('Customer', token)).toEqual(store.previousOwner('Customer', token));
      expect(copy.previousOwner('Customer', token)?.providedId).toBe('a');
      // Another environment's token is unknown there, replaced or not.
      expect(copy.previousOwner('Testing', token)).toBeUndefined();
    }
    expect(copy.previousOwner('Customer', a.token)).toBeUndefined();
    expect(copy.toJSON()).toEqual(store.toJSON());
    expect(store.toJSON().previous_tokens).toHaveLength(2);
    // By their SHA-256 only: a replaced token is often one that leaked.
    const text = JSON.stringify(store.toJSON());
    expect(text).not.toContain(first);
    expect(text).not.toContain(second);
    expect(store.toJSON().previous_tokens?.[0]?.token_sha256).toBe(
      createHash('sha256').update(first).digest('hex'),
    );
  });

  it('loads a rotate line written before rotated_at existed: the group rotates, the old token is not remembered', () => {
    const store = new Store();
    const a = store.getOrCreate('Customer', input('a')).group;
    const old = a.token;
    const snapshot = JSON.parse(JSON.stringify(store));
    const copy = Store.fromJSON(snapshot, [
      { op: 'rotate', team_id: a.teamId, token: 'new-token' },
    ]);
    expect(copy.findByToken('Customer', 'new-token')?.providedId).toBe('a');
    expect(copy.previousOwner('Customer', old)).toBeUndefined();
    expect(copy.toJSON().previous_tokens).toBeUndefined();
  });

  it('refuses previous_tokens it cannot read', () => {
    const snapshot = JSON.parse(JSON.stringify(new Store()));
    const good = {
      token_sha256: 'ab'.repeat(32),
      provided_id: 'a',
      environment: 'Customer',
      rotated_at: '2026-01-02T03:04:05.000Z',
    };
    expect(() => Store.fromJSON({ ...snapshot, previous_tokens: [good] })).not.toThrow();
    for (const [bad, problem] of [
      [{}, /previous_tokens is not an array/],
      [[{ ...good, token_sha256: 'a whole token' }], /previous_tokens\[0\]\.token_sha256/],
      [[{ ...good, provided_id: 1 }], /previous_tokens\[0\]\.provided_id/],
      [[{ ...good, environment: 'Prod' }], /previous_tokens\[0\]\.environment/],
      [[{ ...good, rotated_at: 'yesterday' }], /previous_tokens\[0\]\.rotated_at/],
    ] as const) {
      expect(() => Store.fromJSON({ ...snapshot, previous_tokens: bad })).toThrow(problem);
    }
  });

  it(`keeps the last ${MAX_PREVIOUS_TOKENS} replaced tokens (here 3), dropping the oldest`, () => {
    expect(MAX_PREVIOUS_TOKENS).toBe(100_000);
    const store = new Store(3);
    const a = store.getOrCreate('Customer', input('a')).group;
    const replaced: string[] = [];
    for (let i = 0; i < 5; i++) {
      replaced.push(a.token);
      store.rotate('Customer', a.token);
    }
    expect(replaced.map((token) => store.previousOwner('Customer', token)?.providedId)).toEqual([
      undefined,
      undefined,
      'a',
      'a',
      'a',
    ]);
    expect(store.toJSON().previous_tokens).toHaveLength(3);
  });

  it('finds a rotated group only by its new token, and only in its environment', () => {
    const store = new Store();
    const g = store.getOrCreate('Customer', input('a')).group;
    const old = g.token;
    expect(store.rotate('Testing', old)).toBeUndefined();
    const rotated = store.rotate('Customer', old);
    expect(rotated?.token).not.toBe(old);
    expect(store.rotate('Customer', old)).toBeUndefined();
    expect(store.rotate('Customer', rotated?.token ?? '')).toBe(g);
  });

  it('offers routes generic primitives: find, findByToken, update, remove, each recorded as a change', () => {
    const store = new Store();
    const changes: StoreChange[] = [];
    const a = store.getOrCreate('Customer', input('a')).group;
    const b = store.getOrCreate('Customer', input('b')).group;
    const snapshot = JSON.parse(JSON.stringify(store));
    store.onChange = (change) => changes.push(JSON.parse(store.changeLine(change)));
    expect(store.find('Customer', 'a')).toBe(a);
    expect(store.find('Testing', 'a')).toBeUndefined();
    expect(store.findByToken('Customer', b.token)).toBe(b);
    expect(store.findByToken('Testing', b.token)).toBeUndefined();

    store.update(a, { name: 'Renamed', properties: null });
    expect(store.find('Customer', 'a')).toMatchObject({ name: 'Renamed', properties: null });
    const bToken = b.token;
    store.remove(b);
    expect(store.find('Customer', 'b')).toBeUndefined();
    expect(store.findByToken('Customer', bToken)).toBeUndefined();
    expect(store.size).toBe(1);
    expect(() => store.remove(b)).toThrow(/not a group of this store/);
    // The id is free again; the team id is never reused.
    expect(store.getOrCreate('Customer', input('b'))).toMatchObject({
      created: true,
      group: { teamId: 3 },
    });
    expect(changes.map((change) => change.op)).toEqual(['update', 'delete', 'create']);
    // The data file's snapshot and change lines rebuild exactly this store.
    expect(Store.fromJSON(snapshot, changes).toJSON()).toEqual(store.toJSON());
  });

  it('refuses a change line that updates or deletes a group that does not exist', () => {
    const empty = { version: 1, next_team_id: 1, user_groups: [] };
    expect(() => Store.fromJSON(empty, [{ op: 'delete', team_id: 7 }])).toThrow(/deletes a group/);
    expect(() =>
      Store.fromJSON(structuredClone(empty), [{ op: 'update', team_id: 7, fields: {} }]),
    ).toThrow(/updates a group/);
  });

  it.each([
    ['a non-object', []],
    ['a wrong version', { version: 2, next_team_id: 1, user_groups: [] }],
    ['a zero counter', { version: 1, next_team_id: 0, user_groups: [] }],
    [
      'a team_id at the counter',
      {
        version: 1,
        next_team_id: 1,
        user_groups: [
          {
            team_id: 1,
            token: 't',
            name: 'n',
            provided_id: 'p',
            environment: 'Customer',
            mapping: {},
            properties: null,
          },
        ],
      },
    ],
    [
      'an unknown environment',
      {
        version: 1,
        next_team_id: 2,
        user_groups: [
          {
            team_id: 1,
            token: 't',
            name: 'n',
            provided_id: 'p',
            environment: 'Prod',
            mapping: {},
            properties: null,
          },
        ],
      },
    ],
  ])('refuses a snapshot with %s', (_label, data) => {
    expect(() => Store.fromJSON(data)).toThrow();
  });
});
