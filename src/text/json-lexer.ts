/**
 * The one reader of JSON text token by token. Everything that looks at JSON as text rather than
 * as a parsed value goes through it: re-indenting a server's answer with its numbers exact
 * (`json-text.ts`), the depth cap and the duplicate-key check on input, the place of a syntax
 * error in the config file, and splitting a bulk `.json` array into rows while it streams in.
 * It keeps its nesting on the heap (a counter and an array), never on the call stack, so a
 * hostile 500,000-level text costs memory, not a stack overflow.
 *
 * Two ways to read:
 * - checked (the default): every token is checked against JSON's grammar, and the first error
 *   stops the reading with its offset and a reason in words that quote none of the text;
 * - structure only (`checked: false`): brackets, commas, colons and strings, checking nothing,
 *   for text that need not be valid JSON (measured before it is parsed, or a bulk row split out
 *   to be parsed, and reported, on its own). Such a lexer can also go on across chunks.
 */

/** The tokens of JSON. */
export type JsonTokenKind =
  | '{'
  | '}'
  | '['
  | ']'
  | ':'
  | ','
  | 'string'
  | 'number'
  | 'true'
  | 'false'
  | 'null';

/**
 * What `next()` read: a token; `word` (structure only: any other run of characters, unchecked);
 * `end` (checked: the value is complete and only whitespace follows; structure only: the text,
 * or this chunk of it, is used up); `error` (checked: see `error`).
 */
export type JsonStep = JsonTokenKind | 'word' | 'end' | 'error';

export interface JsonSyntaxError {
  /** UTF-16 offset of the first character that cannot be JSON, or the text's length. */
  offset: number;
  reason: string;
}

export interface JsonLexerOptions {
  /** False: read the structure only, check nothing (see the module's comment). */
  checked?: boolean;
}

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** What a checked lexer takes next. */
const VALUE = 0;
const VALUE_OR_CLOSE = 1; // just after `[`
const KEY = 2;
const KEY_OR_CLOSE = 3; // just after `{`
const NAME_COLON = 4;
const AFTER_VALUE = 5;

const IN_OBJECT = 1;
const IN_ARRAY = 0;

/** Characters that end a `word` of a structure-only lexer: whitespace, punctuation, a quote. */
const ENDS_WORD = new Uint8Array(128);
for (const c of [TAB, LF, CR, SPACE, QUOTE, COMMA, COLON]) ENDS_WORD[c] = 1;
for (const c of [OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE]) ENDS_WORD[c] = 1;

/** `"\/bfnrt` after a backslash. */
const SIMPLE_ESCAPE = new Uint8Array(128);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

function isHex(c: number): boolean {
  return (c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

export class JsonLexer {
  /** The token read last, and where it is: `text.slice(start, end)`. */
  kind: JsonStep = 'end';
  start = 0;
  end = 0;
  /** Checked only: whether the string just read is the name of an object's member. */
  isKey = false;
  /**
   * Arrays and objects open after the token read last. Structure only, every closing bracket
   * counts one down, matching or not, even below zero.
   */
  depth = 0;
  /** The largest `depth` so far. */
  deepest = 0;
  /** Checked only: the first syntax error, once `next()` returned `error`. */
  error: JsonSyntaxError | undefined;

  private text: string;
  private pos = 0;
  private readonly checked: boolean;
  private expect = VALUE;
  /** Checked: IN_OBJECT or IN_ARRAY for each open bracket. */
  private readonly open: number[] = [];
  /** Structure only: a string was cut off by the end of a chunk (after a backslash: `escaped`). */
  private inString = false;
  private escaped = false;

  constructor(text: string, options: JsonLexerOptions = {}) {
    this.text = text;
    this.checked = options.checked ?? true;
  }

  /**
   * Structure only: go on with the next chunk of the same text. Offsets are then the new
   * chunk's; a string cut off by the end of the last chunk goes on here, its token starting at 0.
   */
  continueWith(chunk: string): void {
    if (this.checked) throw new Error('a checked JSON lexer reads one whole text');
    this.text = chunk;
    this.pos = 0;
  }

  /** Reads the next token; see `JsonStep`. */
  next(): JsonStep {
    return this.checked ? this.nextChecked() : this.nextStructure();
  }

  private nextChecked(): JsonStep {
    if (this.kind === 'error') return 'error';
    const text = this.text;
    let i = this.pos;
    let c = text.charCodeAt(i);
    while (c === SPACE || c === LF || c === CR || c === TAB) c = text.charCodeAt(++i);
    this.start = i;
    this.isKey = false;
    const expect = this.expect;
    if (i >= text.length) {
      if (expect === AFTER_VALUE && this.open.length === 0) return this.token('end', i);
      return this.fail(i, 'unexpected end of the file');
    }
    if (expect === AFTER_VALUE) {
      const open = this.open;
      if (open.length === 0) return this.fail(i, 'unexpected text after the JSON value');
      const inObject = open[open.length - 1] === IN_OBJECT;
      if (c === COMMA) {
        this.expect = inObject ? KEY : VALUE;
        return this.token(',', i + 1);
      }
      if (c === (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) return this.close(i);
      return this.fail(i, inObject ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    if (expect === NAME_COLON) {
      if (c !== COLON) return this.fail(i, "expected ':' after a property name");
      this.expect = VALUE;
      return this.token(':', i + 1);
    }
    if (expect === KEY || expect === KEY_OR_CLOSE) {
      if (c === CLOSE_BRACE && expect === KEY_OR_CLOSE) return this.close(i);
      if (c !== QUOTE) return this.fail(i, 'expected a property name in double quotes');
      const end = this.scanString(i);
      if (end < 0) return 'error';
      this.expect = NAME_COLON;
      this.isKey = true;
      return this.token('string', end);
    }
    if (c === CLOSE_BRACKET && expect === VALUE_OR_CLOSE) return this.close(i);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      const inObject = c === OPEN_BRACE;
      this.open.push(inObject ? IN_OBJECT : IN_ARRAY);
      if (++this.depth > this.deepest) this.deepest = this.depth;
      this.expect = inObject ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
      return this.token(inObject ? '{' : '[', i + 1);
    }
    this.expect = AFTER_VALUE;
    if (c === QUOTE) {
      const end = this.scanString(i);
      return end < 0 ? 'error' : this.token('string', end);
    }
    if (c === 0x74 /* t */) return this.literal(i, 'true');
    if (c === 0x66 /* f */) return this.literal(i, 'false');
    if (c === 0x6e /* n */) return this.literal(i, 'null');
    return this.number(i);
  }

  private token(kind: JsonStep, end: number): JsonStep {
    this.end = end;
    this.pos = end;
    this.kind = kind;
    return kind;
  }

  private fail(offset: number, reason: string): 'error' {
    this.error = {
      offset,
      reason: offset >= this.text.length ? 'unexpected end of the file' : reason,
    };
    this.start = offset;
    this.end = offset;
    this.kind = 'error';
    return 'error';
  }

  private close(i: number): JsonStep {
    const inObject = this.open.pop() === IN_OBJECT;
    this.depth--;
    this.expect = AFTER_VALUE;
    return this.token(inObject ? '}' : ']', i + 1);
  }

  /** The offset after the string opening at `i`, or -1 after `fail`. */
  private scanString(i: number): number {
    const text = this.text;
    const n = text.length;
    for (let at = i + 1; at < n; ) {
      const c = text.charCodeAt(at);
      if (c === QUOTE) return at + 1;
      if (c === BACKSLASH) {
        const escaped = text.charCodeAt(at + 1);
        if (escaped === 0x75 /* u */) {
          for (let k = at + 2; k < at + 6; k++) {
            if (!isHex(text.charCodeAt(k))) return this.failAt(k, 'bad \\u escape in a string');
          }
          at += 6;
        } else if (escaped < 128 && SIMPLE_ESCAPE[escaped] === 1) {
          at += 2;
        } else {
          return this.failAt(at + 1, 'bad escape in a string');
        }
      } else if (c < SPACE) {
        return this.failAt(at, 'control character in a string');
      } else {
        at++;
      }
    }
    return this.failAt(n, 'unterminated string');
  }

  private failAt(offset: number, reason: string): -1 {
    this.fail(offset, reason);
    return -1;
  }

  private literal(i: number, word: 'true' | 'false' | 'null'): JsonStep {
    const text = this.text;
    for (let k = 1; k < word.length; k++) {
      if (text.charCodeAt(i + k) !== word.charCodeAt(k)) {
        return this.fail(i + k, 'unexpected character');
      }
    }
    return this.token(word, i + word.length);
  }

  private number(i: number): JsonStep {
    const text = this.text;
    let at = i;
    let c = text.charCodeAt(at);
    if (c === MINUS) {
      c = text.charCodeAt(++at);
      if (!isDigit(c)) return this.fail(at, 'no digit after a minus sign');
    } else if (!isDigit(c)) {
      return this.fail(at, 'unexpected character');
    }
    if (c === ZERO) c = text.charCodeAt(++at);
    else while (isDigit(c)) c = text.charCodeAt(++at);
    if (c === DOT) {
      c = text.charCodeAt(++at);
      if (!isDigit(c)) return this.fail(at, 'no digit after a decimal point');
      while (isDigit(c)) c = text.charCodeAt(++at);
    }
    if (c === 0x65 /* e */ || c === 0x45 /* E */) {
      c = text.charCodeAt(++at);
      if (c === 0x2b /* + */ || c === MINUS) c = text.charCodeAt(++at);
      if (!isDigit(c)) return this.fail(at, 'no digit in an exponent');
      while (isDigit(c)) c = text.charCodeAt(++at);
    }
    return this.token('number', at);
  }

  /**
   * Structure only: reads on, without stopping at each token, until a closing bracket brings
   * `depth` down to `to` (then that bracket is the token read, and `next()` goes on after it), or
   * to the end of the text or chunk (`end`: after `continueWith`, call again). For the text of
   * a bulk row, whose tokens are read when the row is parsed on its own.
   */
  skipTo(to: number): JsonStep {
    if (this.checked) throw new Error('a checked JSON lexer reads every token');
    const text = this.text;
    const n = text.length;
    let i = this.inString ? this.looseString(this.pos) : this.pos;
    let depth = this.depth;
    while (i < n) {
      const c = text.charCodeAt(i++);
      if (c === QUOTE) {
        i = this.looseString(i);
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (++depth > this.deepest) this.deepest = depth;
      } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === to) {
        this.depth = depth;
        this.start = i - 1;
        return this.token(c === CLOSE_BRACE ? '}' : ']', i);
      }
    }
    this.depth = depth;
    this.start = n;
    return this.token('end', n);
  }

  private nextStructure(): JsonStep {
    const text = this.text;
    const n = text.length;
    let i = this.pos;
    if (this.inString) {
      // Cut off by the end of the last chunk, or of the text: then it ends with it.
      this.start = i;
      return i >= n ? this.token('end', n) : this.token('string', this.looseString(i));
    }
    let c = text.charCodeAt(i);
    while (c === SPACE || c === LF || c === CR || c === TAB) c = text.charCodeAt(++i);
    this.start = i;
    if (i >= n) return this.token('end', n);
    switch (c) {
      case OPEN_BRACE:
      case OPEN_BRACKET:
        if (++this.depth > this.deepest) this.deepest = this.depth;
        return this.token(c === OPEN_BRACE ? '{' : '[', i + 1);
      case CLOSE_BRACE:
      case CLOSE_BRACKET:
        this.depth--;
        return this.token(c === CLOSE_BRACE ? '}' : ']', i + 1);
      case COMMA:
        return this.token(',', i + 1);
      case COLON:
        return this.token(':', i + 1);
      case QUOTE:
        return this.token('string', this.looseString(i + 1));
      default: {
        let at = i + 1;
        for (c = text.charCodeAt(at); at < n && (c >= 128 || ENDS_WORD[c] === 0); ) {
          c = text.charCodeAt(++at);
        }
        return this.token('word', at);
      }
    }
  }

  /**
   * Where a string from `from` (past its quote) ends: after the next unescaped quote, or at the
   * end of the chunk, which `inString` (and `escaped`) then remember for the next one.
   */
  private looseString(from: number): number {
    const text = this.text;
    // A backslash that ended the last chunk escapes this chunk's first character.
    let at = this.escaped ? from + 1 : from;
    this.escaped = false;
    // indexOf finds the quotes far faster than a loop over every character; a quote is
    // escaped when an odd run of backslashes comes before it.
    for (let quote = text.indexOf('"', at); quote !== -1; quote = text.indexOf('"', at)) {
      if (backslashesBefore(text, quote, at) % 2 === 0) {
        this.inString = false;
        return quote + 1;
      }
      at = quote + 1;
    }
    const n = text.length;
    this.inString = true;
    this.escaped = n > at && backslashesBefore(text, n, at) % 2 === 1;
    return n;
  }
}

/** How many backslashes come right before `end`, not counting any before `from`. */
function backslashesBefore(text: string, end: number, from: number): number {
  let at = end;
  while (at > from && text.charCodeAt(at - 1) === BACKSLASH) at--;
  return end - at;
}

/**
 * Where JSON.parse fails in `text`, and why, in words that quote none of the text (its message
 * quotes the text around the error, which may be part of a token). For valid JSON: its end.
 */
export function findJsonSyntaxError(text: string): JsonSyntaxError {
  const lexer = new JsonLexer(text);
  for (let kind = lexer.next(); kind !== 'end'; kind = lexer.next()) {
    if (lexer.error !== undefined) return lexer.error;
  }
  return { offset: text.length, reason: 'unexpected end of the file' };
}

/**
 * How deeply the arrays and objects in a JSON text nest. Brackets inside strings do not count.
 * The text need not be valid JSON: this runs before parsing, because everything that walks a
 * parsed value recurses.
 */
export function jsonNestingDepth(text: string): number {
  const lexer = new JsonLexer(text, { checked: false });
  while (lexer.next() !== 'end') {}
  return lexer.deepest;
}

/**
 * Whether `value`, parsed from `text`, may have lost a repeated key (then `duplicateJsonKey` says
 * where): false for sure when `text` is one flat object (no nested `{` or `[`) whose members, one
 * more than its commas, are as many as the parsed keys. A bulk row is such an object, and this is
 * one pass that allocates nothing, instead of a set of keys per row.
 */
export function mayRepeatKeys(text: string, value: object): boolean {
  const lexer = new JsonLexer(text, { checked: false });
  let commas = 0;
  let opened = 0;
  for (let kind = lexer.next(); kind !== 'end'; kind = lexer.next()) {
    if (kind === ',') commas++;
    else if ((kind === '{' || kind === '[') && ++opened > 1) return true;
  }
  const keys = Object.keys(value).length;
  return keys === 0 ? commas > 0 : keys !== commas + 1;
}

/**
 * Where `text` (valid JSON: call it after JSON.parse succeeded) has a key twice in one object,
 * as the path of keys to it (`["limits", "plan"]`; array elements as `[2]`), or undefined.
 * JSON.parse keeps the last value without a word, so `{"plan":"pro","plan":"free"}` would send
 * "free" to someone who read "pro". Keys are compared decoded (`"\u0061"` is `"a"`).
 */
export function duplicateJsonKey(text: string): string[] | undefined {
  interface Frame {
    /** Keys seen so far; undefined in an array. */
    keys: Set<string> | undefined;
    /** The member being read: its key, or `[index]` in an array. */
    at: string;
    index: number;
  }
  const stack: Frame[] = [];
  const lexer = new JsonLexer(text);
  for (let kind = lexer.next(); kind !== 'end' && kind !== 'error'; kind = lexer.next()) {
    if (kind === '{') stack.push({ keys: new Set(), at: '', index: 0 });
    else if (kind === '[') stack.push({ keys: undefined, at: '[0]', index: 0 });
    else if (kind === '}' || kind === ']') stack.pop();
    else if (lexer.isKey) {
      const top = stack[stack.length - 1] as Frame & { keys: Set<string> };
      const raw = text.slice(lexer.start, lexer.end);
      const key: string = raw.includes('\\') ? JSON.parse(raw) : raw.slice(1, -1);
      if (top.keys.has(key)) return [...stack.slice(0, -1).map((f) => f.at), key];
      top.keys.add(key);
      top.at = key;
    } else if (kind === ',') {
      const top = stack[stack.length - 1] as Frame;
      if (top.keys === undefined) top.at = `[${++top.index}]`;
    }
  }
  return undefined;
}
