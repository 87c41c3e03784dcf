import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import {
  collectKeyValues,
  endpointUrl,
  formatBaseUrl,
  groupTextProblem,
  isLoopbackHost,
  mergeObjects,
  parseBaseUrl,
  parseDuration,
  parseJsonObject,
  parseJsonSource,
  parseKeyValue,
  parseStringMap,
  parseTimeoutSeconds,
  readDuration,
} from '../../src/input/parse.js';
import { duplicateJsonKey, jsonNestingDepth, mayRepeatKeys } from '../../src/text/json-lexer.js';

/** Runs `fn`; returns what it threw, or fails when it did not throw. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error, but none was thrown');
}

/** The property every parser keeps: it returns, or it throws a UsageError, nothing else. */
function parsesOrUsage(fn: () => unknown): boolean {
  try {
    fn();
    return true;
  } catch (error) {
    return error instanceof UsageError && error.exitCode === 2;
  }
}

function expectUsage(fn: () => unknown, message?: RegExp): void {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(UsageError);
  if (message) expect((error as Error).message).toMatch(message);
}

const secure = { insecureHttp: false };
const insecure = { insecureHttp: true };

// Keys as typed after --property: anything but '=' and not blank. Includes unicode and the names
// of Object.prototype members, which a naive object would mishandle.
const keyArb = fc
  .oneof(
    fc.string({ minLength: 1 }),
    fc.string({ unit: 'grapheme', minLength: 1 }),
    fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'a.b', ' x '),
  )
  .filter((k) => !k.includes('=') && k.trim() !== '');

describe('parseKeyValue', () => {
  it.each<[string, [string, string]]>([
    ['plan=pro', ['plan', 'pro']],
    ['a=', ['a', '']],
    ['dsn=postgres://u:p@h/db?sslmode=require', ['dsn', 'postgres://u:p@h/db?sslmode=require']],
    ['b64=YWJj==', ['b64', 'YWJj==']],
    [' spaced key = spaced value ', [' spaced key ', ' spaced value ']],
    ['ünï=cødé', ['ünï', 'cødé']],
    ['k==', ['k', '=']],
  ])('%j -> %j', (text, expected) => {
    expect(parseKeyValue(text, '--property')).toEqual(expected);
  });

  it.each<[string, RegExp]>([
    ['plan', /--property expects key=value, got "plan"/],
    ['', /expects key=value/],
    ['=value', /--property has an empty key/],
    ['  =value', /empty key/],
    ['\t=x', /empty key/],
  ])('%j is a usage error', (text, message) => {
    expectUsage(() => parseKeyValue(text, '--property'), message);
  });

  it('names the flag it was given', () => {
    expectUsage(() => parseKeyValue('x', '--mapping'), /^--mapping /);
  });

  it('property: any non-blank key without "=" and any value round-trip exactly', () => {
    fc.assert(
      fc.property(keyArb, fc.string({ unit: 'grapheme' }), (k, v) => {
        expect(parseKeyValue(`${k}=${v}`, '--property')).toEqual([k, v]);
      }),
    );
  });

  it('property: any string parses or is a usage error', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) =>
        parsesOrUsage(() => parseKeyValue(text, '--property')),
      ),
    );
  });
});

describe('collectKeyValues', () => {
  it.each<[string[], Record<string, string>]>([
    [[], {}],
    [['a=1'], { a: '1' }],
    [['a=1', 'b=2', 'c=x=y'], { a: '1', b: '2', c: 'x=y' }],
    [['A=1', 'a=2'], { A: '1', a: '2' }],
  ])('%j -> %j', (items, expected) => {
    const result = collectKeyValues(items, '--mapping');
    expect(result).toEqual(expected);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
  });

  it.each<[string[], RegExp]>([
    [['a=1', 'a=1'], /--mapping sets "a" more than once/],
    [['a=1', 'bad'], /expects key=value/],
    [['=1'], /empty key/],
  ])('%j is a usage error', (items, message) => {
    expectUsage(() => collectKeyValues(items, '--mapping'), message);
  });

  it('keeps keys named like Object.prototype members as plain own properties', () => {
    const result = collectKeyValues(['__proto__=x', 'constructor=y'], '--property');
    expect(Object.hasOwn(result, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(result, '__proto__')?.value).toBe('x');
    expect(result.constructor).toBe('y');
    expect(JSON.parse(JSON.stringify(result))).toEqual(
      JSON.parse('{"__proto__":"x","constructor":"y"}'),
    );
  });

  it('property: distinct keys give exactly those entries; a repeated key is a usage error', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(keyArb, fc.string()), { selector: ([k]) => k }),
        (pairs) => {
          const result = collectKeyValues(
            pairs.map(([k, v]) => `${k}=${v}`),
            '--property',
          );
          // Integer-like keys come first in any JS object, so compare regardless of order.
          const byKey = (a: [string, string], b: [string, string]) => (a[0] < b[0] ? -1 : 1);
          expect(Object.entries(result).sort(byKey)).toEqual([...pairs].sort(byKey));
          if (pairs.length > 0) {
            const [k] = pairs[0] as [string, string];
            expectUsage(
              () => collectKeyValues([`${k}=1`, `${k}=2`], '--property'),
              /more than once/,
            );
          }
        },
      ),
    );
  });

  it('property: any list of strings parses or is a usage error', () => {
    fc.assert(
      fc.property(fc.array(fc.string()), (items) =>
        parsesOrUsage(() => collectKeyValues(items, '--mapping')),
      ),
    );
  });
});

describe('mergeObjects', () => {
  it.each<[Record<string, unknown> | undefined, Record<string, unknown>, unknown]>([
    [undefined, {}, undefined],
    [{}, {}, {}],
    [{ a: 1 }, {}, { a: 1 }],
    [undefined, { b: '2' }, { b: '2' }],
    [{ a: 1, n: null }, { b: '2' }, { a: 1, n: null, b: '2' }],
  ])('%j + %j -> %j', (json, pairs, expected) => {
    expect(mergeObjects(json, pairs, '--properties', '--property')).toEqual(expected);
  });

  it('a key set by both is a usage error naming both flags', () => {
    expectUsage(
      () => mergeObjects<unknown>({ a: 1 }, { a: '1' }, '--properties', '--property'),
      /"a" is set by both --properties and --property/,
    );
  });

  it('does not change its inputs', () => {
    const json: Record<string, unknown> = { a: 1 };
    const pairs: Record<string, unknown> = { b: '2' };
    mergeObjects(json, pairs, '--properties', '--property');
    expect(json).toEqual({ a: 1 });
    expect(pairs).toEqual({ b: '2' });
  });

  it('keeps a __proto__ key from --property as data, as it keeps one from JSON', () => {
    const fromPairs = collectKeyValues(['__proto__=x'], '--property');
    const merged = mergeObjects(undefined, fromPairs, '--properties', '--property');
    expect(JSON.stringify(merged)).toBe('{"__proto__":"x"}');
    const fromJson = parseJsonObject('{"__proto__":{"y":1}}', '--properties', 'the value');
    expect(JSON.stringify(mergeObjects(fromJson, {}, '--properties', '--property'))).toBe(
      '{"__proto__":{"y":1}}',
    );
  });

  it('property: disjoint keys merge to exactly their union', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(keyArb, fc.boolean()), { selector: ([k]) => k }),
        (entries) => {
          const json: Record<string, unknown> = Object.fromEntries(
            entries.filter(([, inJson]) => inJson).map(([k]) => [k, 1]),
          );
          const pairs = Object.fromEntries(
            entries.filter(([, inJson]) => !inJson).map(([k]) => [k, 'v']),
          );
          const merged = mergeObjects(json, pairs, '--properties', '--property') ?? {};
          expect(Object.keys(merged).sort()).toEqual(entries.map(([k]) => k).sort());
        },
      ),
    );
  });
});

describe('parseJsonSource', () => {
  it.each([
    ['-', { kind: 'stdin' }],
    ['@props.json', { kind: 'file', path: 'props.json' }],
    ['@/abs/p q.json', { kind: 'file', path: '/abs/p q.json' }],
    ['@@x', { kind: 'file', path: '@x' }],
    ['{"a":1}', { kind: 'inline', text: '{"a":1}' }],
    [' -', { kind: 'inline', text: ' -' }],
    ['--', { kind: 'inline', text: '--' }],
    ['', { kind: 'inline', text: '' }],
  ])('%j -> %j', (text, expected) => {
    expect(parseJsonSource(text, '--properties')).toEqual(expected);
  });

  it('"@" alone is a usage error naming the flag', () => {
    expectUsage(() => parseJsonSource('@', '--mapping-json'), /--mapping-json @ needs a file path/);
  });

  it('property: any string parses or is a usage error', () => {
    fc.assert(fc.property(fc.string(), (text) => parsesOrUsage(() => parseJsonSource(text, '-x'))));
  });
});

describe('parseJsonObject', () => {
  it.each<[string, unknown]>([
    ['{}', {}],
    [
      '{"plan":"pro","seats":10,"tags":["a"],"n":null,"o":{"x":true}}',
      { plan: 'pro', seats: 10, tags: ['a'], n: null, o: { x: true } },
    ],
    ['  {"a":1}\n', { a: 1 }],
  ])('%s parses', (text, expected) => {
    expect(parseJsonObject(text, '--properties', 'the value')).toEqual(expected);
  });

  it.each<[string, RegExp]>([
    ['', /--properties: the value is not valid JSON/],
    ['{', /not valid JSON/],
    ["{'a':1}", /not valid JSON/],
    ['{"a":1,}', /not valid JSON/],
    ['[]', /must be a JSON object, got an array/],
    ['null', /got null/],
    ['1', /got a number/],
    ['"s"', /got a string/],
    ['true', /got a boolean/],
  ])('%j is a usage error', (text, message) => {
    expectUsage(() => parseJsonObject(text, '--properties', 'the value'), message);
  });

  // JSON.parse keeps the last of two equal keys without a word: `"plan":"pro","plan":"free"`
  // would send "free" to someone who read "pro".
  it.each<[string, string]>([
    ['{"plan":"pro","plan":"free"}', '"plan"'],
    ['{"plan":"pro","seats":1,"\\u0070lan":"free"}', '"plan"'],
    ['{"limits":{"seats":1,"seats":2}}', '"limits"."seats"'],
    ['{"tiers":[{"a":1},{"b":1,"b":2}]}', '"tiers".[1]."b"'],
    ['{"__proto__":1,"__proto__":2}', '"__proto__"'],
  ])('%s: a key given twice is a usage error naming it', (text, key) => {
    expectUsage(
      () => parseJsonObject(text, '--properties', 'the value'),
      new RegExp(
        `^--properties: the value has the key ${key.replace(/[.[\]\\]/g, '\\$&')} more than once$`,
      ),
    );
  });

  it.each([
    '{"a":{"x":1},"b":{"x":1}}',
    '{"a":[{"x":1},{"x":2}]}',
    '{"a":"\\"a\\":1,","b":"{\\"a\\""}',
    '{"a":1,"A":2,"a ":3}',
  ])('%s: equal keys in different objects, or in strings, are fine', (text) => {
    expect(parseJsonObject(text, '--properties', 'the value')).toEqual(JSON.parse(text));
  });

  it('property: duplicateJsonKey finds a repeated key wherever it is, and only then', () => {
    fc.assert(
      fc.property(fc.json(), fc.string(), (json, key) => {
        expect(duplicateJsonKey(json)).toBeUndefined();
        const twice = `{${JSON.stringify(key)}:${json},"z":[${json}],${JSON.stringify(key)}:1}`;
        const path = duplicateJsonKey(twice);
        expect(path).toEqual([key]);
      }),
    );
  });

  it('property: mayRepeatKeys is false only where duplicateJsonKey finds nothing', () => {
    const flat = fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.constant(null)));
    fc.assert(
      fc.property(flat, fc.json(), fc.string(), (object, json, key) => {
        for (const text of [
          JSON.stringify(object),
          `{${JSON.stringify(key)}:1${Object.keys(object).length > 0 ? ',' : ''}${JSON.stringify(object).slice(1)}`,
          `{${JSON.stringify(key)}:${json}}`,
        ]) {
          const value = JSON.parse(text) as object;
          if (duplicateJsonKey(text) !== undefined) expect(mayRepeatKeys(text, value)).toBe(true);
        }
        // A flat row without repeats takes the fast path: no key set built.
        expect(mayRepeatKeys(JSON.stringify(object), object)).toBe(false);
      }),
    );
  });

  it.each(['{"a":1,"a":2}', '{"a":"x,y","a":"z"}', '{"a":"\\\\","a":1}', '{"\\u0061":1,"a":2}'])(
    'mayRepeatKeys(%s) sends a repeated key to the full check',
    (text) => {
      expect(mayRepeatKeys(text, JSON.parse(text) as object)).toBe(true);
    },
  );

  it('property: groupTextProblem answers the same for printable ASCII as the full rules do', () => {
    // The fast path takes printable ASCII without a space at either end; every other text goes
    // through the rules, which must agree with it on the texts it takes.
    const ascii = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    });
    fc.assert(
      fc.property(ascii, (text) => {
        const problem = groupTextProblem(text, 'id');
        if (text.trim() === '') expect(problem).toBe('cannot be empty');
        else if (text !== text.trim()) expect(problem).toBe('has leading or trailing whitespace');
        else expect(problem).toBeUndefined();
      }),
    );
    expect(groupTextProblem('a\u200bb', 'id')).toMatch(/zero width space/);
    expect(groupTextProblem('a\tb', 'name')).toBe('contains a control character');
  });

  it('says where the JSON came from', () => {
    expectUsage(
      () => parseJsonObject('x', '--properties', 'file "p.json"'),
      /file "p.json" is not valid JSON/,
    );
  });

  it('property: any JSON object round-trips', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (object) => {
        const text = JSON.stringify(object);
        expect(JSON.stringify(parseJsonObject(text, '-p', 'v'))).toBe(text);
      }),
    );
  });

  it('property: any string, or any JSON text, parses or is a usage error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) =>
        parsesOrUsage(() => parseJsonObject(text, '-p', 'v')),
      ),
    );
  });
});

describe('parseStringMap', () => {
  it.each<[Record<string, unknown>]>([[{}], [{ sales: 'acme_db' }], [{ a: '', b: 'x y' }]])(
    '%j is a valid mapping',
    (value) => {
      expect(parseStringMap(value, '--mapping-json')).toEqual(value);
    },
  );

  it.each<[Record<string, unknown>, RegExp]>([
    [{ a: 1 }, /value of "a" must be a string, got a number/],
    [{ a: null }, /got null/],
    [{ a: ['x'] }, /got an array/],
    [{ a: { b: 'c' } }, /got a object/],
    [{ a: true }, /got a boolean/],
    [{ '': 'x' }, /--mapping-json has an empty key/],
  ])('%j is a usage error', (value, message) => {
    expectUsage(() => parseStringMap(value, '--mapping-json'), message);
  });

  it('property: an object is accepted exactly when every value is a string and no key is empty', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (object) => {
        const valid = Object.entries(object).every(([k, v]) => k !== '' && typeof v === 'string');
        expect(parsesOrUsage(() => parseStringMap(object, '-m'))).toBe(true);
        let accepted = true;
        try {
          parseStringMap(object, '-m');
        } catch {
          accepted = false;
        }
        expect(accepted).toBe(valid);
      }),
    );
  });
});

describe('readDuration', () => {
  // What --give-up-after and --since take: each flag's units, and fractions or not.
  const limit = { units: ['ms', 's', 'm', 'h'], fractions: true } as const;
  const since = { units: ['s', 'm', 'h', 'd', 'w'], fractions: false } as const;

  it.each<[string, typeof limit | typeof since, number | undefined]>([
    ['90s', limit, 90_000],
    ['10m', limit, 600_000],
    ['1h30m', limit, 5_400_000],
    ['2m30s', limit, 150_000],
    ['500ms', limit, 500],
    ['1.5m', limit, 90_000],
    ['0.0001s', limit, 0.1],
    [' 10M ', limit, 600_000],
    ['0s', limit, 0],
    ['90m', since, 5_400_000],
    ['12H', since, 43_200_000],
    ['7d', since, 604_800_000],
    ['2w', since, 1_209_600_000],
    ['1d12h', since, 129_600_000],
    ['1w1d1h1m1s', since, 694_861_000],
    // Not of the form, or a unit or a fraction the flag does not take:
    ['1d', limit, undefined],
    ['1w', limit, undefined],
    ['500ms', since, undefined],
    ['1.5h', since, undefined],
    ['90', limit, undefined],
    ['90', since, undefined],
    ['', limit, undefined],
    ['m', limit, undefined],
    ['-5m', limit, undefined],
    ['10 m', limit, undefined],
    ['1h 30m', since, undefined],
    ['10min', limit, undefined],
    ['10m10', limit, undefined],
    ['.5m', limit, undefined],
    ['1e3s', limit, undefined],
    ['2026-01-31', since, undefined],
  ])('%j (%j) -> %j', (text, form, ms) => {
    expect(readDuration(text, form)).toBe(ms);
  });

  it('reads no unit it was not given', () => {
    expect(readDuration('1s', { units: [], fractions: true })).toBeUndefined();
  });
});

describe('parseDuration', () => {
  it.each<[string, number]>([
    ['90s', 90_000],
    ['10m', 600_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['2m30s', 150_000],
    ['500ms', 500],
    ['1.5m', 90_000],
    ['90', 90_000],
    ['0.25', 250],
    [' 10M ', 600_000],
    ['168h', 604_800_000],
  ])('%j -> %d ms', (text, ms) => {
    expect(parseDuration(text, '--give-up-after')).toBe(ms);
  });

  it.each([
    '',
    ' ',
    '0',
    '0s',
    '0.0001s',
    '-5m',
    '10 m',
    '10min',
    '1d',
    'm',
    '1h 30m',
    '169h',
    '1e3',
    'Infinity',
    'NaN',
    '10m10',
  ])('refuses %j as a usage error naming the flag', (text) => {
    expectUsage(() => parseDuration(text, '--give-up-after'), /^--give-up-after /);
  });

  it('returns a whole number of ms, or throws a usage error, for any text', () => {
    fc.assert(
      fc.property(fc.string(), (text) =>
        parsesOrUsage(() => {
          const ms = parseDuration(text, '--x');
          if (!Number.isInteger(ms) || ms < 1) throw new Error(`bad result ${ms}`);
        }),
      ),
    );
  });
});

describe('parseTimeoutSeconds', () => {
  it.each<[string, number]>([
    ['30', 30],
    ['1', 1],
    ['0.5', 0.5],
    ['.5', 0.5],
    ['5.', 5],
    [' 10 ', 10],
    ['007', 7],
    ['3600', 3600],
    ['0.001', 0.001],
  ])('%j -> %d', (text, seconds) => {
    expect(parseTimeoutSeconds(text)).toBe(seconds);
  });

  it.each([
    '0',
    '0.0',
    '.0',
    '3600.5',
    '3601',
    '-1',
    '+5',
    '1e3',
    '1s',
    '0x10',
    'abc',
    '',
    ' ',
    '.',
    'Infinity',
    'NaN',
    '1,5',
    '1 000',
  ])('%j is a usage error naming --timeout', (text) => {
    expectUsage(() => parseTimeoutSeconds(text), /--timeout/);
  });

  it('property: every whole number of seconds from 1 to 3600 parses to itself', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3600 }), (n) => {
        expect(parseTimeoutSeconds(String(n))).toBe(n);
      }),
    );
  });

  it('property: whatever it returns is more than 0 and at most an hour; else a usage error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.double().map(String)), (text) => {
        try {
          const seconds = parseTimeoutSeconds(text);
          return seconds > 0 && seconds <= 3600;
        } catch (error) {
          return error instanceof UsageError;
        }
      }),
    );
  });
});

describe('parseBaseUrl', () => {
  it.each<[string, { insecureHttp: boolean }, string]>([
    ['https://ugs.example.com', secure, 'https://ugs.example.com/api/user'],
    ['https://ugs.example.com/', secure, 'https://ugs.example.com/api/user'],
    ['https://ugs.example.com//', secure, 'https://ugs.example.com/api/user'],
    ['https://ugs.example.com/prefix', secure, 'https://ugs.example.com/prefix/api/user'],
    ['https://ugs.example.com/prefix/', secure, 'https://ugs.example.com/prefix/api/user'],
    ['https://ugs.example.com/prefix///', secure, 'https://ugs.example.com/prefix/api/user'],
    ['https://ugs.example.com/a/b/c/', secure, 'https://ugs.example.com/a/b/c/api/user'],
    ['https://ugs.example.com:8443/p', secure, 'https://ugs.example.com:8443/p/api/user'],
    ['https://ugs.example.com:443/', secure, 'https://ugs.example.com/api/user'],
    ['HTTPS://UGS.Example.COM/Prefix', secure, 'https://ugs.example.com/Prefix/api/user'],
    ['  https://ugs.example.com/p  ', secure, 'https://ugs.example.com/p/api/user'],
    ['https://bücher.example', secure, 'https://xn--bcher-kva.example/api/user'],
    ['http://localhost:8080', secure, 'http://localhost:8080/api/user'],
    ['http://LOCALHOST:8080/x/', secure, 'http://localhost:8080/x/api/user'],
    ['http://app.localhost', insecure, 'http://app.localhost/api/user'],
    ['http://127.0.0.1:9000', secure, 'http://127.0.0.1:9000/api/user'],
    ['http://127.10.20.30', secure, 'http://127.10.20.30/api/user'],
    ['http://[::1]:8080/', secure, 'http://[::1]:8080/api/user'],
    ['http://[0:0:0:0:0:0:0:1]', secure, 'http://[::1]/api/user'],
    ['http://localhost.:8080', secure, 'http://localhost.:8080/api/user'],
    ['http://[::ffff:127.0.0.1]', secure, 'http://[::ffff:7f00:1]/api/user'],
    ['http://ugs.example.com/p', insecure, 'http://ugs.example.com/p/api/user'],
    ['http://10.1.2.3:8080', insecure, 'http://10.1.2.3:8080/api/user'],
  ])('%j (%j) -> endpoint %s', (text, options, endpoint) => {
    expect(endpointUrl(parseBaseUrl(text, options), '/api/user').href).toBe(endpoint);
  });

  it.each<[string, string]>([
    ['https://ugs.example.com/', 'https://ugs.example.com'],
    ['https://ugs.example.com/prefix//', 'https://ugs.example.com/prefix'],
    ['http://[::1]:8080/', 'http://[::1]:8080'],
  ])('%j is stored as %j', (text, stored) => {
    expect(formatBaseUrl(parseBaseUrl(text, secure))).toBe(stored);
  });

  it.each<[string, { insecureHttp: boolean }, RegExp]>([
    [
      'http://ugs.example.com',
      secure,
      /refusing to send the API token over plain http to ugs\.example\.com/,
    ],
    ['http://10.0.0.1', secure, /plain http/],
    ['http://128.0.0.1', secure, /plain http/],
    ['http://127.0.0.1.evil.example', secure, /plain http/],
    ['http://localhost.evil.example', secure, /plain http/],
    ['http://evil.localhost', secure, /plain http to evil\.localhost/],
    ['http://a.b.localhost.', secure, /plain http/],
    ['http://[::2]', secure, /plain http/],
    ['http://[::ffff:10.0.0.1]', secure, /plain http/],
    ['https://user:pass@ugs.example.com', insecure, /user name or password/],
    ['https://user@ugs.example.com', insecure, /user name or password/],
    ['https://:pass@ugs.example.com', insecure, /user name or password/],
    ['http://u:p@localhost', insecure, /user name or password/],
    ['ftp://ugs.example.com', insecure, /must use https/],
    ['file:///etc/passwd', insecure, /must use https/],
    ['javascript:alert(1)', insecure, /must use https/],
    ['ws://localhost', insecure, /must use https/],
    ['data:text/plain,x', insecure, /must use https/],
    ['https://ugs.example.com/?x=1', insecure, /query or fragment/],
    ['https://ugs.example.com/#frag', insecure, /query or fragment/],
    ['', insecure, /invalid base URL ""/],
    ['   ', insecure, /invalid base URL/],
    ['ugs.example.com', insecure, /invalid base URL/],
    ['localhost:4010', insecure, /invalid base URL "localhost:4010": it needs https:\/\//],
    ['127.0.0.1:4010/prefix', insecure, /it needs https:\/\//],
    // A control character in the path: the URL parser's own refusal (escaped), not the hint
    // that would repeat it.
    ['localhost/\u001b[31mred', insecure, /^invalid base URL|must use https/],
    ['//ugs.example.com', insecure, /invalid base URL/],
    ['https://', insecure, /invalid base URL/],
    ['http://', insecure, /invalid base URL/],
    ['https://exa mple.com', insecure, /invalid base URL/],
    ['https://[::1', insecure, /invalid base URL/],
    ['https://ugs.example.com:99999', insecure, /invalid base URL/],
    ['not a url at all', insecure, /invalid base URL/],
  ])('%j (%j) is refused', (text, options, message) => {
    expectUsage(() => parseBaseUrl(text, options), message);
  });

  it('an address without a scheme gets the exact --base-url to use', () => {
    for (const [text, hint] of [
      ['localhost:4010', 'use http://localhost:4010 (a service on this machine)'],
      ['[::1]:4010', 'use http://[::1]:4010 (a service on this machine)'],
      ['analytics.example.com/api', 'use https://analytics.example.com/api'],
    ]) {
      let error: unknown;
      try {
        parseBaseUrl(text ?? '', { insecureHttp: false });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).hint).toBe(hint);
    }
  });

  it('drops an empty query or fragment marker rather than keeping it in every request', () => {
    for (const text of ['https://ugs.example.com/p?', 'https://ugs.example.com/p#']) {
      const url = parseBaseUrl(text, secure);
      expect(formatBaseUrl(url)).toBe('https://ugs.example.com/p');
      expect(endpointUrl(url, '/api/user').href).toBe('https://ugs.example.com/p/api/user');
    }
  });

  const segment = fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/);
  const host = fc.domain();

  it('property: any host, port, path prefix and trailing slashes give {base}/{prefix}/api/user', () => {
    fc.assert(
      fc.property(
        host,
        fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
        fc.array(segment, { maxLength: 4 }),
        fc.integer({ min: 0, max: 3 }),
        (hostname, port, segments, slashes) => {
          const prefix = segments.map((s) => `/${s}`).join('');
          const text = `https://${hostname}${port === undefined ? '' : `:${port}`}${prefix}${'/'.repeat(slashes)}`;
          const url = parseBaseUrl(text, secure);
          const endpoint = endpointUrl(url, '/api/user');
          expect(endpoint.pathname).toBe(`${prefix}/api/user`);
          expect(endpoint.hostname).toBe(hostname.toLowerCase());
          expect(endpoint.search).toBe('');
          expect(formatBaseUrl(url).endsWith('/')).toBe(false);
          // Storing and reading back gives the same endpoint.
          expect(endpointUrl(parseBaseUrl(formatBaseUrl(url), secure), '/api/user').href).toBe(
            endpoint.href,
          );
        },
      ),
    );
  });

  it('property: plain http is accepted exactly for loopback hosts, unless insecureHttp', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.domain(),
          fc.ipV4(),
          fc.constantFrom('localhost', '[::1]', '127.0.0.1', '127.255.0.9'),
        ),
        (hostname) => {
          const text = `http://${hostname}/p`;
          const loopback = isLoopbackHost(new URL(text).hostname);
          expect(parsesOrUsage(() => parseBaseUrl(text, secure))).toBe(true);
          let accepted = true;
          try {
            parseBaseUrl(text, secure);
          } catch {
            accepted = false;
          }
          expect(accepted).toBe(loopback);
          expect(parseBaseUrl(text, insecure).protocol).toBe('http:');
        },
      ),
    );
  });

  it('property: any URL with user info is refused', () => {
    fc.assert(
      fc.property(
        fc.webUrl({ withQueryParameters: false, withFragments: false }),
        fc.stringMatching(/^[a-z0-9]{1,8}$/),
        (web, user) => {
          const url = new URL(web);
          url.username = user;
          expectUsage(() => parseBaseUrl(url.href, insecure), /user name or password/);
        },
      ),
    );
  });

  it('property: any string, or any web URL, parses or is a usage error', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.webUrl({ withQueryParameters: true, withFragments: true }),
          fc.webUrl().map((u) => u.replace(/^https?:/, 'ftp:')),
        ),
        fc.boolean(),
        (text, insecureHttp) => parsesOrUsage(() => parseBaseUrl(text, { insecureHttp })),
      ),
    );
  });
});

describe('isLoopbackHost', () => {
  it.each<[string, boolean]>([
    ['localhost', true],
    ['LocalHost', true],
    ['api.localhost', false],
    ['api.localhost.', false],
    ['localhost.', true],
    ['127.0.0.1', true],
    ['127.0.0.0', true],
    ['127.255.255.255', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['[::1]', true],
    ['0:0:0:0:0:0:0:1', true],
    ['127.256.0.1', false],
    ['127.0.0', false],
    ['127.0.0.1.5', false],
    ['128.0.0.1', false],
    ['10.0.0.1', false],
    ['0.0.0.0', false],
    ['::', false],
    ['::2', false],
    ['localhost.example.com', false],
    ['notlocalhost', false],
    ['example.com', false],
    ['', false],
  ])('%j -> %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe('endpointUrl', () => {
  it.each<[string, string, string]>([
    ['https://h.example/', '/api/user', 'https://h.example/api/user'],
    ['https://h.example/p', '/api/user', 'https://h.example/p/api/user'],
    ['https://h.example/p/', '/api/user', 'https://h.example/p/api/user'],
    ['https://h.example/p//', '/api/user', 'https://h.example/p/api/user'],
    ['https://h.example:8443/a/b', '/api/user', 'https://h.example:8443/a/b/api/user'],
    ['http://[::1]:8080/', '/api/user', 'http://[::1]:8080/api/user'],
  ])('%s + %s -> %s', (base, path, expected) => {
    expect(endpointUrl(new URL(base), path).href).toBe(expected);
  });

  it('does not change the base URL it was given', () => {
    const base = new URL('https://h.example/p');
    endpointUrl(base, '/api/user');
    expect(base.href).toBe('https://h.example/p');
  });
});

describe('jsonNestingDepth', () => {
  it.each([
    ['1', 0],
    ['{}', 1],
    ['{"a":[1,{"b":2}]}', 3],
    ['{"a":"[[[{{{"}', 1],
    ['{"a":"\\"[[["}', 1],
    ['[[],[[]]]', 3],
  ])('%s nests %i deep', (text, depth) => {
    expect(jsonNestingDepth(text)).toBe(depth);
  });

  it('scans 200,000 levels without recursion', () => {
    expect(jsonNestingDepth(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)).toBe(200_000);
  });
});
