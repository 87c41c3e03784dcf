/**
 * Pure parsers of what users type. Each returns exactly what the input means or throws a
 * UsageError that names the flag; none of them touches the network or the process.
 */
import { UsageError } from '../errors.js';
import { type Platform, type Shell, shellOf } from '../platform/host.js';
import { escapeControls, unicodeEscape } from '../platform/io.js';
import { duplicateJsonKey, jsonNestingDepth } from '../text/json-lexer.js';
import { message, quote } from '../text/message.js';

export type StringMap = Record<string, string>;
export type JsonObject = Record<string, unknown>;

/**
 * `key=value`, split at the first `=` so values may contain `=` (connection strings, base64).
 * Nothing is trimmed: a space is part of what the user typed. An empty key is never meant.
 */
export function parseKeyValue(text: string, flag: string): [string, string] {
  const at = text.indexOf('=');
  if (at === -1) {
    throw new UsageError(message`${flag} expects key=value, got "${text}"`, {
      hint: `for example: ${flag} warehouse=analytics_prod`,
    });
  }
  const key = text.slice(0, at);
  if (key.trim() === '') {
    throw new UsageError(message`${flag} has an empty key in "${text}"`);
  }
  return [key, text.slice(at + 1)];
}

/** Repeated `key=value` flags into one object; a key given twice is a mistake, not an override. */
export function collectKeyValues(items: readonly string[], flag: string): StringMap {
  const result: StringMap = Object.create(null);
  for (const item of items) {
    const [key, value] = parseKeyValue(item, flag);
    if (Object.hasOwn(result, key)) {
      throw new UsageError(message`${flag} sets "${key}" more than once`);
    }
    result[key] = value;
  }
  return { ...result };
}

/** Where a JSON flag value comes from: `-` is stdin, `@path` a file, anything else the JSON itself. */
export type JsonSource =
  | { kind: 'stdin' }
  | { kind: 'file'; path: string }
  | { kind: 'inline'; text: string };

export function parseJsonSource(text: string, flag: string): JsonSource {
  if (text === '-') return { kind: 'stdin' };
  if (text.startsWith('@')) {
    const path = text.slice(1);
    if (path === '') throw new UsageError(`${flag} @ needs a file path, e.g. ${flag} @props.json`);
    return { kind: 'file', path };
  }
  return { kind: 'inline', text };
}

/** The repeated `key=value` flag beside each JSON flag, for hints. */
const PAIR_FLAG: Readonly<Record<string, string>> = {
  '--properties': '--property',
  '--mapping-json': '--mapping',
};

/**
 * The hint for JSON typed on the command line that does not parse. PowerShell 5.1 and cmd.exe
 * pass `'{"plan":"pro"}'` on as `{plan:pro}`: repeating that form would fail the same way, so
 * an object with no double quote left gets the forms that survive any shell instead (a file,
 * quoted for PowerShell, where a leading `@` splats; or the key=value flag).
 */
export function inlineJsonHint(text: string, flag: string): string {
  const pairFlag = PAIR_FLAG[flag];
  if (!/^\s*\{/.test(text) || text.includes('"')) {
    return `pass a JSON object, e.g. ${flag} '{"plan":"pro"}'`;
  }
  const inner = /^\s*\{(.*)\}\s*$/s.exec(text)?.[1] ?? '';
  const pairs = inner
    .split(',')
    .map((pair) => /^\s*([\w.-]+)\s*:\s*([\w.@-]*)\s*$/.exec(pair))
    .map((match) => (match === null ? undefined : `${match[1]}=${match[2]}`));
  const example =
    inner.trim() !== '' && pairs.every((pair) => pair !== undefined)
      ? pairs.map((pair) => `${pairFlag} ${pair}`).join(' ')
      : `${pairFlag} ${flag === '--mapping-json' ? 'sales=acme_db' : 'plan=pro'}`;
  const file = flag === '--mapping-json' ? 'mapping.json' : 'props.json';
  return (
    `the shell removed the JSON's double quotes (PowerShell 5.1 and cmd.exe do that): put the object in a file and pass ${flag} '@${file}'` +
    (pairFlag === undefined ? '' : `, or give each key: ${example}`)
  );
}

export function parseJsonObject(
  text: string,
  flag: string,
  origin: string,
  inline = false,
): JsonObject {
  // Checked on the text, before parsing: everything that later walks the value (the request's
  // JSON.stringify among them) recurses, and a hostile file can nest 500,000 levels in 1 MiB.
  const depth = jsonNestingDepth(text);
  if (depth > MAX_JSON_DEPTH) {
    throw new UsageError(
      `${flag}: ${origin} nests ${depth} levels deep, more than the ${MAX_JSON_DEPTH} allowed`,
      { hint: 'properties and mappings are flat or shallow objects; check what the source holds' },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8 quotes the offending text in its message: the template escapes it, raw it would reach
    // the terminal.
    const detail = error instanceof Error ? error.message : String(error);
    throw new UsageError(message`${flag}: ${origin} is not valid JSON (${detail})`, {
      hint: inline
        ? escapeControls(inlineJsonHint(text, flag))
        : `pass a JSON object, e.g. ${flag} '{"plan":"pro"}'`,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`${flag}: ${origin} must be a JSON object, got ${describeJson(value)}`);
  }
  const duplicate = duplicateJsonKey(text);
  if (duplicate !== undefined) {
    throw new UsageError(
      `${flag}: ${origin} has the key ${formatJsonPath(duplicate)} more than once`,
      { hint: 'JSON keeps only the last of them: give each key once, with the value you mean' },
    );
  }
  return value as JsonObject;
}

/** The service's `mapping`: schema ids to data source names or ids, strings on both sides. */
export function parseStringMap(value: JsonObject, flag: string): StringMap {
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') {
      throw new UsageError(
        message`${flag}: the value of "${key}" must be a string, got ${describeJson(entry)}`,
      );
    }
    if (key === '') throw new UsageError(`${flag} has an empty key`);
  }
  return value as StringMap;
}

/**
 * `target[key] = value` for keys that come from users or servers: plain assignment of a key
 * named `__proto__` sets the prototype instead of adding a property.
 */
export function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** Objects from a JSON flag and from repeated `k=v` flags; the same key in both is ambiguous. */
export function mergeObjects<T>(
  fromJson: Record<string, T> | undefined,
  fromPairs: Record<string, T>,
  jsonFlag: string,
  pairFlag: string,
): Record<string, T> | undefined {
  if (fromJson === undefined && Object.keys(fromPairs).length === 0) return undefined;
  const merged: Record<string, T> = { ...fromJson };
  for (const [key, value] of Object.entries(fromPairs)) {
    if (fromJson !== undefined && Object.hasOwn(fromJson, key)) {
      throw new UsageError(message`"${key}" is set by both ${jsonFlag} and ${pairFlag}`);
    }
    setOwn(merged, key, value);
  }
  return merged;
}

const MAX_TIMEOUT_SECONDS = 3600;
/** Timers count whole milliseconds: anything shorter would round to 0, which means "no limit". */
const MIN_TIMEOUT_SECONDS = 0.001;

/** `--timeout` in seconds: a plain positive number, fractions allowed (`0.5`), at most an hour. */
export function parseTimeoutSeconds(text: string): number {
  const trimmed = text.trim();
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(trimmed)) {
    throw new UsageError(message`--timeout expects a number of seconds, got "${text}"`, {
      hint: 'for example: --timeout 10',
    });
  }
  const seconds = Number(trimmed);
  if (!(seconds >= MIN_TIMEOUT_SECONDS) || seconds > MAX_TIMEOUT_SECONDS) {
    throw new UsageError(
      message`--timeout must be at least ${MIN_TIMEOUT_SECONDS} and at most ${MAX_TIMEOUT_SECONDS} seconds, got "${text}"`,
    );
  }
  return seconds;
}

/** The units a duration may be written in, and what each is worth in milliseconds. */
export type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd' | 'w';
const DURATION_UNITS_MS: Readonly<Record<DurationUnit, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

export interface DurationForm {
  /** The units the flag takes: a limit on a run has no use for days, nor --since for ms. */
  units: readonly DurationUnit[];
  /** Whether a number may have a fraction (`1.5m`). */
  fractions: boolean;
}

/**
 * The one reading of a duration written with units: one or more number-unit pairs with nothing
 * between them (`90s`, `1h30m`, `500ms`, `1.5m`), case and surrounding blanks ignored. Returns
 * milliseconds (not rounded), or undefined when the text is not of that form: each flag says in
 * its own words what it expects, and may take other forms besides (a plain number, a date).
 */
export function readDuration(text: string, form: DurationForm): number | undefined {
  const trimmed = text.trim().toLowerCase();
  // Longest unit first, so `500ms` is 500 milliseconds and never 500 minutes and an `s`.
  const units = [...form.units].sort((a, b) => b.length - a.length).join('|');
  const number = form.fractions ? '\\d+(?:\\.\\d+)?' : '\\d+';
  if (units === '' || !new RegExp(`^(?:${number}(?:${units}))+$`).test(trimmed)) return undefined;
  let ms = 0;
  for (const part of trimmed.matchAll(new RegExp(`(${number})(${units})`, 'g'))) {
    ms += Number(part[1]) * DURATION_UNITS_MS[part[2] as DurationUnit];
  }
  return ms;
}

/** A limit on a run: hours at the most (it may be a week at the most anyway). */
const LIMIT_DURATION: DurationForm = { units: ['ms', 's', 'm', 'h'], fractions: true };
/** A week: a limit meant to end a run, not to be "never". */
const MAX_DURATION_MS = 7 * 24 * 3_600_000;

/**
 * A duration as people write it: `90s`, `10m`, `1h`, `1h30m`, `500ms`, `1.5m`, or a plain number
 * of seconds (`90`). At least 1 ms (0 would mean "at once", which no one asks a limit for) and at
 * most a week. Returns milliseconds.
 */
export function parseDuration(text: string, flag: string): number {
  const trimmed = text.trim();
  const usage = (why: string) =>
    new UsageError(message`${flag} ${why}, got "${text}"`, {
      hint: `for example: ${flag} 90s, ${flag} 10m or ${flag} 1h`,
    });
  const read = /^(\d+(\.\d*)?|\.\d+)$/.test(trimmed)
    ? Number(trimmed) * 1000
    : readDuration(trimmed, LIMIT_DURATION);
  if (read === undefined) throw usage('expects a duration such as 90s, 10m or 1h');
  const ms = Math.round(read);
  if (!(ms >= 1) || ms > MAX_DURATION_MS) {
    throw usage('must be more than 0 and at most 7 days (168h)');
  }
  return ms;
}

/**
 * A host (name, IPv4 or [IPv6]) with an optional port and a path of printable ASCII (no `?` or
 * `#`), and no scheme: the hint repeats it, so nothing in it may move a terminal's cursor.
 */
const BARE_ADDRESS =
  /^((?:[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?)|\[[0-9a-f:.]+\])(?::\d{1,5})?(?:\/[\x21\x22\x24-\x3e\x40-\x7e]*)?$/i;

/**
 * The service's base URL. It may carry a path prefix (`https://host/prefix`); the API token
 * travels with every request, so clear-text http is allowed only to this machine unless the user
 * says `--insecure-http`. Credentials, queries and fragments in the URL are refused: they would be
 * sent or logged where nobody expects them.
 */
export function parseBaseUrl(text: string, options: { insecureHttp: boolean }): URL {
  // `localhost:4010` or `analytics.example.com`, as people write an address: URL would read
  // `localhost:` as a scheme, and the hint can give the exact text to use instead.
  const address = text.trim();
  const bare = BARE_ADDRESS.exec(address);
  if (bare !== null) {
    throw new UsageError(
      message`invalid base URL "${redactUrl(text)}": it needs https:// (or http:// for this machine) in front`,
      {
        hint: isLoopbackHost(bare[1] ?? '')
          ? `use http://${address} (a service on this machine)`
          : `use https://${address}`,
      },
    );
  }
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new UsageError(message`invalid base URL "${redactUrl(text)}"`, {
      hint: 'use a full URL, e.g. --base-url https://analytics.example.com',
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(
      message`base URL must use https:// (or http:// to this machine), got "${url.protocol}"`,
    );
  }
  if (url.hostname === '') {
    throw new UsageError(message`base URL "${redactUrl(text)}" has no host`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new UsageError('base URL must not contain a user name or password', {
      hint: 'the API token is sent in the Authorization header; remove the user:password@ part',
    });
  }
  if (url.search !== '' || url.hash !== '') {
    throw new UsageError(message`base URL must not have a query or fragment: "${redactUrl(text)}"`);
  }
  if (url.protocol === 'http:' && !options.insecureHttp && !isLoopbackHost(url.hostname)) {
    throw new UsageError(`refusing to send the API token over plain http to ${url.host}`, {
      hint: 'use https://, or pass --insecure-http if this network is trusted',
    });
  }
  url.pathname = url.pathname.replace(/\/+$/, '');
  // A bare `?` or `#` passes the check above (search and hash are ''), but stays in href.
  url.search = '';
  url.hash = '';
  return url;
}

/**
 * The proxy variable that applies to a request of `protocol`, as curl reads them: lower case
 * first, and an https request falls back to the http proxy. A variable set to "" still wins over
 * the next one, and means "no proxy". One definition for the transport (http.ts) and `doctor`.
 */
export function proxyVariable(
  protocol: string,
  env: Readonly<Record<string, string | undefined>>,
): { name: string; value: string } | undefined {
  const names =
    protocol === 'https:'
      ? ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY']
      : ['http_proxy', 'HTTP_PROXY'];
  const name = names.find((candidate) => env[candidate] !== undefined);
  return name === undefined ? undefined : { name, value: env[name] ?? '' };
}

/**
 * This machine: `localhost` itself (a trailing dot included), 127.0.0.0/8, `::1`, and 127.x
 * written as an IPv4-mapped IPv6 address. One definition for both of its uses: plain http is
 * allowed there without --insecure-http, and the API token is never sent there through a proxy.
 * Names under `.localhost` are not: RFC 6761 reserves them for loopback, but the resolver decides,
 * and an /etc/hosts line or a DNS server pointing `evil.localhost` at another machine would get
 * the token in clear text. They need --insecure-http and follow the proxy rules like any name.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (host === 'localhost') return true;
  if (host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  const v4 = /^(?:::ffff:)?127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (v4) return v4.slice(1).every((part) => Number(part) <= 255);
  return /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host);
}

/** The endpoint under a base URL, keeping its path prefix. */
export function endpointUrl(base: URL, path: string): URL {
  const url = new URL(base.href);
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
  return url;
}

/**
 * The segment a base URL's path ends in when the API path starts with it too (`/api` and
 * `/api/user` make `/api/api/user`), or undefined. Almost always the base URL was copied with
 * the API's prefix; a service that really lives under `/api/api/` is rare enough to warn about.
 */
export function repeatedSegment(base: URL, apiPath: string): string | undefined {
  const last = base.pathname.replace(/\/+$/, '').split('/').at(-1);
  const first = apiPath.replace(/^\/+/, '').split('/')[0];
  return last !== undefined && last !== '' && last === first ? last : undefined;
}

/** Base URL without trailing slash, for display and for storing in the config. */
export function formatBaseUrl(url: URL): string {
  return url.href.replace(/\/+$/, '');
}

function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Deeper JSON than this is refused on input: no real mapping or properties object needs it. */
export const MAX_JSON_DEPTH = 64;

/** `["limits", "plan"]` as `"limits"."plan"`, for a message. */
export function formatJsonPath(path: readonly string[]): string {
  return path.map((part) => (/^\[\d+\]$/.test(part) ? part : message`"${part}"`)).join('.');
}

/**
 * Format characters (Unicode category Cf) a name may keep: the zero-width non-joiner and joiner
 * that Persian, Indic scripts and emoji sequences need, the tag characters of subdivision flag
 * emoji, and the Arabic and Syriac prepended marks, which are visible. Every other one (bidi
 * controls, zero-width space, word joiner, BOM, soft hyphen, ...) is invisible or reorders the
 * text around it on screen, so two names that read the same would differ.
 */
function nameMayHold(formatCharacter: string): boolean {
  const cp = formatCharacter.codePointAt(0) ?? 0;
  return (
    cp === 0x200c ||
    cp === 0x200d ||
    (cp >= 0xe0020 && cp <= 0xe007f) ||
    (cp >= 0x0600 && cp <= 0x0605) ||
    [0x06dd, 0x070f, 0x0890, 0x0891, 0x08e2, 0x110bd, 0x110cd].includes(cp)
  );
}

/** What people call the format characters they meet most, after the code point. */
const FORMAT_CHARACTER_NAMES: Record<string, string> = {
  '\u00ad': 'soft hyphen',
  '\u061c': 'Arabic letter mark',
  '\u200b': 'zero width space',
  '\u200c': 'zero width non-joiner',
  '\u200d': 'zero width joiner',
  '\u200e': 'left-to-right mark',
  '\u200f': 'right-to-left mark',
  '\u202a': 'left-to-right embedding',
  '\u202b': 'right-to-left embedding',
  '\u202c': 'pop directional formatting',
  '\u202d': 'left-to-right override',
  '\u202e': 'right-to-left override',
  '\u2060': 'word joiner',
  '\u2066': 'left-to-right isolate',
  '\u2067': 'right-to-left isolate',
  '\u2068': 'first strong isolate',
  '\u2069': 'pop directional isolate',
  '\ufeff': 'zero width no-break space (BOM)',
};

/**
 * A user group's id or name, wherever it came from (flag, prompt, bulk row): the service keys
 * groups by the exact text, so a value that differs from what the user meant only invisibly
 * would create a second group. U+FFFD is what invalid UTF-8 in argv or on a terminal decodes to
 * (two different byte strings become one id); control characters and line separators cannot be
 * seen; neither can format characters (zero-width space, word joiner, bidi controls such as
 * U+202E, which also turns the rest of a line around on screen): none is allowed in an id, and
 * in a name only those that scripts and emoji need (nameMayHold). Spaces at either
 * end are almost always a quoting slip. Returns the reason, or undefined when it is fine.
 */
export function groupTextProblem(value: string, kind: 'id' | 'name'): string | undefined {
  // Printable ASCII with no space at either end breaks none of the rules below: most ids and
  // names, checked once per bulk row, in one test.
  if (PLAIN_TEXT.test(value)) return undefined;
  if (value.trim() === '') return 'cannot be empty';
  if (value.includes('\ufffd')) {
    return 'contains U+FFFD, the replacement for bytes that are not valid UTF-8';
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(value)) {
    return 'contains a control character';
  }
  for (const [char] of value.matchAll(/\p{Cf}/gu)) {
    if (kind === 'name' && nameMayHold(char)) continue;
    const name = FORMAT_CHARACTER_NAMES[char];
    return `contains ${codePointOf(char)}${name === undefined ? '' : ` (${name})`}, an invisible format character${kind === 'id' ? ', which no id may hold' : ''}`;
  }
  if (/^\s|\s$/u.test(value)) return 'has leading or trailing whitespace';
  return undefined;
}

const PLAIN_TEXT = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** `groupTextProblem` as a usage error that shows the value, escaped. */
export function checkGroupText(value: string, what: string, kind: 'id' | 'name'): string {
  const problem = groupTextProblem(value, kind);
  if (problem !== undefined) {
    const shown = value.trim() === '' ? what : `${what} ${quoteVisible(value)}`;
    throw new UsageError(`${shown} ${problem}`, {
      hint: 'ids and names are matched exactly: pass the value as the service should store it',
    });
  }
  return value;
}

/**
 * `quote`, with every character `pasteProblem` names also written as `\uXXXX`: a value shown
 * because it holds an invisible or reordering character (a bidi override would turn the rest of
 * the line around) shows that character instead of obeying it.
 */
export function quoteVisible(text: string): string {
  // UNPASTEABLE matches whole code points: a tag character (U+E0041) becomes a surrogate pair
  // of escapes, which JSON.parse reads back as that character, as it reads the rest of `quote`.
  return quote(text).replace(UNPASTEABLE, unicodeEscape);
}

/** A character as people look it up: `U+200B`. */
export function codePointOf(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Characters that `pasteProblem` names (global: for replacing them all). */
export const UNPASTEABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Cn}]|(?! )\p{Zs}/gu;

/**
 * Why `value` would not reach a program intact when pasted into a shell from a terminal, or
 * undefined when it would: control characters (C0, DEL, C1) and line separators are shown
 * escaped or break the line; invisible format characters (bidi controls, zero-width) are dropped
 * or reordered by terminals and clipboards; other spaces (U+00A0) come back as plain spaces; a
 * lone surrogate has no UTF-8 form; text not in NFC may be normalised by the clipboard.
 */
export function pasteProblem(value: string): string | undefined {
  const char = new RegExp(UNPASTEABLE.source, 'u').exec(value)?.[0];
  if (char !== undefined) return `contains ${codePointOf(char)}`;
  if (value.normalize('NFC') !== value) return 'is not in Unicode NFC form';
  return undefined;
}

/**
 * A URL as ugs shows it anywhere (messages, hints, notes, `--debug`, `status`, `doctor`): its
 * `user:password@` as `***@`, and the value of every query and fragment parameter as `***`
 * (`?token=***&page=***`; a part without `=` is all value, `?***`), so a password or an API token
 * carried in a server's `Location`, a proxy variable or a mistyped `--base-url` is never printed.
 * Scheme, host, port, path and parameter names are kept: they say where, and hold no secret.
 * Works on text, not a parsed URL: a `Location` that no URL parser accepts is shown too.
 */
export function redactUrl(text: string): string {
  // As a URL parser reads it: tabs and line breaks anywhere dropped, leading controls and spaces
  // too (`ht\ttps://user:pass@host` is an https URL with a password).
  // biome-ignore lint/suspicious/noControlCharactersInRegex: they are what is removed
  const url = text.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+/, '');
  const split = /[?#]/.exec(url);
  const head = split === null ? url : url.slice(0, split.index);
  // The authority is what follows the scheme (or a leading `//`) up to the first `/` or `\`
  // (WHATWG reads `\` as `/` in http URLs); its last `@` ends the user information.
  const shownHead = head.replace(/^([a-z][\w+.-]*:[/\\]*|[/\\]{2})[^/\\]*@/i, '$1***@');
  if (split === null) return shownHead;
  const tail = url.slice(split.index);
  // `?query#fragment`: each part after its marker, `&`-separated parameters, values cut.
  const shownTail = tail.replace(/([?#])([^#]*)/g, (_all, marker: string, params: string) => {
    const shown = params
      .split('&')
      .map((param) => {
        const eq = param.indexOf('=');
        if (eq === -1) return param === '' ? '' : '***';
        return eq === param.length - 1 ? param : `${param.slice(0, eq)}=***`;
      })
      .join('&');
    return `${marker}${shown}`;
  });
  return `${shownHead}${shownTail}`;
}

/**
 * One shell word: bare when it is plainly safe, single-quoted otherwise; controls shown escaped.
 * A `##[` or `##vso[` in it is quoted as `#''#[`: the same word to a shell, no command to a CI
 * runner (whose guard would otherwise escape it into a word that pastes as another value).
 */
export function shellWord(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  const quoted = `'${value.replace(/'/g, `'\\''`).replace(/#(?=#(?:vso)?\[)/gi, "#''")}'`;
  return escapeControls(quoted);
}

/**
 * One word for the shell that will run a command ugs prints: PowerShell on Windows, a POSIX shell
 * elsewhere. A POSIX word pasted into PowerShell or cmd.exe keeps its quotes as part of the value
 * (`'it'\''s'`), so a recovery command would look up, or create, another group.
 */
export function commandWord(value: string, shell: Shell): string {
  return shell === 'powershell' ? powershellWord(value) : shellWord(value);
}

/** `commandWord` for a platform's shell (see shellOf). */
export function commandWordFor(on: Platform): (value: string) => string {
  const shell = shellOf(on);
  return (value) => commandWord(value, shell);
}

/**
 * A curl command that sends `body` (printable ASCII JSON) with GET to `url`, the API token taken
 * from the variable API_TOKEN, for `shell`. PowerShell 5.1 strips the double quotes inside an
 * argument to a program (`-d '{"a":1}'` arrives as `{a:1}`), and 7.3 keeps them, so there the
 * JSON is piped in as a string instead (`--data-binary '@-'`), which every version passes whole;
 * and `curl.exe`, since `curl` is Invoke-WebRequest in PowerShell 5.1.
 */
export function curlJsonCommand(url: string, body: string, shell: Shell): string {
  if (shell === 'posix') {
    return `curl -X GET ${shellWord(url)} -H "Authorization: Token $API_TOKEN" -H 'Content-Type: application/json' -d ${shellWord(body)}`;
  }
  const literal = `'${body.replace(/'/g, "''")}'`;
  return `${literal} | curl.exe -X GET ${powershellWord(url)} -H "Authorization: Token $env:API_TOKEN" -H 'Content-Type: application/json' --data-binary '@-'`;
}

/**
 * One PowerShell word: bare when plainly safe, otherwise in single quotes, where only a quote
 * is special (PowerShell also reads the typographic ones, ‘ ’ ‚ ‛, as quotes) and is doubled. `,`,
 * `@`, `%` and `=` stay quoted: they are operators or splatting there. A `##[` is split as
 * `('…#'+'#[…')`, one argument to PowerShell, no command to a CI runner.
 */
export function powershellWord(value: string): string {
  if (/^[A-Za-z0-9_+:./\\-]+$/.test(value) && !value.startsWith('-')) return value;
  const quote = (part: string) => `'${part.replace(/['\u2018\u2019\u201a\u201b]/g, '$&$&')}'`;
  const parts = value.split(/(?<=#)(?=#(?:vso)?\[)/i);
  const word = parts.length === 1 ? quote(value) : `(${parts.map(quote).join('+')})`;
  return escapeControls(word);
}
