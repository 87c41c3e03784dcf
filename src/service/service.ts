/**
 * Runs any operation of the User Group Service (see `operations/`) the same way: the request with
 * its headers, at most the one redirect a framework sends, the answer read as a value, and one
 * typed error when it is not a success, with the hints that profile, token source and operation
 * call for.
 */

import { ApiError, AuthError, OutcomeUnknownError, type UgsError, UsageError } from '../errors.js';
import { endpointUrl, redactUrl, repeatedSegment } from '../input/parse.js';
import { rememberJsonText } from '../text/json-text.js';
import { message } from '../text/message.js';
import {
  type HttpResponse,
  type HttpSender,
  ResponseTooLargeError,
  TransportError,
} from '../transport/http.js';
import { type Answer, classifyAnswer, retryAfterText, successOf } from './answer.js';
import type { OperationName, ServiceClient } from './client.js';
import {
  DEFAULT_DIALECT,
  type Dialect,
  isVendorDialect,
  NOT_THE_VENDOR_API,
  tokenHeader,
} from './dialect.js';
import {
  isUnreadable,
  type Operation,
  PERMISSION_DENIED_DETAIL,
  type Wire,
  wireOf,
  writesData,
} from './operation.js';
import { loginCommandFor, type Target, type TokenSource, USER_PATH } from './target.js';

export type { ServiceClient } from './client.js';
export type { ServiceResult, UserGroup } from './user-group.js';

export interface ServiceClientOptions {
  /**
   * The operations this client runs, by name (the registry in `commands/operations.ts`): each becomes
   * a method (`client.getUser(input)`). Handed in, so that the service layer knows no operation;
   * without them only `call(operation, input)` works.
   */
  operations?: Readonly<Partial<Record<OperationName, Operation<never, unknown>>>>;
  /** A `note:` for the user (stderr), e.g. that a redirect was followed. */
  notify?: (message: string) => void;
  /**
   * false: successful answers are not kept for `--json` (see json-text.ts). A bulk run writes
   * records, never `--json`, and keeping thousands of texts costs it time.
   */
  keepJsonText?: boolean;
  /**
   * A bulk run: the first slash redirect (Django's APPEND_SLASH) moves every later request of
   * this client to the redirected path, with one note, instead of a redirect and a note per row.
   */
  learnRedirect?: boolean;
}

/** The statuses a framework redirects with; 303 would turn the request into a GET. */
const FOLLOWABLE_REDIRECTS = new Set([301, 302, 307, 308]);

// The operation methods (`getUser`, `rotateToken`, ...) are made in the constructor from the
// operations it is handed, so a new operation needs no code here.
export interface HttpServiceClient extends ServiceClient {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every method the interface declares
export class HttpServiceClient {
  private readonly notify: (message: string) => void;
  private readonly keepJsonText: boolean;
  private readonly learnRedirect: boolean;
  /** The learnt redirect was noted (once per client: a bulk run's rows in flight all meet it). */
  private redirectNoted = false;
  /**
   * Each path's endpoint, made once (a bulk run sends thousands of requests to it): one path in
   * the interface dialect, one per operation in the explo dialect. A learnt redirect replaces it.
   */
  private readonly urls = new Map<string, URL>();
  private headers: Readonly<Record<string, string>> | undefined;

  constructor(
    private readonly http: HttpSender,
    private readonly target: Target,
    private readonly userAgent: string,
    options: ServiceClientOptions = {},
  ) {
    this.notify = options.notify ?? (() => {});
    this.keepJsonText = options.keepJsonText ?? true;
    this.learnRedirect = options.learnRedirect ?? false;
    for (const [name, operation] of Object.entries(options.operations ?? {}) as [
      OperationName,
      Operation<unknown, unknown>,
    ][]) {
      Object.defineProperty(this, name, {
        value: (input: unknown) => this.call(operation, input),
      });
    }
  }

  async call<Input, Result>(operation: Operation<Input, Result>, input: Input): Promise<Result> {
    const dialect = this.target.dialect ?? DEFAULT_DIALECT;
    const wire = wireIn(operation, dialect);
    const secrets = [this.target.apiToken, ...operation.secrets(input)];
    // The Customer API names some fields its own way: its body and its answer, where it says so.
    const customer = dialect === 'customer' ? operation.customer : undefined;
    // A query operation sends its parameters in the URL and no body at all.
    const query = customer?.query?.(input);
    const body =
      query === undefined ? JSON.stringify((customer?.body ?? operation.body)(input)) : '';
    let response: HttpResponse;
    let url: URL;
    try {
      ({ response, url } = await this.send(operation, wire, body, query));
    } catch (error) {
      throw deliveryFailure(error, operation);
    }
    const { method } = wire;
    if (operation.readAnswer !== undefined) {
      return operation.readAnswer({ ...response, url, secrets, method, dialect });
    }
    // The method that went on the wire: with the vendor's dialects every operation is a POST.
    let answer: Answer = classifyAnswer(
      response,
      secrets,
      { method, url },
      customer?.bare === true,
    );
    if (answer.kind === 'ok') {
      const result = (customer?.read ?? operation.read)(answer);
      if (!isUnreadable(result)) {
        // A success body is the user's own data: printed by `--json` as sent, nothing cut out.
        if (this.keepJsonText) rememberJsonText(answer.body, answer.text);
        return result;
      }
      // Shown as an error's body now: a secret the server quoted back is cut from its text.
      rememberJsonText(answer.body, answer.text, secrets);
      answer = {
        kind: 'unreadable',
        status: answer.status,
        message: result.unreadable,
        body: answer.body,
      };
    }
    throw answerError(answer, operation, wire, this.hintContext());
  }

  private hintContext(): HintContext {
    return {
      baseUrl: this.target.baseUrl,
      apiPath: this.target.apiPath ?? USER_PATH,
      profile: this.target.profile ?? 'default',
      tokenSource: this.target.tokenSource ?? 'profile',
      dialect: this.target.dialect ?? DEFAULT_DIALECT,
    };
  }

  /**
   * One request, and at most one redirect followed: the one a framework sends (Django's
   * APPEND_SLASH) to the same path with a slash appended. It comes before any view runs, so
   * sending a rotation again there cannot rotate twice. Any other redirect is refused: following
   * it would send the API token wherever a server points.
   */
  private async send(
    operation: Operation<never, unknown>,
    wire: Wire,
    body: string,
    query?: Readonly<Record<string, string>>,
  ): Promise<{ response: HttpResponse; url: URL }> {
    const apiPath = wire.path ?? this.target.apiPath ?? USER_PATH;
    let endpoint = this.urls.get(apiPath);
    if (endpoint === undefined) {
      endpoint = endpointUrl(this.target.baseUrl, apiPath);
      this.urls.set(apiPath, endpoint);
    }
    const url = query === undefined ? endpoint : withQuery(endpoint, query);
    const first = await this.sendTo(url, body, operation, wire);
    if (!isRedirect(first.status)) return { response: first, url };
    const location = redirectTarget(first, url);
    if (
      location === undefined ||
      !FOLLOWABLE_REDIRECTS.has(first.status) ||
      !isSlashAppended(url, location)
    ) {
      throw redirectError(first, operation, this.target.dialect);
    }
    // `--api-path` sets the interface's one path; the vendor's dialects have their own paths.
    const skip =
      wire.path === undefined ? message` (pass --api-path ${apiPath}/ to skip the redirect)` : '';
    if (this.learnRedirect) {
      // Checked above: the same origin, path and query, one slash more. Every later row goes
      // there directly; the rows already in flight each follow their own redirect, unnoted.
      this.urls.set(apiPath, query === undefined ? location : withQuery(location, {}));
      if (!this.redirectNoted) {
        this.redirectNoted = true;
        this.notify(
          `the service redirected ${url.pathname} to ${location.pathname}; this run sends every later request there${skip}`,
        );
      }
    } else {
      this.notify(
        `the service redirected ${url.pathname} to ${location.pathname}; the request was sent there${skip}`,
      );
    }
    const second = await this.sendTo(location, body, operation, wire);
    if (isRedirect(second.status)) throw redirectError(second, operation, this.target.dialect);
    return { response: second, url: location };
  }

  private sendTo(
    url: URL,
    body: string,
    operation: Operation<never, unknown>,
    wire: Wire,
  ): Promise<HttpResponse> {
    // The same for every request: made once (a bulk run sends thousands), never changed after.
    this.headers ??= {
      'content-type': 'application/json',
      accept: 'application/json',
      // `Authorization`, or the vendor's `Explo-Authorization` (the dialect's own header).
      [tokenHeader(this.target.dialect)]: `Token ${this.target.apiToken}`,
      'user-agent': this.userAgent,
    };
    return this.http.send(
      { method: wire.method, url, headers: this.headers, body },
      operation.retry,
    );
  }
}

/**
 * The operation's wire in the dialect spoken. An operation of one dialect only (the Customer API's
 * read-one) is never sent in another: the commands ask for it only there, so this is a bug.
 */
function wireIn(operation: Operation<never, unknown>, dialect: Dialect): Wire {
  const wire = wireOf(operation, dialect);
  if (wire === undefined) {
    throw new UsageError(`this request is not part of the ${dialect} dialect; nothing was sent`);
  }
  return wire;
}

/** The endpoint with exactly these query parameters (whatever query it had is replaced). */
function withQuery(endpoint: URL, query: Readonly<Record<string, string>>): URL {
  const url = new URL(endpoint);
  url.search = new URLSearchParams(query).toString();
  return url;
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

function redirectError(
  response: HttpResponse,
  operation: Operation<never, unknown>,
  dialect: Dialect | undefined,
): ApiError {
  // Shown without its user information and query values: a Location may carry a password or a
  // token (an SSO hop, a misconfigured proxy), and this message ends up in logs and tickets.
  const location =
    response.headers.location === undefined ? undefined : redactUrl(response.headers.location);
  const where =
    location === undefined || location === ''
      ? 'without a Location'
      : message`to ${location.length > 300 ? `${location.slice(0, 300)}…` : location}`;
  const outcome = operation.risk === undefined ? '' : `: ${operation.risk.notDone}`;
  return new ApiError(
    `the service answered HTTP ${response.status}, a redirect ${where}, which ugs does not follow${outcome}`,
    {
      status: response.status,
      hint: `check --base-url (https:// rather than http://? the right host and path prefix?)${isVendorDialect(dialect) ? '' : ' and --api-path'}`,
    },
  );
}

/**
 * A failure before a complete answer. For an operation at risk, a request that may have arrived
 * (no answer, or an answer too large to read with a 2xx or 5xx status) leaves the outcome unknown.
 */
function deliveryFailure(error: unknown, operation: Operation<never, unknown>): unknown {
  const { risk } = operation;
  if (risk === undefined) return error;
  if (error instanceof TransportError && error.maybeDelivered) {
    return new OutcomeUnknownError(
      `${risk.request} was sent but no answer came back (${error.message}): ${risk.outcome}`,
      { hint: risk.check, cause: error },
    );
  }
  if (error instanceof ResponseTooLargeError && mayHaveActed(error.status)) {
    return new OutcomeUnknownError(`${error.message}; ${risk.outcome}`, {
      hint: `${risk.maybe}; ${risk.check}`,
      cause: error,
    });
  }
  return error;
}

/** A 2xx the service may have committed, or a 5xx a framework or gateway sent after it did. */
function mayHaveActed(status: number | undefined): boolean {
  return status !== undefined && ((status >= 200 && status < 300) || status >= 500);
}

/** What hints need to know beyond the answer: where the request went and whose token it was. */
interface HintContext {
  baseUrl: URL;
  apiPath: string;
  profile: string;
  tokenSource: TokenSource;
  dialect: Dialect;
}

function answerError(
  answer: Exclude<Answer, { kind: 'ok' }>,
  operation: Operation<never, unknown>,
  wire: Wire,
  context: HintContext,
): UgsError {
  const { risk } = operation;
  switch (answer.kind) {
    case 'denied':
      // DRF's permission refusal of a call that writes: the token was accepted (a bad one gets
      // a 401 first) but may not change data, which is what a read-only API token is refused.
      // Said so in plain words, since "may not do this" sends people to check a token that is
      // fine for reading. Still the auth exit code: a token is what must change.
      if (
        answer.status === 403 &&
        writesData(operation) &&
        answer.body?.detail === PERMISSION_DENIED_DETAIL
      ) {
        return new AuthError(
          `the API token is read-only (or lacks permission) for this call, which changes data: the service refused it (HTTP 403: ${PERMISSION_DENIED_DETAIL})`,
          { status: answer.status, hint: readWriteHint(context), body: answer.body },
        );
      }
      return new AuthError(answer.message, {
        status: answer.status,
        hint: authHint(context),
        body: answer.body,
      });
    case 'refused':
      return new ApiError(answer.message, {
        status: answer.status,
        body: answer.body,
        hint: operation.hints?.refused,
      });
    case 'http-error':
      if (risk !== undefined && answer.status >= 500) {
        return new OutcomeUnknownError(`${answer.message}; ${risk.outcome}`, {
          hint: `${risk.maybe}; ${risk.check}`,
          body: answer.body,
          unavailable: answer.unavailable,
        });
      }
      // A throttle (429) or a size limit (413, often a proxy's) refused the request before it ran,
      // and says nothing about the token: for a rotation the first thing its caller needs to know
      // is that it did not happen. (Other 4xx answers explain themselves: a 404 is the token's.)
      return new ApiError(
        risk !== undefined && (answer.status === 429 || answer.status === 413)
          ? `${risk.notDone}: ${answer.message}`
          : answer.message,
        {
          status: answer.status,
          body: answer.body,
          hint: hintForHttpError(answer, operation, wire, context),
          retryAfter: answer.retryAfter,
          unavailable: answer.unavailable,
        },
      );
    case 'unreadable': {
      const error = new ApiError(answer.message, {
        status: answer.status,
        body: answer.body,
        hint: answer.hint,
      });
      if (risk === undefined) return error;
      return new OutcomeUnknownError(`${answer.message}; ${risk.outcome}`, {
        hint: `${risk.maybe}; ${risk.check}`,
        body: answer.body,
        cause: error,
      });
    }
  }
}

function authHint(context: HintContext): string {
  const login = `\`${loginCommandFor(context.profile)}\``;
  if (context.tokenSource === 'env UGS_API_TOKEN') {
    return message`the token comes from UGS_API_TOKEN, which overrides profile "${context.profile}": set it to a valid token, or unset it and run ${login}`;
  }
  return message`run ${login} to save a valid token for profile "${context.profile}" (${context.baseUrl.host}), or set UGS_API_TOKEN`;
}

/** After a read-only token's 403: where a read-write one goes. */
function readWriteHint(context: HintContext): string {
  const login = `\`${loginCommandFor(context.profile)}\``;
  if (context.tokenSource === 'env UGS_API_TOKEN') {
    return message`use a read-write API token: the token comes from UGS_API_TOKEN, which overrides profile "${context.profile}": set it to a read-write token, or unset it and run ${login}`;
  }
  return message`use a read-write API token: run ${login} to save one for profile "${context.profile}" (${context.baseUrl.host}), or set UGS_API_TOKEN`;
}

function hintForHttpError(
  answer: Extract<Answer, { kind: 'http-error' }>,
  operation: Operation<never, unknown>,
  wire: Wire,
  context: HintContext,
): string | undefined {
  const { status, body } = answer;
  if (status === 429) {
    const wait = retryAfterText(answer.retryAfter);
    return wait === undefined
      ? 'the service is rate limiting; wait a little and try again'
      : `the service is rate limiting; try again in ${wait}`;
  }
  // A JSON 404 comes from the operation's view (DRF's get_object_or_404), with or without the
  // success envelope: the address is right, and the operation says what that means.
  if (status === 413) {
    const smaller = operation.hints?.tooLarge;
    return `the request was too large for the service or a proxy in front of it (a gateway's body size limit)${smaller === undefined ? '' : `: ${smaller}`}`;
  }
  const fromView = status === 404 && body !== undefined ? operation.hints?.jsonNotFound : undefined;
  if (fromView !== undefined) return fromView;
  // With the vendor's dialects the path is the vendor's, fixed: `--api-path` is refused there, so
  // no hint may suggest it.
  const explo = isVendorDialect(context.dialect);
  const path = wire.path ?? context.apiPath;
  // The vendor rejects a path without its trailing slash as "Method not allowed".
  if (status === 405 && !explo && !path.endsWith('/')) {
    return message`the service may want a trailing slash: try --api-path ${path}/`;
  }
  // Any other answer in the service's own envelope explains itself.
  if (body !== undefined && successOf(body.success) !== undefined) return undefined;
  if (status === 404) {
    // An HTML page (or JSON from something other than the operation's view): a wrong address.
    const repeated = repeatedSegment(context.baseUrl, path);
    if (repeated !== undefined) {
      return message`the base URL ends in /${repeated} and the ${explo ? "vendor's path" : 'API path'} ${path} starts with it: drop /${repeated} from --base-url (or the profile's base URL)`;
    }
    return explo
      ? `check --base-url: the vendor's API was not found at that address (a path prefix missing?); ${NOT_THE_VENDOR_API}`
      : 'check --base-url and --api-path: the service was not found at that address (a path prefix missing?)';
  }
  if (status === 405) {
    return explo
      ? `check --base-url: that server does not accept this request; ${NOT_THE_VENDOR_API}`
      : 'check --base-url and --api-path: that server does not accept this request';
  }
  if (status >= 500) return 'the service had a problem; try again later';
  return undefined;
}
