/**
 * JSON from the wire, handled as text. `JSON.parse` is iterative in V8, but everything that walks
 * the parsed value (`JSON.stringify`, a recursive copy) overflows the stack on a hostile
 * 100,000-level answer; and re-serialising a parsed value changes the server's numbers
 * (`12345678901234567890123` loses digits, `1e400` becomes `null`). So the text is re-indented
 * token by token with an explicit stack: numbers pass through exactly as sent, nesting costs heap,
 * not stack.
 */
import { unicodeEscape } from '../platform/io.js';
import { JsonLexer } from './json-lexer.js';
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
  inObject: boolean;
  /** An array under a secret key: its strings are secrets too (`"previous_tokens": [...]`). */
  secretArray: boolean;
  /** In an object: the key of the member being read. */
  key: string;
}

/** Deeper than this, JSON is printed compactly: see `newline`. */
const MAX_INDENT_DEPTH = 100;

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
  // Indenting every level would make the output quadratic in the depth (a 1 MiB answer can
  // nest 500,000 levels): past MAX_INDENT_DEPTH the rest is printed on one line.
  const newline = (depth: number, level = depth) => {
    if (options.indent > 0 && depth <= MAX_INDENT_DEPTH) {
      out.push(`\n${' '.repeat(options.indent * level)}`);
    }
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
  /** Whether the value just read sits under a secret key or in a secret array. */
  const inSecret = (): boolean => {
    const top = stack[stack.length - 1];
    if (top === undefined || secretKey === undefined) return false;
    return top.inObject ? secretKey.test(top.key) : top.secretArray;
  };

  const lexer = new JsonLexer(text);
  // Just after `{` or `[`: a closing bracket then prints with no line between.
  let opened = false;
  for (let kind = lexer.next(); kind !== 'end'; kind = lexer.next()) {
    if (kind === 'error') {
      throw new SyntaxError(`invalid JSON at position ${lexer.start}`);
    }
    if (kind === '}' || kind === ']') {
      // A line before the bracket, one level out, unless it closes an empty container.
      if (!opened) newline(stack.length, stack.length - 1);
      stack.pop();
      out.push(kind);
      opened = false;
      continue;
    }
    if (opened) newline(stack.length);
    opened = false;
    if (kind === '{' || kind === '[') {
      stack.push({ inObject: kind === '{', secretArray: kind === '[' && inSecret(), key: '' });
      out.push(kind);
      opened = true;
    } else if (kind === ',') {
      out.push(',');
      newline(stack.length);
    } else if (kind === ':') {
      out.push(colon);
    } else if (kind === 'string') {
      const raw = text.slice(lexer.start, lexer.end);
      if (lexer.isKey) {
        (stack[stack.length - 1] as Frame).key = JSON.parse(raw) as string;
        emitString(raw, false);
      } else emitString(raw, inSecret());
    } else {
      // Numbers and literals exactly as sent: 12345678901234567890123 keeps its digits.
      out.push(text.slice(lexer.start, lexer.end));
    }
  }
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

/**
 * The elements of the array at `path` (object keys from the top: `["results", "customers"]`) in
 * `text`, each as the server wrote it: numbers exact, nothing parsed and printed again, so a
 * long list streams at the cost of copying its text. Each is one line (an element that spans
 * lines is re-printed compactly) with the characters a terminal could obey escaped, as
 * `formatJsonText` prints them. Where a key repeats, the last one counts, as for JSON.parse.
 * Undefined when there is no such array. Call it on text JSON.parse read: invalid JSON is not
 * reported, and the caller checks the count against the parsed array.
 */
export function arrayElementTexts(text: string, path: readonly string[]): string[] | undefined {
  const lexer = new JsonLexer(text, { checked: false });
  if (path.length === 0 || lexer.next() !== '{') return undefined;
  let found: string[] | undefined;
  // The object being read is the value of path[level - 1] (the top one at level 0).
  let level = 0;
  // Past a value: a container (its opening bracket just read) to its closing bracket.
  const skip = (kind: string) => {
    if (kind === '{' || kind === '[') lexer.skipTo(lexer.depth - 1);
  };
  for (;;) {
    let kind = lexer.next();
    if (kind === ',') kind = lexer.next();
    if (kind === '}') {
      if (level === 0) return found;
      level--;
      continue;
    }
    if (kind !== 'string') return undefined;
    const raw = text.slice(lexer.start, lexer.end);
    const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
    if (lexer.next() !== ':') return undefined;
    const value = lexer.next();
    if (key !== path[level]) {
      skip(value);
      continue;
    }
    // A later member of the same name replaces what an earlier one held.
    found = undefined;
    if (level === path.length - 1 && value === '[') {
      found = elementTexts(lexer, text);
    } else if (level < path.length - 1 && value === '{') {
      level++;
    } else {
      skip(value);
    }
  }
}

/** The elements of the array whose `[` `lexer` just read, up to and past its `]`. */
function elementTexts(lexer: JsonLexer, text: string): string[] {
  const depth = lexer.depth;
  const elements: string[] = [];
  for (let kind = lexer.next(); kind !== ']' && kind !== 'end'; kind = lexer.next()) {
    if (kind === ',') continue;
    const start = lexer.start;
    if (kind === '{' || kind === '[') lexer.skipTo(depth);
    const element = text.slice(start, lexer.end);
    // A line break cannot be inside a JSON string: this one is between tokens.
    elements.push(
      element.includes('\n') || element.includes('\r')
        ? formatJsonText(element, { indent: 0 })
        : escapeRawControls(element),
    );
  }
  return elements;
}
