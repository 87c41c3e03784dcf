import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  findJsonSyntaxError,
  JsonLexer,
  type JsonStep,
  jsonNestingDepth,
} from '../../src/text/json-lexer.js';

/** Every token of `text` as [kind, text], and how the reading ended. */
function tokens(text: string, checked = true): { tokens: [JsonStep, string][]; last: JsonStep } {
  const lexer = new JsonLexer(text, { checked });
  const found: [JsonStep, string][] = [];
  let kind = lexer.next();
  for (; kind !== 'end' && kind !== 'error'; kind = lexer.next()) {
    found.push([kind, text.slice(lexer.start, lexer.end)]);
  }
  return { tokens: found, last: kind };
}

/** What JSON.parse says of `text`: undefined when it parses, else its message. */
function parseFailure(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('JsonLexer, checked', () => {
  it.each<[string, [JsonStep, string][]]>([
    ['1', [['number', '1']]],
    [' -0.5e+10 ', [['number', '-0.5e+10']]],
    ['"a\\"b"', [['string', '"a\\"b"']]],
    [
      '[]',
      [
        ['[', '['],
        [']', ']'],
      ],
    ],
    [
      '{"a": [true, false, null]}',
      [
        ['{', '{'],
        ['string', '"a"'],
        [':', ':'],
        ['[', '['],
        ['true', 'true'],
        [',', ','],
        ['false', 'false'],
        [',', ','],
        ['null', 'null'],
        [']', ']'],
        ['}', '}'],
      ],
    ],
    ['12345678901234567890123', [['number', '12345678901234567890123']]],
    ['"\\u00e9\\n\\/"', [['string', '"\\u00e9\\n\\/"']]],
  ])('reads %j', (text, expected) => {
    expect(tokens(text)).toEqual({ tokens: expected, last: 'end' });
  });

  it('tells a key from a string value, and counts the depth', () => {
    const lexer = new JsonLexer('{"k":["v",{}]}');
    const seen: string[] = [];
    for (let kind = lexer.next(); kind !== 'end'; kind = lexer.next()) {
      seen.push(`${kind}${lexer.isKey ? ' key' : ''}@${lexer.depth}`);
    }
    expect(seen).toEqual([
      '{@1',
      'string key@1',
      ':@1',
      '[@2',
      'string@2',
      ',@2',
      '{@3',
      '}@2',
      ']@1',
      '}@0',
    ]);
    expect(lexer.deepest).toBe(3);
  });

  it.each<[string, number, string]>([
    ['', 0, 'unexpected end of the file'],
    ['{', 1, 'unexpected end of the file'],
    ['{"a" 1}', 5, "expected ':' after a property name"],
    ['{"a":1,}', 7, 'expected a property name in double quotes'],
    ['{1:2}', 1, 'expected a property name in double quotes'],
    ['[1 2]', 3, "expected ',' or ']'"],
    ['{"a":1]', 6, "expected ',' or '}'"],
    ['[1,]', 3, 'unexpected character'],
    ['tru', 3, 'unexpected end of the file'],
    ['trux', 3, 'unexpected character'],
    ['-x', 1, 'no digit after a minus sign'],
    ['1.e3', 2, 'no digit after a decimal point'],
    ['1e+', 3, 'unexpected end of the file'],
    ['1ex', 2, 'no digit in an exponent'],
    ['01', 1, 'unexpected text after the JSON value'],
    ['{} x', 3, 'unexpected text after the JSON value'],
    ['"a\u0001"', 2, 'control character in a string'],
    ['"\\x"', 2, 'bad escape in a string'],
    ['"\\u12g4"', 5, 'bad \\u escape in a string'],
    ['"abc', 4, 'unexpected end of the file'],
  ])('stops at the first error in %j: offset %i, %s', (text, offset, reason) => {
    const lexer = new JsonLexer(text);
    let kind = lexer.next();
    while (kind !== 'end' && kind !== 'error') kind = lexer.next();
    expect(kind).toBe('error');
    expect(lexer.error).toEqual({ offset, reason });
    expect(lexer.next()).toBe('error');
    expect(findJsonSyntaxError(text)).toEqual({ offset, reason });
  });

  it('property: any JSON value, compact or indented, is read back token for token', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 4 }), (value, indent) => {
        const compact = JSON.stringify(value);
        const text = JSON.stringify(value, null, indent);
        const read = tokens(text);
        expect(read.last).toBe('end');
        expect(read.tokens.map(([, token]) => token).join('')).toBe(compact);
      }),
      { numRuns: 300 },
    );
  });

  it('property: a corrupted text is an error exactly when JSON.parse refuses it, at its position', () => {
    const edit = fc.record({
      at: fc.nat(),
      cut: fc.integer({ min: 0, max: 2 }),
      insert: fc.oneof(
        fc.constantFrom('', '{', '}', '[', ']', ',', ':', '"', '\\', '-', '.', 'e', '0', ' '),
        fc.string({ maxLength: 2 }),
      ),
    });
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.array(edit, { minLength: 1, maxLength: 3 }),
        (value, edits) => {
          let text = JSON.stringify(value, null, 1);
          for (const { at, cut, insert } of edits) {
            const where = at % (text.length + 1);
            text = text.slice(0, where) + insert + text.slice(where + cut);
          }
          const failure = parseFailure(text);
          const found = tokens(text).last;
          expect(found, text).toBe(failure === undefined ? 'end' : 'error');
          if (failure === undefined) return;
          const offset = findJsonSyntaxError(text).offset;
          const position = /at position (\d+)/.exec(failure);
          if (position) expect(offset, text).toBe(Number(position[1]));
          if (/Unexpected end of JSON input/.test(failure)) expect(offset, text).toBe(text.length);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('reads 200,000 levels without recursion', () => {
    const text = `${'[{"a":'.repeat(100_000)}1${'}]'.repeat(100_000)}`;
    const lexer = new JsonLexer(text);
    let count = 0;
    while (lexer.next() !== 'end') count++;
    expect(count).toBe(600_001); // per level: [ { "a" : } ]
    expect(lexer.deepest).toBe(200_000);
    expect(lexer.error).toBeUndefined();
  });
});

describe('JsonLexer, structure only', () => {
  it('checks nothing: words, unmatched brackets, raw controls in strings', () => {
    expect(tokens('[tru 1x, "a\u0001\\q"}', false)).toEqual({
      tokens: [
        ['[', '['],
        ['word', 'tru'],
        ['word', '1x'],
        [',', ','],
        ['string', '"a\u0001\\q"'],
        ['}', '}'],
      ],
      last: 'end',
    });
  });

  it.each<[string, number]>([
    ['{"a":"[[[', 1],
    ['"\\', 0],
    ['[[', 2],
    [']][', 0],
    ['{"a":"\\"[[["}', 1],
  ])('jsonNestingDepth of the broken text %j is %i, and it ends', (text, depth) => {
    expect(jsonNestingDepth(text)).toBe(depth);
  });

  it('property: depth as the parsed value nests', () => {
    const depthOf = (value: unknown): number =>
      typeof value === 'object' && value !== null
        ? 1 + Math.max(0, ...Object.values(value).map(depthOf))
        : 0;
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonNestingDepth(JSON.stringify(value, null, 1))).toBe(depthOf(value));
      }),
    );
  });

  it('property: across chunks cut anywhere, skipTo finds the same ends as one whole text', () => {
    const element = fc.jsonValue().map((value) => JSON.stringify({ v: value }));
    fc.assert(
      fc.property(
        fc.array(element, { maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1 }),
        (elements, sizes) => {
          const text = `[${elements.join(',')}]`;
          const chunks: string[] = [];
          for (let at = 0, k = 0; at < text.length; k++) {
            const size = sizes[k % sizes.length] as number;
            chunks.push(text.slice(at, at + size));
            at += size;
          }
          const lexer = new JsonLexer('', { checked: false });
          const found: string[] = [];
          let piece: string | undefined;
          for (const chunk of chunks) {
            lexer.continueWith(chunk);
            let from = 0;
            for (;;) {
              if (piece !== undefined) {
                if (lexer.skipTo(1) === 'end') {
                  piece += chunk.slice(from);
                  break;
                }
                found.push(piece + chunk.slice(from, lexer.end));
                piece = undefined;
              }
              const kind = lexer.next();
              if (kind === 'end') break;
              if (kind === '{') {
                piece = '';
                from = lexer.start;
              }
            }
          }
          expect(found).toEqual(elements);
        },
      ),
      { numRuns: 300 },
    );
  });
});
