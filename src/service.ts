/**
 * The User Group Service's wire format: the one path, the two operations, the headers, and the
 * checks on what comes back. Everything that comes off the wire is validated here before the rest
 * of the tool sees it.
 */
import { redactSecrets } from './debug.js';
import { ApiError, AuthError, OutcomeUnknownError } from './errors.js';
import {
  getRetryPolicy,
  type HttpClient,
  type HttpResponse,
  type RetryPolicy,
  rotateRetryPolicy,
  TransportError,
} from './http.js';
import { controlCharacters } from './io.js';
import { endpointUrl, type JsonObject, type StringMap, setOwn } from './parse.js';

export interface Target {
  baseUrl: URL;
  apiToken: string;
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
  /** The whole response body, exactly as parsed, for `--json`. */
  body: JsonObject;
  userGroup: UserGroup;
  /** Get User's `new_user_group`; undefined when the service did not say. */
  created: boolean | undefined;
}

export interface ServiceClient {
  getUser(request: GetUserRequest): Promise<ServiceResult>;
  rotateToken(currentToken: string): Promise<ServiceResult>;
}

export const USER_PATH = '/api/user';

export class HttpServiceClient implements ServiceClient {
  constructor(
    private readonly http: HttpClient,
    private readonly target: Target,
    private readonly userAgent: string,
  ) {}

  async getUser(request: GetUserRequest): Promise<ServiceResult> {
    const response = await this.send('GET', request, getRetryPolicy);
    return parseResult(response, this.target.baseUrl, [this.target.apiToken]);
  }

  async rotateToken(currentToken: string): Promise<ServiceResult> {
    let response: HttpResponse;
    try {
      response = await this.send('POST', { current_token: currentToken }, rotateRetryPolicy);
    } catch (error) {
      if (error instanceof TransportError && error.maybeDelivered) {
        throw new OutcomeUnknownError(
          `the rotation request was sent but no answer came back (${error.message}): the token may or may not have been rotated`,
          { hint: READ_CURRENT_TOKEN_HINT, cause: error },
        );
      }
      throw error;
    }
    try {
      return parseResult(response, this.target.baseUrl, [this.target.apiToken, currentToken]);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // A 2xx that is not JSON keeps its hint about the address, but the rotation may still
      // have happened; other 3xx/4xx errors that carry a hint already say what to do.
      // A 5xx may come from a gateway that gave up while the service went on and rotated.
      if (error.hint !== undefined && response.status >= 300 && response.status < 500) throw error;
      const refused = isObject(error.body) && successOf(error.body.success) === false;
      // The service said no: most often the token was rotated already. Any other answer we
      // cannot read (2xx or not) may still mean the token was replaced.
      const hint = refused
        ? `check the token; if it was rotated already, ${READ_CURRENT_TOKEN_HINT}`
        : error.hint !== undefined
          ? `${error.hint}; the rotation may have happened, so ${READ_CURRENT_TOKEN_HINT}`
          : `the rotation may have happened; ${READ_CURRENT_TOKEN_HINT}`;
      throw new ApiError(error.message, { status: error.status, body: error.body, hint });
    }
  }

  private send(
    method: 'GET' | 'POST',
    payload: object,
    policy: RetryPolicy,
  ): Promise<HttpResponse> {
    return this.http.send(
      {
        method,
        url: endpointUrl(this.target.baseUrl, USER_PATH),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: `Token ${this.target.apiToken}`,
          'user-agent': this.userAgent,
        },
        body: JSON.stringify(payload),
      },
      policy,
    );
  }
}

export const READ_CURRENT_TOKEN_HINT =
  "read the group's current token with `ugs get --id <user_group_id> --name <name> --field token`";

/**
 * Turns an HTTP answer into a result or a typed error that says what the service said.
 * `secrets` (the API token, the token being rotated) are cut out of the server's words before
 * they reach an error message: a service may quote what it was sent.
 */
export function parseResult(
  response: HttpResponse,
  baseUrl: URL,
  secrets: readonly string[] = [],
): ServiceResult {
  const { status } = response;
  const contentType = response.headers['content-type'] ?? 'no content type';
  const parsed = parseJson(response.text);
  const body = isObject(parsed) ? parsed : undefined;
  const serverMessage = body === undefined ? undefined : messageOf(body, secrets);
  // `--json` prints an error body on stdout: a secret the server quoted back must not go with it.
  const errorBody = body === undefined ? undefined : scrubSecrets(body, secrets);

  if (status === 401 || status === 403) {
    const what =
      status === 401 ? 'the API token was not accepted' : 'the API token may not do this';
    throw new AuthError(`${what} (HTTP ${status}${serverMessage ? `: ${serverMessage}` : ''})`, {
      hint: `run \`ugs login\` to save a valid token for ${baseUrl.host}, or set UGS_API_TOKEN`,
      body: errorBody,
    });
  }
  if (status < 200 || status >= 300) {
    const detail = serverMessage ?? (body === undefined ? `a ${contentType} body` : 'no message');
    // An answer in the service's own envelope explains itself; a bare status hints at the address.
    const envelope = body !== undefined && successOf(body.success) !== undefined;
    throw new ApiError(`the service answered HTTP ${status}: ${detail}`, {
      status,
      body: errorBody,
      ...(!envelope && { hint: hintForStatus(status) }),
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
    throw new ApiError(
      serverMessage ?? 'the service reported a failure (success: 0) without a message',
      {
        status,
        body: errorBody,
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
  const created = typeof body.new_user_group === 'boolean' ? body.new_user_group : undefined;
  return { body, userGroup: userGroup as UserGroup, created };
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

function messageOf(body: JsonObject, secrets: readonly string[]): string | undefined {
  for (const key of ['error', 'message', 'detail']) {
    const value = body[key];
    if (typeof value === 'string' && value.trim() !== '') return sanitize(value, secrets);
    if (isObject(value) && typeof value.message === 'string') {
      return sanitize(value.message, secrets);
    }
  }
  return undefined;
}

function scrubSecrets(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((entry) => scrubSecrets(entry, secrets));
  if (!isObject(value)) return value;
  const result: JsonObject = {};
  for (const [key, entry] of Object.entries(value)) {
    setOwn(result, key, scrubSecrets(entry, secrets));
  }
  return result;
}

/** Server text goes to a terminal: no control characters, no walls of text, no secrets. */
function sanitize(text: string, secrets: readonly string[]): string {
  const clean = redactSecrets(text.replace(controlCharacters(), ' ').trim(), secrets);
  return clean.length > 300 ? `${clean.slice(0, 300)}…` : clean;
}

function hintForStatus(status: number): string | undefined {
  if (status === 404)
    return 'check --base-url: the service was not found at that address (a path prefix missing?)';
  if (status === 405) return 'check --base-url: that server does not accept this request';
  if (status === 429) return 'the service is rate limiting; wait a little and try again';
  if (status >= 500) return 'the service had a problem; try again later';
  return undefined;
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
