/**
 * What an HTTP answer from the service says, as a value: a success, a refusal in the service's own
 * envelope, an HTTP error, a refused API token, or something that cannot be read. Every string
 * taken from the server is escaped, shortened and cleared of secrets here, before any message
 * can quote it.
 */

import { type JsonObject, redactUrl } from '../input/parse.js';
import { isPlainObject } from '../platform/guards.js';
import { escapeControls } from '../platform/io.js';
import { rememberJsonText } from '../text/json-text.js';
import { redactSecrets } from '../text/redact.js';
import type { HttpResponse } from '../transport/http.js';

export type Answer =
  | { kind: 'ok'; status: number; body: JsonObject; text: string }
  /** 401 or 403: the API token was refused. */
  | { kind: 'denied'; status: number; message: string; body: JsonObject | undefined }
  /** Any other status outside 2xx. */
  | {
      kind: 'http-error';
      status: number;
      message: string;
      body: JsonObject | undefined;
      retryAfter: string | undefined;
      /**
       * A gateway's "the service is not there": 502, 503 or 504, or an HTML error page (nginx's
       * own 500 page, a load balancer's) where the service answers JSON.
       */
      unavailable: boolean;
    }
  /** 2xx with `success: 0`: the service says it did nothing. */
  | { kind: 'refused'; status: number; message: string; body: JsonObject }
  /** 2xx that is not the documented envelope. */
  | {
      kind: 'unreadable';
      status: number;
      message: string;
      body: JsonObject | undefined;
      hint?: string;
    };

/** What was requested, for messages that must name it (a 404 names the URL that was not found). */
export interface AnsweredRequest {
  method: string;
  url: URL;
}

/**
 * `secrets`: the API token and any secret input, cut out of the server's words before shown.
 * `bare`: the operation's answer has no `success` envelope (a DRF list): any 2xx object is one.
 */
export function classifyAnswer(
  response: HttpResponse,
  secrets: readonly string[],
  request?: AnsweredRequest,
  bare = false,
): Answer {
  const { status } = response;
  const parsed = parseJson(response.text);
  const body = isPlainObject(parsed) ? parsed : undefined;
  if (
    status >= 200 &&
    status < 300 &&
    body !== undefined &&
    (bare || successOf(body.success) === true)
  ) {
    // A success: the server's words are for failures only (a bulk run reads thousands of these).
    return { kind: 'ok', status, body, text: response.text };
  }
  return classifyFailure(response, parsed, body, secrets, request);
}

/** Every answer but a success: what it says, cleaned for a person to read. */
function classifyFailure(
  response: HttpResponse,
  parsed: unknown,
  body: JsonObject | undefined,
  secrets: readonly string[],
  request: AnsweredRequest | undefined,
): Exclude<Answer, { kind: 'ok' }> {
  const { status } = response;
  // Server text: escaped before it can reach a message, and kept short.
  const contentType = sanitize(response.headers['content-type'] ?? 'no content type', [], 100);
  // `--json` prints the body from its text; a secret the server quoted back must not go with it.
  if (body !== undefined) rememberJsonText(body, response.text, secrets);
  const serverMessage =
    body !== undefined
      ? messageOf(body, secrets)
      : isPlainText(contentType)
        ? firstLine(response.text, secrets)
        : undefined;

  if (status === 401 || status === 403) {
    const what =
      status === 401 ? 'the API token was not accepted' : 'the API token may not do this';
    const message = `${what} (HTTP ${status}${serverMessage ? `: ${serverMessage}` : ''})`;
    return { kind: 'denied', status, message, body };
  }
  if (status < 200 || status >= 300) {
    const detail = serverMessage ?? (body === undefined ? `a ${contentType} body` : 'no message');
    const rateLimited = status === 429 ? ' (rate limited)' : '';
    // A 404 is about the address: naming the URL shows a doubled prefix (`/api/api/user`) or a
    // wrong host at a glance. Shown as redactUrl shows URLs (no user information, query values).
    const where =
      status === 404 && request !== undefined
        ? ` to ${request.method} ${redactUrl(request.url.href)}`
        : '';
    const message = `the service answered HTTP ${status}${rateLimited}${where}: ${detail}`;
    return {
      kind: 'http-error',
      status,
      message,
      body,
      retryAfter: response.headers['retry-after'],
      unavailable:
        status === 502 ||
        status === 503 ||
        status === 504 ||
        (status >= 500 && body === undefined && /^\s*text\/html\b/i.test(contentType)),
    };
  }
  if (parsed === undefined) {
    return {
      kind: 'unreadable',
      status,
      message: `the service answered HTTP ${status} with a body that is not JSON (${contentType})`,
      body: undefined,
      hint: 'check that --base-url points at the User Group Service and not at a web page or proxy',
    };
  }
  if (body === undefined) {
    const message = `the service answered HTTP ${status} with JSON that is not an object`;
    return { kind: 'unreadable', status, message, body: undefined };
  }
  const success = successOf(body.success);
  if (success === false) {
    const message =
      serverMessage ?? 'the service reported a failure (success: 0) without a message';
    return { kind: 'refused', status, message, body };
  }
  return { kind: 'unreadable', status, message: 'the answer has no valid "success" field', body };
}

/**
 * The interface documents `success` as the number 1 or 0. `true`/`"1"` and `false`/`"0"` are
 * read the same way: refusing a successful rotation over the type of a flag would lose the new
 * token. Anything else is not an answer we understand.
 */
export function successOf(value: unknown): boolean | undefined {
  if (value === 1 || value === true || value === '1') return true;
  if (value === 0 || value === false || value === '0') return false;
  return undefined;
}

/** At most this many DRF field errors are quoted; the rest is summarised. */
const MAX_FIELD_ERRORS = 10;

/**
 * The server's own words: `error`, `message` or `detail` (DRF), else DRF's field errors
 * (`{"name": ["Ensure ..."], "non_field_errors": [...]}`) as `name: Ensure ...` joined with `; `.
 */
function messageOf(body: JsonObject, secrets: readonly string[]): string | undefined {
  for (const key of ['error', 'message', 'detail']) {
    const value = body[key];
    if (typeof value === 'string' && value.trim() !== '') return sanitize(value, secrets);
    if (isPlainObject(value) && typeof value.message === 'string') {
      return sanitize(value.message, secrets);
    }
  }
  return fieldErrors(body, secrets);
}

function fieldErrors(body: JsonObject, secrets: readonly string[]): string | undefined {
  const parts: string[] = [];
  let more = 0;
  // Nested serializers nest their errors (`{"mapping": {"sales": ["..."]}}`): walked in document
  // order with an explicit stack and a depth bound, never recursion: an answer may nest without end.
  const stack: Array<[path: string, value: unknown, depth: number]> = Object.keys(body)
    .filter((key) => key !== 'success')
    .map((key): [string, unknown, number] => [key, body[key], 0])
    .reverse();
  while (stack.length > 0) {
    const [path, value, depth] = stack.pop() as [string, unknown, number];
    // DRF lists a field's messages; a lone string is some other field (`"code": "E42"`).
    const messages =
      Array.isArray(value) && value.length > 0 && value.every((entry) => typeof entry === 'string')
        ? (value as string[])
        : undefined;
    if (messages !== undefined) {
      for (const message of messages) {
        if (message.trim() === '') continue;
        if (parts.length >= MAX_FIELD_ERRORS) {
          more++;
          continue;
        }
        const field = path === 'non_field_errors' ? '' : `${sanitize(path, secrets, 100)}: `;
        parts.push(`${field}${sanitize(message, secrets, 200)}`);
      }
    } else if (isPlainObject(value) && depth < 4) {
      const keys = Object.keys(value);
      for (let k = keys.length - 1; k >= 0; k--) {
        const key = keys[k] as string;
        stack.push([`${path}.${key}`, value[key], depth + 1]);
      }
    }
  }
  if (parts.length === 0) return undefined;
  return `${parts.join('; ')}${more > 0 ? ` (and ${more} more)` : ''}`;
}

function isPlainText(contentType: string): boolean {
  return /^\s*text\/plain\b/i.test(contentType);
}

/** A text/plain error body: its first non-empty line, escaped and short. HTML is never shown. */
function firstLine(text: string, secrets: readonly string[]): string | undefined {
  const line = text.split(/\r\n|\r|\n/).find((entry) => entry.trim() !== '');
  return line === undefined ? undefined : sanitize(line, secrets, 200);
}

/**
 * Server text goes to a terminal: controls shown as escapes, never obeyed; no walls of text; no
 * secrets. Secrets go first, so that an escape cannot split one and let it through.
 */
function sanitize(text: string, secrets: readonly string[], max = 300): string {
  const clean = escapeControls(
    redactSecrets(text, secrets)
      .replace(/[\t\r\n]+/g, ' ')
      .trim(),
  );
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `Retry-After` as a person reads it: "30 s", or the seconds until its date. */
export function retryAfterText(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d{1,9}$/.test(trimmed)) return `${Number(trimmed)} s`;
  if (!/^[a-z]{3,9},?\s/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return `${Math.max(0, Math.ceil((date - Date.now()) / 1000))} s`;
}
