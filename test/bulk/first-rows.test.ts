/**
 * The first row of each key of a bulk input (src/bulk/first-rows.ts), held outside the heap: a
 * repeat names the row that had the key first, and no two different keys are ever taken for one.
 */
import { describe, expect, it } from 'vitest';
import { FirstRows } from '../../src/bulk/first-rows.js';

/** Keys that differ in ways a byte-wise or lossy store would blur. */
const AWKWARD = [
  '',
  'acme',
  'ACME',
  'café', // U+00E9: one byte in latin1
  'cafe\u0301', // e + combining acute: wide
  '東京',
  '\ud800', // lone surrogates: UTF-8 would turn both into U+FFFD
  '\udfff',
  '😀',
  'x'.repeat(70_000), // longer than the first buffer
];

describe('FirstRows', () => {
  it('answers undefined the first time, then the first row, for 20,000 keys', () => {
    const seen = new FirstRows();
    for (let row = 1; row <= 20_000; row++) {
      expect(seen.firstOrAdd(`acme-corp-${row}`, row)).toBeUndefined();
    }
    for (let row = 1; row <= 20_000; row += 997) {
      expect(seen.firstOrAdd(`acme-corp-${row}`, 99_999)).toBe(row);
    }
  });

  it.each([
    ['its own hash', undefined],
    ['one hash for every key', () => 7],
  ])('keeps awkward keys apart and exact, with %s', (_name, hash) => {
    const seen = new FirstRows(hash);
    AWKWARD.forEach((key, index) => {
      expect(seen.firstOrAdd(key, index + 1), JSON.stringify(key.slice(0, 9))).toBeUndefined();
    });
    AWKWARD.forEach((key, index) => {
      expect(seen.firstOrAdd(key, 1000), JSON.stringify(key.slice(0, 9))).toBe(index + 1);
    });
  });
});
