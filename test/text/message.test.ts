import { describe, expect, it } from 'vitest';
import { message, quote } from '../../src/text/message.js';

describe('message', () => {
  it('escapes controls in every interpolated value, outside quotes too', () => {
    const path = '/tmp/\u001b[31mred\nfake line';
    expect(message`cannot read ${path}: denied`).toBe(
      'cannot read /tmp/\\u001b[31mred\\u000afake line: denied',
    );
  });

  it('writes a value between double quotes as quote does, its own quotes escaped', () => {
    const name = 'a"b\\c\u009b\u2028\ufffd';
    expect(message`profile "${name}" is unknown`).toBe(`profile ${quote(name)} is unknown`);
  });

  it('leaves the template itself alone and shows numbers and undefined as text', () => {
    expect(message`line one\nline two: ${3} of ${undefined}`).toBe(
      'line one\nline two: 3 of undefined',
    );
  });

  it('can hold another message without escaping it twice', () => {
    const inner = message`bad byte ${'\u0007'}`;
    expect(message`outer: ${inner}`).toBe('outer: bad byte \\u0007');
  });
});
