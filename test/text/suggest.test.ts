import { describe, expect, it } from 'vitest';
import { editDistance, orList, suggestNames } from '../../src/text/suggest.js';

describe('editDistance', () => {
  it.each([
    ['get', 'get', 0],
    ['gte', 'get', 1],
    ['stagin', 'staging', 1],
    ['', 'abc', 3],
    ['create', 'rotate', 3],
    ['kitten', 'sitting', 3],
  ])('%s -> %s is %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe('suggestNames', () => {
  it('offers the closest names, none when nothing is close', () => {
    expect(suggestNames('stagin', ['staging', 'prod', 'default'])).toEqual(['staging']);
    expect(suggestNames('STAGING', ['staging'])).toEqual(['staging']);
    expect(suggestNames('zzzzzz', ['staging', 'prod'])).toEqual([]);
    expect(suggestNames('ab', ['ac', 'ad'])).toEqual(['ac', 'ad']);
  });

  it('a changing candidate loses a tie to a harmless one, but not a closer match', () => {
    const candidates = [
      { name: 'sat', changesData: true },
      { name: 'set', changesData: false },
    ];
    expect(suggestNames('sot', candidates)).toEqual(['set']);
    expect(suggestNames('sa', candidates)).toEqual(['sat']);
    expect(suggestNames('rotat', [{ name: 'rotate', changesData: true }])).toEqual(['rotate']);
  });

  it('maps a word to the suggestion it stands for', () => {
    expect(
      suggestNames('create', [{ name: 'rotate' }, { name: 'create', suggest: 'get' }]),
    ).toEqual(['get']);
  });

  it('orList joins names for a hint', () => {
    expect(orList([])).toBe('');
    expect(orList(['a'])).toBe('a');
    expect(orList(['a', 'b', 'c'])).toBe('a, b or c');
  });
});
