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
import { redactUrl } from '../input/parse.js';
import { escapeControls } from '../platform/io.js';
import { formatJsonText } from '../text/json-text.js';
import { message } from '../text/message.js';
import { fingerprint, REDACTED, SecretSet } from '../text/redact.js';

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
  profile: { value: string; source: 'flag' | 'env' | 'config' | 'default' };
  baseUrl: { value: string; source: 'flag' | 'env' | 'profile' } | undefined;
  apiPath: { value: string; source: 'flag' | 'env' | 'profile' | 'default' };
  apiToken: { value: string; source: 'profile' | 'env UGS_API_TOKEN' } | undefined;
  /** The dialect when one was chosen (a flag, the environment or the profile). */
  dialect?: { value: string; source: 'flag' | 'env' | 'profile' | 'default' };
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

// `jwt`: an embed JWT (generate_jwt/'s answer) opens a dashboard as a token does.
const TOKEN_KEY = /token|secret|password|authorization|jwt/i;
const SECRET_HEADERS = new Set([
  'authorization',
  // The vendor's header for the API token (`--dialect explo`).
  'explo-authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
]);
/** The headers that carry the API token: shown by its fingerprint, which says which was sent. */
const API_TOKEN_HEADERS = new Set(['authorization', 'explo-authorization']);
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

  context({ profile, baseUrl, apiPath, apiToken, dialect }: TraceContext): void {
    if (apiToken !== undefined) this.addSecret(apiToken.value);
    const profileSource = {
      flag: 'flag --profile',
      env: 'env UGS_PROFILE',
      config: 'ugs profile use',
      default: 'default',
    };
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
    // Said only when chosen: a run in the default dialect traces as it always did.
    if (dialect !== undefined && dialect.source !== 'default') {
      this.write(
        `* dialect: ${dialect.value} (${from(dialect.source, '--dialect', 'UGS_DIALECT')})`,
      );
    }
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
    if (API_TOKEN_HEADERS.has(name.toLowerCase()) && scheme) {
      return message`${scheme[1]} ${fingerprint(scheme[2] ?? '')}`;
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
