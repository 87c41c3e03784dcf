/**
 * `--debug` trace of every request and response. Developers paste these into tickets, so every
 * secret is redacted here, at the only place that prints them: the Authorization header, any JSON
 * field whose name says token, and every known secret value wherever else it appears. What the
 * server sent is shown with its control characters escaped: a trace goes to a terminal too.
 */
import type { Writable } from 'node:stream';
import { escapeControls } from './io.js';
import { formatJsonText } from './json-text.js';

export const REDACTED = '[REDACTED]';

/**
 * A token shown by its last 4 characters (`…a1b2`), so a trace or a prompt can be matched to the
 * token someone holds. A token shorter than 8 characters would be half given away: `[REDACTED]`.
 */
export function fingerprint(token: string): string {
  return token.length >= 8 ? `…${token.slice(-4)}` : REDACTED;
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

export interface Tracer {
  request(request: TraceRequest): void;
  response(response: TraceResponse): void;
  failure(message: string, elapsedMs: number): void;
  retry(delayMs: number, reason: string): void;
  /** Values that must never be printed, such as a token typed at a prompt. */
  addSecret(secret: string): void;
}

export const silentTracer: Tracer = {
  request() {},
  response() {},
  failure() {},
  retry() {},
  addSecret() {},
};

const TOKEN_KEY = /token|secret|password|authorization/i;
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

export class StreamTracer implements Tracer {
  private readonly secrets = new Set<string>();

  constructor(
    private readonly out: Writable,
    secrets: readonly string[] = [],
  ) {
    for (const secret of secrets) this.addSecret(secret);
  }

  addSecret(secret: string): void {
    this.secrets.add(secret);
  }

  request(request: TraceRequest): void {
    const retry = request.attempt > 0 ? ` (retry ${request.attempt})` : '';
    this.write(`> ${request.method} ${request.url.href}${retry}`);
    for (const [name, value] of Object.entries(request.headers)) {
      this.write(`> ${name}: ${this.redactHeader(name, value)}`);
    }
    this.write('>');
    if (request.body !== '') this.write(`> ${this.redactBody(request.body)}`);
  }

  response(response: TraceResponse): void {
    this.write(`< HTTP ${response.status} (${Math.round(response.elapsedMs)} ms)`);
    for (const [name, value] of Object.entries(response.headers)) {
      this.write(`< ${name}: ${this.redactHeader(name, value)}`);
    }
    this.write('<');
    if (response.body !== '') this.write(`< ${this.redactBody(response.body)}`);
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
    if (!SECRET_HEADERS.has(name.toLowerCase())) return this.redactText(value);
    const scheme = /^(\w+)\s/.exec(value);
    return scheme ? `${scheme[1]} ${REDACTED}` : REDACTED;
  }

  /**
   * A JSON body is re-printed from its text (compact, token-named keys redacted, `__proto__` kept,
   * no recursion however deep it nests); anything else is shown with controls escaped.
   */
  redactBody(body: string): string {
    let json: string | undefined;
    try {
      JSON.parse(body);
      json = formatJsonText(body, { indent: 0, secretKey: TOKEN_KEY, secrets: this.secrets });
    } catch {
      json = undefined;
    }
    return json ?? this.redactText(body);
  }

  /** Secrets cut out and controls escaped: for server text and error messages. */
  redactText(text: string): string {
    return escapeControls(redactSecrets(text, this.secrets));
  }
}

/**
 * Every occurrence of each secret replaced by `[REDACTED]`. Values shorter than 4 characters
 * are left alone: they would redact ordinary words, and no real token is that short.
 */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length >= 4) result = result.split(secret).join(REDACTED);
  }
  return result;
}
