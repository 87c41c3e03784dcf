/**
 * The User Group Service's wire format: the one path, the two operations, the headers, and the
 * checks on what comes back. Everything that comes off the wire is validated here before the rest
 * of the tool sees it.
 */
import { redactSecrets } from './debug.js';
import { ApiError, AuthError, OutcomeUnknownError, UsageError } from './errors.js';
import {
  getRetryPolicy,
  type HttpClient,
  type HttpResponse,
  type RetryPolicy,
  rotateRetryPolicy,
  TransportError,
} from './http.js';
import { controlCharacters, escapeControls } from './io.js';
import { rememberJsonText } from './json-text.js';
import { endpointUrl, type JsonObject, type StringMap } from './parse.js';

/** Where the API token came from: hints about a refused token must name it. */
export type TokenSource = 'profile' | 'env UGS_API_TOKEN';

export interface Target {
  baseUrl: URL;
  apiToken: string;
  /** The endpoint's path, joined to the base URL (its path prefix kept); USER_PATH by default. */
  apiPath?: string;
  /** The profile in use, for `ugs login --profile <name>` hints. */
  profile?: string;
  tokenSource?: TokenSource;
}

export interface ServiceClientOptions {
  /** A `note:` for the user (stderr), e.g. that a redirect was followed. */
  notify?: (message: string) => void;
}

export interface GetUserRequest {
  name: string;
  user_group_id: string;
  mapping?: StringMap;
  properties?: JsonObject;
}

/** A user group as the service sent it: every field kept, the ones we rely on checked. */
export type UserGroup = JsonObject & { token: string };

export interface ServiceResult {
  /** The whole response body, as parsed (`--json` prints it from `text`, see json-text.ts). */
  body: JsonObject;
  /** The body as the server sent it (BOM removed); absent for results not read off the wire. */
  text?: string;
  userGroup: UserGroup;
  /** Get User's `new_user_group`; undefined when the service did not say. */
  created: boolean | undefined;
}

export interface ServiceClient {
  getUser(request: GetUserRequest): Promise<ServiceResult>;
  rotateToken(currentToken: string): Promise<ServiceResult>;
}

export const USER_PATH = '/api/user';

type Operation = 'get' | 'rotate';

/** The statuses a framework redirects with; 303 would turn the request into a GET. */
const FOLLOWABLE_REDIRECTS = new Set([301, 302, 307, 308]);

export class HttpServiceClient implements ServiceClient {
  private readonly notify: (message: string) => void;

  constructor(
    private readonly http: HttpClient,
    private readonly target: Target,
    private readonly userAgent: string,
    options: ServiceClientOptions = {},
  ) {
    this.notify = options.notify ?? (() => {});
  }

  async getUser(request: GetUserRequest): Promise<ServiceResult> {
    const response = await this.send('get', request, getRetryPolicy);
    return parseResult(response, this.context('get', []));
  }

  async rotateToken(currentToken: string): Promise<ServiceResult> {
    let response: HttpResponse;
    try {
      response = await this.send('rotate', { current_token: currentToken }, rotateRetryPolicy);
    } catch (error) {
      if (error instanceof TransportError && error.maybeDelivered) {
        throw new OutcomeUnknownError(
          `the rotation request was sent but no answer came back (${error.message}): the token may or may not have been rotated`,
          { hint: READ_CURRENT_TOKEN_HINT, cause: error },
        );
      }
      // An answer too large to read: a 2xx or 5xx one may stand for a rotation that happened.
      const status = error instanceof ApiError ? error.status : undefined;
      if (status !== undefined && ((status >= 200 && status < 300) || status >= 500)) {
        throw new OutcomeUnknownError(
          `${(error as ApiError).message}; the token may or may not have been rotated`,
          { hint: `the rotation may have happened; ${READ_CURRENT_TOKEN_HINT}`, cause: error },
        );
      }
      throw error;
    }
    return parseResult(response, this.context('rotate', [currentToken]));
  }

  private context(operation: Operation, secrets: readonly string[]): AnswerContext {
    return {
      operation,
      baseUrl: this.target.baseUrl,
      apiPath: this.target.apiPath ?? USER_PATH,
      profile: this.target.profile ?? 'default',
      tokenSource: this.target.tokenSource ?? 'profile',
      secrets: [this.target.apiToken, ...secrets],
    };
  }

  /**
   * One request, and at most one redirect followed: the one a framework sends (Django's
   * APPEND_SLASH) to the same path with a slash appended. It comes before any view runs, so
   * sending a rotation again there cannot rotate twice. Any other redirect is refused: following
   * it would send the API token wherever a server points.
   */
  private async send(
    operation: Operation,
    payload: object,
    policy: RetryPolicy,
  ): Promise<HttpResponse> {
    const apiPath = this.target.apiPath ?? USER_PATH;
    const url = endpointUrl(this.target.baseUrl, apiPath);
    const body = JSON.stringify(payload);
    const first = await this.sendTo(url, body, operation, policy);
    if (!isRedirect(first.status)) return first;
    const location = redirectTarget(first, url);
    if (
      location === undefined ||
      !FOLLOWABLE_REDIRECTS.has(first.status) ||
      !isSlashAppended(url, location)
    ) {
      throw redirectError(first, operation);
    }
    this.notify(
      `the service redirected ${url.pathname} to ${location.pathname}; the request was sent there (pass --api-path ${escapeControls(apiPath)}/ to skip the redirect)`,
    );
    const second = await this.sendTo(location, body, operation, policy);
    if (isRedirect(second.status)) throw redirectError(second, operation);
    return second;
  }

  private sendTo(
    url: URL,
    body: string,
    operation: Operation,
    policy: RetryPolicy,
  ): Promise<HttpResponse> {
    return this.http.send(
      {
        method: operation === 'get' ? 'GET' : 'POST',
        url,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: `Token ${this.target.apiToken}`,
          'user-agent': this.userAgent,
        },
        body,
      },
      policy,
    );
  }
}

function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}

/** The `Location` resolved against the request URL, or undefined when absent or unreadable. */
function redirectTarget(response: HttpResponse, requestUrl: URL): URL | undefined {
  const location = response.headers.location;
  if (location === undefined || location === '') return undefined;
  try {
    return new URL(location, requestUrl);
  } catch {
    return undefined;
  }
}

function isSlashAppended(from: URL, to: URL): boolean {
  return (
    to.origin === from.origin &&
    to.pathname === `${from.pathname}/` &&
    to.search === from.search &&
    to.username === from.username &&
    to.password === from.password
  );
}

function redirectError(response: HttpResponse, operation: Operation): ApiError {
  const location = response.headers.location;
  const where =
    location === undefined || location === ''
      ? 'without a Location'
      : `to ${escapeControls(location.length > 300 ? `${location.slice(0, 300)}…` : location)}`;
  const outcome = operation === 'rotate' ? ': the token was not rotated' : '';
  return new ApiError(
    `the service answered HTTP ${response.status}, a redirect ${where}, which ugs does not follow${outcome}`,
    {
      status: response.status,
      hint: 'check --base-url (https:// rather than http://? the right host and path prefix?) and --api-path',
    },
  );
}

export const READ_CURRENT_TOKEN_HINT =
  "read the group's current token with `ugs get --id <user_group_id> --name <name> --field token`";

/** What `parseResult` needs to know to explain an answer. */
export interface AnswerContext {
  operation: Operation;
  baseUrl: URL;
  apiPath: string;
  profile: string;
  tokenSource: TokenSource;
  /** The API token, the token being rotated: cut out of the server's words before shown. */
  secrets: readonly string[];
}

export function loginCommandFor(profile: string): string {
  if (profile === 'default') return 'ugs login';
  // A name a shell would split or expand is quoted; controls are shown, never sent.
  const name = /^[\w.@%+=:,/-]+$/.test(profile) ? profile : `'${profile.replace(/'/g, "'\\''")}'`;
  return `ugs login --profile ${escapeControls(name)}`;
}

/**
 * Turns an HTTP answer into a result or a typed error that says what the service said. For a
 * rotation, any 2xx that cannot be read, and any 5xx, leaves the outcome unknown (exit 5): the
 * service may have committed the new token before the answer went wrong.
 */
export function parseResult(response: HttpResponse, context: AnswerContext): ServiceResult {
  try {
    return readAnswer(response, context);
  } catch (error) {
    const refused =
      error instanceof ApiError && isObject(error.body) && successOf(error.body.success) === false;
    if (
      context.operation === 'rotate' &&
      error instanceof ApiError &&
      !refused &&
      response.status >= 200 &&
      response.status < 300
    ) {
      throw new OutcomeUnknownError(
        `${error.message}; the token may or may not have been rotated`,
        {
          hint: `the rotation may have happened; ${READ_CURRENT_TOKEN_HINT}`,
          body: error.body,
          cause: error,
        },
      );
    }
    throw error;
  }
}

function readAnswer(response: HttpResponse, context: AnswerContext): ServiceResult {
  const { status } = response;
  const { secrets, operation } = context;
  // Server text: escaped before it can reach a message, and kept short.
  const contentType = sanitize(response.headers['content-type'] ?? 'no content type', [], 100);
  const parsed = parseJson(response.text);
  const body = isObject(parsed) ? parsed : undefined;
  // `--json` prints the body from its text; a secret the server quoted back must not go with it.
  if (body !== undefined) rememberJsonText(body, response.text, secrets);
  const serverMessage =
    body !== undefined
      ? messageOf(body, secrets)
      : isPlainText(contentType)
        ? firstLine(response.text, secrets)
        : undefined;
  const errorBody = body;

  if (status === 401 || status === 403) {
    const what =
      status === 401 ? 'the API token was not accepted' : 'the API token may not do this';
    throw new AuthError(`${what} (HTTP ${status}${serverMessage ? `: ${serverMessage}` : ''})`, {
      hint: authHint(context),
      body: errorBody,
    });
  }
  if (status < 200 || status >= 300) {
    const detail = serverMessage ?? (body === undefined ? `a ${contentType} body` : 'no message');
    const rateLimited = status === 429 ? ' (rate limited)' : '';
    const message = `the service answered HTTP ${status}${rateLimited}: ${detail}`;
    if (operation === 'rotate' && status >= 500) {
      // A framework can fail after the database committed (a crash while rendering the answer),
      // and a gateway can give up while the service goes on.
      throw new OutcomeUnknownError(`${message}; the token may or may not have been rotated`, {
        hint: `the rotation may have happened; ${READ_CURRENT_TOKEN_HINT}`,
        body: errorBody,
      });
    }
    throw new ApiError(message, {
      status,
      body: errorBody,
      ...withHint(hintForAnswer(status, body, response, context)),
    });
  }
  if (parsed === undefined) {
    throw new ApiError(
      `the service answered HTTP ${status} with a body that is not JSON (${contentType})`,
      {
        status,
        hint: 'check that --base-url points at the User Group Service and not at a web page or proxy',
      },
    );
  }
  if (body === undefined) {
    throw new ApiError(`the service answered HTTP ${status} with JSON that is not an object`, {
      status,
    });
  }
  const success = successOf(body.success);
  if (success === false) {
    // The service's own envelope says no: nothing was done, even for a rotation (exit 1).
    throw new ApiError(
      serverMessage ?? 'the service reported a failure (success: 0) without a message',
      {
        status,
        body: errorBody,
        ...(operation === 'rotate' && {
          hint: `check the token; if it was rotated already, ${READ_CURRENT_TOKEN_HINT}`,
        }),
      },
    );
  }
  if (success === undefined) {
    throw new ApiError('the answer has no valid "success" field', { status, body: errorBody });
  }
  const userGroup = body.user_group;
  if (!isObject(userGroup)) {
    throw new ApiError('the answer has no "user_group" object', { status, body: errorBody });
  }
  if (typeof userGroup.token !== 'string' || userGroup.token === '') {
    throw new ApiError('the answer\'s "user_group" has no "token" string', {
      status,
      body: errorBody,
    });
  }
  // A success body is the user's own data: printed by `--json` as sent, nothing cut out.
  rememberJsonText(body, response.text);
  const created = typeof body.new_user_group === 'boolean' ? body.new_user_group : undefined;
  return { body, text: response.text, userGroup: userGroup as UserGroup, created };
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
    if (isObject(value) && typeof value.message === 'string') {
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
    } else if (isObject(value) && depth < 4) {
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

function authHint(context: AnswerContext): string {
  const login = `\`${loginCommandFor(context.profile)}\``;
  if (context.tokenSource === 'env UGS_API_TOKEN') {
    return `the token comes from UGS_API_TOKEN, which overrides profile "${context.profile}": set it to a valid token, or unset it and run ${login}`;
  }
  return `run ${login} to save a valid token for ${context.baseUrl.host}, or set UGS_API_TOKEN`;
}

function hintForAnswer(
  status: number,
  body: JsonObject | undefined,
  response: HttpResponse,
  context: AnswerContext,
): string | undefined {
  if (status === 429) {
    const wait = retryAfterText(response.headers['retry-after']);
    return wait === undefined
      ? 'the service is rate limiting; wait a little and try again'
      : `the service is rate limiting; try again in ${wait}`;
  }
  // A JSON 404 to a rotation comes from the service's view (DRF's get_object_or_404), with or
  // without the success envelope: the address is right and the token is not known.
  if (status === 404 && body !== undefined && context.operation === 'rotate') {
    return `the service does not know this token: it is mistyped or was rotated already; ${READ_CURRENT_TOKEN_HINT}`;
  }
  // The vendor rejects a path without its trailing slash as "Method not allowed".
  if (status === 405 && !context.apiPath.endsWith('/')) {
    return `the service may want a trailing slash: try --api-path ${escapeControls(context.apiPath)}/`;
  }
  // Any other answer in the service's own envelope explains itself.
  if (body !== undefined && successOf(body.success) !== undefined) return undefined;
  if (status === 404) {
    // An HTML page (or JSON from something else) means the address is wrong.
    return 'check --base-url and --api-path: the service was not found at that address (a path prefix missing?)';
  }
  if (status === 405)
    return 'check --base-url and --api-path: that server does not accept this request';
  if (status >= 500) return 'the service had a problem; try again later';
  return undefined;
}

/** `Retry-After` as a person reads it: "30 s", or the seconds until its date. */
function retryAfterText(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d{1,9}$/.test(trimmed)) return `${Number(trimmed)} s`;
  if (!/^[a-z]{3,9},?\s/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return `${Math.max(0, Math.ceil((date - Date.now()) / 1000))} s`;
}

function withHint(hint: string | undefined): { hint?: string } {
  return hint === undefined ? {} : { hint };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `--api-path`: an absolute path, kept as given (a trailing slash included). Query, fragment,
 * whitespace and control characters have no place in it; `.` segments would be resolved away.
 */
export function parseApiPath(text: string, source: string): string {
  const fail = (why: string) =>
    new UsageError(`${source} ${why}`, { hint: 'for example: --api-path /api/user/' });
  if (!text.startsWith('/')) throw fail('must start with "/"');
  if (/[\s?#\\]/.test(text) || controlCharacters().test(text)) {
    throw fail('cannot contain spaces, control characters, "\\", "?" or "#"');
  }
  if (text.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw fail('cannot contain "." or ".." segments');
  }
  return text;
}

/**
 * An API token goes into the `Authorization` header: only visible ASCII can. A newline, a space
 * or a non-ASCII letter (a paste gone wrong) is refused where it is read, naming `source`, and
 * never sent; undici would refuse the header anyway, after the request had been counted as sent.
 * The token itself is never quoted, only the position and kind of the first bad character.
 */
export function apiTokenProblem(token: string): string | undefined {
  for (let i = 0; i < token.length; i++) {
    const code = token.charCodeAt(i);
    if (code > 0x20 && code < 0x7f) continue;
    const what =
      code === 0x0a || code === 0x0d
        ? 'a line break'
        : code === 0x20 || code === 0x09
          ? 'a space or tab'
          : code < 0x20 || (code >= 0x7f && code <= 0x9f)
            ? 'a control character'
            : /\s/.test(token[i] as string)
              ? 'a space character'
              : 'a non-ASCII character';
    return `contains ${what} at position ${i + 1} of ${token.length}`;
  }
  return token === '' ? 'is empty' : undefined;
}
