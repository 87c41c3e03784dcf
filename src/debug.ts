/**
 * `--debug` trace: where the profile, base URL and API token came from, then every request and
 * response. Developers paste these into tickets, so no secret is ever printed whole, here at the
 * only place that prints them: the Authorization header, any JSON field whose name says token,
 * and every known secret value wherever else it appears are shown as a fingerprint (`…a1b2`, the
 * last 4 characters), which is enough to tell which token a trace used. Proxy credentials and
 * cookies are `[REDACTED]`. What the server sent is shown with its control characters escaped,
 * one prefixed trace line per line of a body: a trace goes to a terminal too.
 */
import type { Writable } from 'node:stream';
import { escapeControls } from './io.js';
import { formatJsonText } from './json-text.js';
import { redactUrl } from './parse.js';

export const REDACTED = '[REDACTED]';

/**
 * The last 4 characters of a token, so a trace, a prompt or `status` can be matched to the token
 * someone holds; none of a token shorter than 8 characters, which they would half give away.
 */
function lastFour(token: string): string | undefined {
  return token.length >= 8 ? token.slice(-4) : undefined;
}

/** In traces and prompts: `…a1b2`, or `[REDACTED]`. */
export function fingerprint(token: string): string {
  const tail = lastFour(token);
  return tail === undefined ? REDACTED : `…${tail}`;
}

/** In `status` and `doctor`: `****a1b2`, or `****`. */
export function maskToken(token: string): string {
  return `****${lastFour(token) ?? ''}`;
}

export interface TraceRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string;
  attempt: number;
}

export interface TraceResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  elapsedMs: number;
}

/** Where each setting of a run came from, for the first lines of the trace. */
export interface TraceContext {
  profile: { value: string; source: 'flag' | 'env' | 'default' };
  baseUrl: { value: string; source: 'flag' | 'env' | 'profile' } | undefined;
  apiPath: { value: string; source: 'flag' | 'env' | 'profile' | 'default' };
  apiToken: { value: string; source: 'profile' | 'env UGS_API_TOKEN' } | undefined;
}

export interface Tracer {
  /** The settings a command resolved, before anything is sent. */
  context(context: TraceContext): void;
  request(request: TraceRequest): void;
  response(response: TraceResponse): void;
  failure(message: string, elapsedMs: number): void;
  retry(delayMs: number, reason: string): void;
  /** Values that must never be printed, such as a token typed at a prompt. */
  addSecret(secret: string): void;
}

export const silentTracer: Tracer = {
  context() {},
  request() {},
  response() {},
  failure() {},
  retry() {},
  addSecret() {},
};

const TOKEN_KEY = /token|secret|password|authorization/i;
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);
/** Headers whose value is a URL: shown as every URL is (see redactUrl). */
const URL_HEADERS = new Set(['location', 'content-location']);

export class StreamTracer implements Tracer {
  private readonly secrets = new SecretSet();

  constructor(
    private readonly out: Writable,
    secrets: readonly string[] = [],
  ) {
    for (const secret of secrets) this.addSecret(secret);
  }

  addSecret(secret: string): void {
    this.secrets.add(secret);
  }

  context({ profile, baseUrl, apiPath, apiToken }: TraceContext): void {
    if (apiToken !== undefined) this.addSecret(apiToken.value);
    const profileSource = { flag: 'flag --profile', env: 'env UGS_PROFILE', default: 'default' };
    const inProfile = `profile "${this.redactText(profile.value)}"`;
    const from = (source: 'flag' | 'env' | 'profile' | 'default', flag: string, env: string) =>
      source === 'flag'
        ? `flag ${flag}`
        : source === 'env'
          ? `env ${env}`
          : source === 'profile'
            ? inProfile
            : 'default';
    this.write(`* profile: ${this.redactText(profile.value)} (${profileSource[profile.source]})`);
    this.write(
      baseUrl === undefined
        ? '* base URL: none (no --base-url, UGS_BASE_URL or profile value)'
        : `* base URL: ${this.redactText(redactUrl(baseUrl.value))} (${from(baseUrl.source, '--base-url', 'UGS_BASE_URL')})`,
    );
    this.write(
      `* API path: ${this.redactText(apiPath.value)} (${from(apiPath.source, '--api-path', 'UGS_API_PATH')})`,
    );
    this.write(
      apiToken === undefined
        ? '* API token: none (no UGS_API_TOKEN or profile value)'
        : `* API token: ${fingerprint(apiToken.value)} (${apiToken.source === 'profile' ? inProfile : apiToken.source})`,
    );
  }

  request(request: TraceRequest): void {
    const retry = request.attempt > 0 ? ` (retry ${request.attempt})` : '';
    this.write(`> ${request.method} ${this.redactText(redactUrl(request.url.href))}${retry}`);
    for (const [name, value] of Object.entries(request.headers)) {
      this.write(`> ${name}: ${this.redactHeader(name, value)}`);
    }
    this.write('>');
    for (const line of this.bodyLines(request.body)) this.write(`> ${line}`);
  }

  response(response: TraceResponse): void {
    this.write(`< HTTP ${response.status} (${Math.round(response.elapsedMs)} ms)`);
    for (const [name, value] of Object.entries(response.headers)) {
      this.write(`< ${name}: ${this.redactHeader(name, value)}`);
    }
    this.write('<');
    for (const line of this.bodyLines(response.body)) this.write(`< ${line}`);
  }

  failure(message: string, elapsedMs: number): void {
    this.write(`! ${this.redactText(message)} (after ${Math.round(elapsedMs)} ms)`);
  }

  retry(delayMs: number, reason: string): void {
    this.write(`* retrying in ${Math.round(delayMs)} ms: ${this.redactText(reason)}`);
  }

  private write(line: string): void {
    this.out.write(`[debug] ${line}\n`);
  }

  private redactHeader(name: string, value: string): string {
    if (URL_HEADERS.has(name.toLowerCase())) return this.redactText(redactUrl(value));
    if (!SECRET_HEADERS.has(name.toLowerCase())) return this.redactText(value);
    const scheme = /^(\w+)\s+(.*)$/s.exec(value);
    // The API token's own header: its fingerprint says which token was sent.
    if (name.toLowerCase() === 'authorization' && scheme) {
      return `${scheme[1]} ${escapeControls(fingerprint(scheme[2] ?? ''))}`;
    }
    return scheme ? `${scheme[1]} ${REDACTED}` : REDACTED;
  }

  /**
   * A body as trace lines. JSON is re-printed from its text on one line (compact, token-named
   * keys fingerprinted, `__proto__` kept, no recursion however deep it nests); anything else is
   * shown line by line, each line's other controls escaped, so every line carries the prefix.
   */
  bodyLines(body: string): string[] {
    if (body === '') return [];
    try {
      JSON.parse(body);
      return [
        formatJsonText(body, {
          indent: 0,
          secretKey: TOKEN_KEY,
          secrets: this.secrets,
          mask: fingerprint,
        }),
      ];
    } catch {
      const lines = body.split(/\r?\n/);
      if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
      return lines.map((line) => this.redactText(line));
    }
  }

  /** Secrets fingerprinted and controls escaped: for server text and error messages. */
  redactText(text: string): string {
    return escapeControls(this.secrets.redact(text, fingerprint));
  }
}

/**
 * Every occurrence of each secret replaced by `[REDACTED]` (or what `mask` makes of it). Values
 * shorter than 4 characters are left alone: they would redact ordinary words, and no real token
 * is that short.
 */
export function redactSecrets(
  text: string,
  secrets: Iterable<string>,
  mask: (secret: string) => string = () => REDACTED,
): string {
  return SecretSet.of(secrets).redact(text, mask);
}

/** Shorter values are not secrets to look for (see redactSecrets). */
const MIN_SECRET_LENGTH = 4;

/**
 * The secrets of a run, found in a text in time linear in the text whatever their number: a bulk
 * rotate with `--debug` knows two tokens per row, and a trace line checked against each of
 * 100,000 in turn took minutes. At each place in the text, only a place where some secret's first
 * 4 characters start is looked at further, with one set lookup per distinct secret length
 * (tokens come in few lengths), the longest first.
 */
export class SecretSet implements Iterable<string> {
  private readonly all = new Set<string>();
  private readonly starts = new Set<string>();
  /** Distinct lengths of the secrets, longest first. */
  private lengths: number[] = [];

  constructor(secrets: Iterable<string> = []) {
    for (const secret of secrets) this.add(secret);
  }

  /** `secrets` itself when it is a SecretSet already (no copy per call). */
  static of(secrets: Iterable<string>): SecretSet {
    return secrets instanceof SecretSet ? secrets : new SecretSet(secrets);
  }

  get size(): number {
    return this.all.size;
  }

  add(secret: string): void {
    if (secret.length < MIN_SECRET_LENGTH || this.all.has(secret)) return;
    this.all.add(secret);
    this.starts.add(secret.slice(0, MIN_SECRET_LENGTH));
    if (!this.lengths.includes(secret.length)) {
      this.lengths = [...this.lengths, secret.length].sort((a, b) => b - a);
    }
  }

  [Symbol.iterator](): Iterator<string> {
    return this.all[Symbol.iterator]();
  }

  redact(text: string, mask: (secret: string) => string = () => REDACTED): string {
    if (this.all.size === 0 || text.length < MIN_SECRET_LENGTH) return text;
    let out = '';
    let copied = 0;
    for (let i = 0; i + MIN_SECRET_LENGTH <= text.length; ) {
      const secret = this.starts.has(text.slice(i, i + MIN_SECRET_LENGTH))
        ? this.secretAt(text, i)
        : undefined;
      if (secret === undefined) {
        i++;
        continue;
      }
      out += text.slice(copied, i) + mask(secret);
      i += secret.length;
      copied = i;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }

  private secretAt(text: string, at: number): string | undefined {
    for (const length of this.lengths) {
      if (at + length > text.length) continue;
      const candidate = text.slice(at, at + length);
      if (this.all.has(candidate)) return candidate;
    }
    return undefined;
  }
}
