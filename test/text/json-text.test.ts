import { describe, expect, it } from 'vitest';
import {
  arrayElementTexts,
  compactJson,
  formatJsonText,
  prettyJson,
  rememberJsonText,
} from '../../src/text/json-text.js';

const SAMPLES = [
  '{}',
  '[]',
  '"x"',
  '  12 ',
  'null',
  '[[[]]]',
  '{"a":1,"b":[1,2,{"c":null}],"d":{},"e":[],"f":"t\\"x\\\\"}',
  '{ "__proto__" : { "a" : true } , "b" : false }',
  '{"user_group":{"token":"t","properties":{"nested":[1,[2,[3]]]}}}',
];

describe('formatJsonText', () => {
  it.each(SAMPLES)(
    'pretty-prints %s exactly as JSON.stringify(…, 2) does when numbers are plain',
    (text) => {
      expect(formatJsonText(text, { indent: 2 })).toBe(JSON.stringify(JSON.parse(text), null, 2));
      expect(formatJsonText(text, { indent: 0 })).toBe(JSON.stringify(JSON.parse(text)));
    },
  );

  it('keeps the server numbers as sent: big integers, 1e400, trailing zeros', () => {
    const text = '{"big":12345678901234567890123,"huge":1e400,"f":1.50,"neg":-0}';
    const out = formatJsonText(text, { indent: 2 });
    expect(out).toContain('"big": 12345678901234567890123');
    expect(out).toContain('"huge": 1e400');
    expect(out).toContain('"f": 1.50');
    expect(out).toContain('"neg": -0');
  });

  it.each([
    '{',
    '{"a"}',
    '[1,]',
    '{"a":1,}',
    '[1 2]',
    'tru',
    '"\u0001"',
    '{} x',
    '',
    '{"a":1]',
    '[}',
  ])('refuses invalid JSON %j', (text) => {
    expect(() => formatJsonText(text, { indent: 2 })).toThrow(SyntaxError);
  });

  it('writes DEL and C1 characters inside strings as \\u escapes, keys too', () => {
    const out = formatJsonText('{"k\u009b":"\u009b31m\u007f\u0085","e":"\\u001b[2J"}', {
      indent: 0,
    });
    expect(out).toBe('{"k\\u009b":"\\u009b31m\\u007f\\u0085","e":"\\u001b[2J"}');
    expect(out).not.toMatch(/[\u007f-\u009f]/);
  });

  it('redacts secret-named keys (arrays under them too) and secret values anywhere', () => {
    const text =
      '{"token":"abc","list":["x",{"api_token":["y",["z"]],"n":1}],"echo":"was SECRETVALUE1 sent","__proto__":{"token":"p"}}';
    const out = formatJsonText(text, { indent: 0, secretKey: /token/i, secrets: ['SECRETVALUE1'] });
    expect(JSON.parse(out)).toEqual(
      JSON.parse(
        '{"token":"[REDACTED]","list":["x",{"api_token":["[REDACTED]",["[REDACTED]"]],"n":1}],"echo":"was [REDACTED] sent","__proto__":{"token":"[REDACTED]"}}',
      ),
    );
  });

  it('re-indents 100,000 levels of nesting without recursion', () => {
    const depth = 100_000;
    const text = `${'{"a":['.repeat(depth)}123456789012345678901234567890${']}'.repeat(depth)}`;
    const out = formatJsonText(text, { indent: 2 });
    expect(out).toContain('123456789012345678901234567890');
    expect(out.length).toBeLessThan(text.length * 2);
    expect(out.replace(/\s/g, '')).toBe(text);
    expect(formatJsonText(text, { indent: 0 })).toBe(text);
  });
});

describe('prettyJson', () => {
  it('prints a remembered answer from its text, with its secrets cut out', () => {
    const text = '{"n":12345678901234567890123,"m":"key SECRETVALUE1"}';
    const body = JSON.parse(text) as object;
    rememberJsonText(body, text, ['SECRETVALUE1']);
    expect(prettyJson(body)).toBe('{\n  "n": 12345678901234567890123,\n  "m": "key [REDACTED]"\n}');
  });

  it('prints other values as JSON, C1 escaped', () => {
    expect(prettyJson({ a: '\u009b' })).toBe('{\n  "a": "\\u009b"\n}');
  });
});

describe('compactJson', () => {
  it.each([
    null,
    1,
    'a"b',
    [],
    {},
    [1, 'x', null, { a: [true, false] }],
    { a: 1, b: { c: [1, 2, { d: 'e' }] }, ['__proto__']: { x: 1 } },
    { u: undefined, n: Number.POSITIVE_INFINITY, arr: [undefined] },
  ])('equals JSON.stringify for %j', (value) => {
    expect(compactJson(value)).toBe(JSON.stringify(value));
  });

  it('handles 100,000 levels without recursion', () => {
    const depth = 100_000;
    const text = `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;
    expect(compactJson(JSON.parse(text))).toBe(text);
  });
});

describe('arrayElementTexts', () => {
  const PATH = ['results', 'customers'];

  it('cuts each element from the text: numbers exact, escapes and separators as sent', () => {
    const text =
      '{"total_count":2,"results":{"customers":[{"n":12345678901234567890123,"x":1e400,"s":"a\\u00e9\\"]}"},{"a": [1, {"b":"}"}]}]}}';
    expect(arrayElementTexts(text, PATH)).toEqual([
      '{"n":12345678901234567890123,"x":1e400,"s":"a\\u00e9\\"]}"}',
      '{"a": [1, {"b":"}"}]}',
    ]);
    expect(arrayElementTexts('{"results":{"customers":[]}}', PATH)).toEqual([]);
  });

  it('prints an element that spans lines on one line, and escapes C1 characters', () => {
    const pretty = JSON.stringify({ results: { customers: [{ a: [1, 2], b: 'c' }] } }, null, 2);
    expect(arrayElementTexts(pretty, PATH)).toEqual(['{"a":[1,2],"b":"c"}']);
    expect(arrayElementTexts('{"results":{"customers":[{"s":"\u009b2J"}]}}', PATH)).toEqual([
      '{"s":"\\u009b2J"}',
    ]);
  });

  it('skips the other members, nested or not, and takes the last of repeated keys', () => {
    const text =
      '{"results":{"customers":[{"old":1}]},"customers":[{"top":1}],"x":{"results":{"customers":[{"deep":1}]}},"results":{"other":[{"y":"]"}],"customers":[{"new":1}],"z":2}}';
    expect(arrayElementTexts(text, PATH)).toEqual(['{"new":1}']);
    expect(arrayElementTexts('{"results":{"customers":[{"a":1}]},"results":{}}', PATH)).toBe(
      undefined,
    );
  });

  it.each([['{"results":{"customers":{}}}'], ['{"results":[]}'], ['[]'], ['{"total_count":0}']])(
    'is undefined where there is no such array: %s',
    (text) => {
      expect(arrayElementTexts(text, PATH)).toBe(undefined);
    },
  );

  it('matches an escaped key as JSON.parse reads it', () => {
    const text = '{"res\\u0075lts":{"customers":[1,"two",null]}}';
    expect(JSON.parse(text)).toHaveProperty('results');
    expect(arrayElementTexts(text, PATH)).toEqual(['1', '"two"', 'null']);
  });
});
