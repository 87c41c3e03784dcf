/**
 * JSON from the wire, handled as text. `JSON.parse` is iterative in V8, but everything that walks
 * the parsed value (`JSON.stringify`, a recursive copy) overflows the stack on a hostile
 * 100,000-level answer; and re-serialising a parsed value changes the server's numbers
 * (`12345678901234567890123` loses digits, `1e400` becomes `null`). So the text is re-indented
 * token by token with an explicit stack: numbers pass through exactly as sent, nesting costs heap,
 * not stack.
 */
import { unicodeEscape } from '../platform/io.js';
import { REDACTED, SecretSet } from './redact.js';

export interface JsonTextOptions {
  /** Spaces per level; 0 prints compact JSON on one line. */
  indent: number;
  /** Values cut out of every string (keys too), wherever they appear. */
  secrets?: Iterable<string>;
  /** Keys whose string values (in arrays under them too) are replaced by `[REDACTED]`. */
  secretKey?: RegExp;
  /** What a secret is replaced by instead of `[REDACTED]` (the `--debug` trace's fingerprint). */
  mask?: (secret: string) => string;
}

interface Frame {
  kind: 'object' | 'array';
  /** An array under a secret key: its strings are secrets too (`"previous_tokens": [...]`). */
  secretArray: boolean;
  /** In an object: the key of the member being read. */
  key: string;
}

/** Deeper than this, JSON is printed compactly: see `newline`. */
const MAX_INDENT_DEPTH = 100;

const LITERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/**
 * `text` re-printed: whitespace only changes, numbers and literals are copied, and every string
 * has its DEL and C1 characters (raw U+009B is a CSI to a terminal) written as `\u` escapes (raw
 * C0 characters cannot occur in valid JSON). Throws a SyntaxError on invalid JSON.
 */
export function formatJsonText(text: string, options: JsonTextOptions): string {
  // Not copied: the trace's set of a bulk run's secrets grows with its rows.
  const secrets = SecretSet.of(options.secrets ?? []);
  const secretKey = options.secretKey;
  const mask = options.mask ?? (() => REDACTED);
  const out: string[] = [];
  const stack: Frame[] = [];
  const colon = options.indent > 0 ? ': ' : ':';
  let i = 0;
  // Indenting every level would make the output quadratic in the depth (a 1 MiB answer can
  // nest 500,000 levels): past MAX_INDENT_DEPTH the rest is printed on one line.
  const newline = (depth = stack.length) => {
    if (options.indent > 0 && depth <= MAX_INDENT_DEPTH) {
      out.push(`\n${' '.repeat(options.indent * Math.min(stack.length, depth))}`);
    }
  };
  const skipSpace = () => {
    for (let c = text.charCodeAt(i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; ) {
      c = text.charCodeAt(++i);
    }
  };
  const fail = (): never => {
    throw new SyntaxError(`invalid JSON at position ${i}`);
  };
  const readString = (): string => {
    if (text[i] !== '"') fail();
    const start = i++;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x5c) i += 2;
      else if (c === 0x22) return text.slice(start, ++i);
      else if (c < 0x20) fail();
      else i++;
    }
    return fail();
  };
  const emitString = (raw: string, redact: boolean) => {
    if (redact) {
      out.push(escapeRawControls(JSON.stringify(mask(JSON.parse(raw) as string))));
      return;
    }
    let token = raw;
    if (secrets.size > 0) {
      const decoded = JSON.parse(raw) as string;
      const clean = secrets.redact(decoded, mask);
      if (clean !== decoded) token = JSON.stringify(clean);
    }
    out.push(escapeRawControls(token));
  };
  const readKey = (frame: Frame) => {
    newline();
    const raw = readString();
    frame.key = JSON.parse(raw) as string;
    emitString(raw, false);
    skipSpace();
    if (text[i] !== ':') fail();
    i++;
    out.push(colon);
  };
  /** Whether the value about to be read sits under a secret key or in a secret array. */
  const inSecret = (): boolean => {
    const top = stack[stack.length - 1];
    if (top === undefined || secretKey === undefined) return false;
    return top.kind === 'array' ? top.secretArray : secretKey.test(top.key);
  };

  let expectValue = true;
  for (;;) {
    skipSpace();
    if (expectValue) {
      const secret = inSecret();
      const c = text[i];
      if (c === '{' || c === '[') {
        i++;
        out.push(c);
        const close = c === '{' ? '}' : ']';
        skipSpace();
        if (text[i] === close) {
          i++;
          out.push(close);
          expectValue = false;
          continue;
        }
        const frame: Frame = {
          kind: c === '{' ? 'object' : 'array',
          secretArray: c === '[' && secret,
          key: '',
        };
        stack.push(frame);
        if (frame.kind === 'object') readKey(frame);
        else newline();
        continue;
      }
      if (c === '"') emitString(readString(), secret);
      else {
        LITERAL.lastIndex = i;
        const match = LITERAL.exec(text);
        if (match === null) return fail();
        out.push(match[0]);
        i += match[0].length;
      }
      expectValue = false;
      continue;
    }
    const top = stack[stack.length - 1];
    if (top === undefined) break;
    const c = text[i];
    if (c === ',') {
      i++;
      out.push(',');
      skipSpace();
      if (top.kind === 'object') readKey(top);
      else newline();
      expectValue = true;
    } else if (c === (top.kind === 'object' ? '}' : ']')) {
      i++;
      const depth = stack.length;
      stack.pop();
      newline(depth);
      out.push(c);
    } else fail();
  }
  if (i !== text.length) fail();
  return out.join('');
}

/**
 * DEL, C1, U+2028 and U+2029 written as `\u` escapes in JSON text (legal there raw, inside
 * strings, the only place they can be): the same JSON, which a terminal showing it never obeys
 * as a control nor breaks at a line separator.
 */
export function escapeRawControls(json: string): string {
  return json.replace(/[\u007f-\u009f\u2028\u2029]/g, unicodeEscape);
}

const texts = new WeakMap<object, { text: string; secrets: readonly string[] }>();

/**
 * Ties a parsed answer to the text it was parsed from, so `--json` can print the server's own
 * text (numbers exact) wherever the parsed value travels (results, error bodies). `secrets` are
 * cut out of it when printed.
 */
export function rememberJsonText(
  value: object,
  text: string,
  secrets: readonly string[] = [],
): void {
  texts.set(value, { text, secrets });
}

/** `--json` output for a value: its server text re-indented when known, else the value itself. */
export function prettyJson(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    const known = texts.get(value);
    if (known !== undefined) {
      return formatJsonText(known.text, { indent: 2, secrets: known.secrets });
    }
  }
  return escapeRawControls(JSON.stringify(value, null, 2));
}

/**
 * `JSON.stringify(value)` for parsed JSON, without recursion: a table cell or `--field` value
 * may hold an answer's 100,000-level object. Numbers print as JavaScript reads them; the exact
 * text is for `--json` (`prettyJson`).
 */
export function compactJson(value: unknown): string {
  const out: string[] = [];
  // Work items: a value to print, or a literal piece of punctuation.
  const work: Array<{ value: unknown } | { text: string }> = [{ value }];
  while (work.length > 0) {
    const item = work.pop() as { value: unknown } | { text: string };
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    const current = item.value;
    if (Array.isArray(current)) {
      out.push('[');
      work.push({ text: ']' });
      for (let i = current.length - 1; i >= 0; i--) {
        const entry: unknown = current[i];
        work.push({ value: entry === undefined || typeof entry === 'function' ? null : entry });
        if (i > 0) work.push({ text: ',' });
      }
    } else if (typeof current === 'object' && current !== null) {
      const entries = Object.entries(current).filter(
        ([, entry]) => entry !== undefined && typeof entry !== 'function',
      );
      out.push('{');
      work.push({ text: '}' });
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, entry] = entries[i] as [string, unknown];
        work.push({ value: entry });
        work.push({ text: `${JSON.stringify(key)}:` });
        if (i > 0) work.push({ text: ',' });
      }
    } else {
      out.push(JSON.stringify(current) ?? 'null');
    }
  }
  return out.join('');
}
