import { describe, expect, it } from 'vitest';
import { Store } from '../../src/emulator/store.js';

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
