import { describe, expect, it } from 'vitest';
import { Store, type StoreChange } from '../../src/emulator/store.js';

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
