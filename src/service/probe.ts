/**
 * Doctor's probe (`ugs doctor --probe`, and `ugs login` before it saves a token): a GET of the
 * API path with the body `{}` (with the explo dialect a POST of `{}` to the vendor's token
 * refresh path, with no token to rotate; with the customer dialect a POST of `{"provided_id": ""}`
 * to the Customer API's read-one, which never creates), which changes nothing. A DRF-style service checks the token before the
 * fields, so it answers 400 (fields missing) to a good token and 401/403 to a bad one. Sent by
 * `service.ts` like every operation, so the probe tests what `get` and `rotate` will meet: the
 * same headers, transport (proxy, CA, deadline) and the one slash redirect, no other.
 *
 * It has no command of its own (doctor and login word the result) and no emulator route: the
 * emulator answers `{}` with 400 through the route of the operation it stands in for (get's, or
 * with the explo dialect rotate's), as the service does.
 */
import { isPlainObject } from '../platform/guards.js';
import { redactSecrets } from '../text/redact.js';
import type { HttpMethod } from '../transport/http.js';
import { successOf } from './answer.js';
import type { Dialect } from './dialect.js';
import { type Operation, PERMISSION_DENIED_DETAIL, type ReceivedAnswer } from './operation.js';

export type ProbeVerdict =
  /**
   * 400 in the service's own words (with the customer dialect also its JSON 404: no customer has
   * an empty id): the token passed, and the empty request was refused.
   */
  | 'accepted'
  /** 401 or 403: the token was refused. */
  | 'refused'
  /**
   * 403 with DRF's permission detail ("You do not have permission to perform this action."):
   * the token passed authentication (a bad one gets a 401 before any permission is checked), and
   * the probe, a call that writes in this dialect (the explo token refresh, the interface's
   * get-or-create), was refused it: the token is most likely read-only. The Customer API's probe
   * reads, so a read-only token is accepted there.
   */
  | 'read-only'
  /**
   * Anything else: not the service at that address, or something in between. A 400 that is not
   * the service's refusal of the empty request is one of these: nginx, a load balancer or
   * another application answers 400 to a request it cannot route, whatever the token.
   */
  | 'unexpected';

export interface ProbeResult {
  verdict: ProbeVerdict;
  status: number;
  /** The method sent (the dialect's: GET with the interface, POST with explo). */
  method: HttpMethod;
  /** The path that answered: the probe's path, or where the slash redirect led. */
  path: string;
  /** The answer's content type as sent (short, not yet escaped), or `no content type`. */
  contentType: string;
  /** The `detail` of a DRF answer, secrets cut out; not yet escaped or shortened. */
  detail: string | undefined;
}

/**
 * The fields of the request the probe stands in for: a DRF serializer names the missing ones in
 * its 400 (`{"name": ["This field is required."], ...}`), and a 400 naming anything else is not
 * that serializer's refusal of `{}`.
 */
const REQUEST_FIELDS: Readonly<Record<Dialect, readonly string[]>> = {
  // Get User's fields: the interface probe is Get User without them.
  interface: ['name', 'user_group_id', 'mapping', 'properties'],
  // The vendor's refresh_user_group_token takes only the token to rotate.
  explo: ['current_token'],
  // The Customer API's get_customer takes only the id to read.
  customer: ['provided_id'],
};

/**
 * With the facts the registry reads of every operation (`operations/descriptor.ts`, a layer up):
 * its body has no fields, and it changes nothing.
 */
export const probe: Operation<void, ProbeResult> & {
  fields: readonly string[];
  changesData: boolean;
} = {
  method: 'GET',
  // The vendor's token refresh with no token: nothing to rotate. Refused for its missing field
  // (400) once the token was accepted. Not its get-or-create: the vendor's documentation marks
  // none of that call's fields as required, so `{}` there might create a group without an id.
  explo: { method: 'POST', path: '/api/refresh_user_group_token/' },
  // The Customer API's read-one, for an empty id: it reads, and never creates, whatever it
  // answers (a 400 for the blank field, or a 404 for no such customer) once the token passed.
  customer: { method: 'POST', path: '/api/get_customer/', body: () => ({ provided_id: '' }) },
  // Never repeated: a retried 429 or 503 would hide the answer the user asked to see.
  retry: { maxRetries: 0, retryStatuses: new Set(), retryErrorCodes: new Set() },
  body: () => ({}),
  secrets: () => [],
  readAnswer: readProbe,
  fields: [],
  changesData: false,
};

declare module './client.js' {
  interface ServiceOperations {
    probe: typeof probe;
  }
}

/** What the probe needs of an answer to judge it. */
export type ProbeAnswer = Pick<ReceivedAnswer, 'status' | 'headers' | 'text'>;

/**
 * Whether the answer says the token was accepted. A 400 counts only as the service's own
 * refusal of the empty request: JSON (by its content type and its body) that is either in the
 * interface's error shape (`"success": 0`) or DRF's field errors, every key a field of the
 * request the probe stands in for and every value a list of messages. Anything else with a 400
 * (an HTML page, plain text, JSON of another shape) comes from something that never looked at
 * the token, and taking it as a yes would save a wrong token or URL.
 */
export function probeVerdict(answer: ProbeAnswer, dialect: Dialect): ProbeVerdict {
  const { status } = answer;
  if (status === 403 && isPermissionDenied(answer)) return 'read-only';
  if (status === 401 || status === 403) return 'refused';
  // The Customer API's read-one answers an id it does not know with DRF's 404, after the token.
  const notFound = dialect === 'customer' && status === 404;
  if ((status !== 400 && !notFound) || !isJsonMediaType(answer.headers['content-type']))
    return 'unexpected';
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return 'unexpected';
  }
  if (!isPlainObject(body)) return 'unexpected';
  if (successOf(body.success) === false) return 'accepted';
  if (notFound) return isDrfDetail(body) ? 'accepted' : 'unexpected';
  return isFieldErrors(body, REQUEST_FIELDS[dialect]) ? 'accepted' : 'unexpected';
}

/** What a 400 must look like to be accepted, for a message about one that did not. */
export function expectedRefusal(dialect: Dialect): string {
  const fields = REQUEST_FIELDS[dialect].join(', ');
  const notFound = dialect === 'customer' ? ', or a 404 {"detail": ...}' : '';
  return `a JSON error with "success": 0, or field errors for ${fields}${notFound}`;
}

/** The probe's request body as sent in a dialect, for messages that name what was sent. */
export function probeBodyText(dialect: Dialect): string {
  const body = dialect === 'customer' ? probe.customer?.body : undefined;
  return JSON.stringify((body ?? probe.body)());
}

/**
 * DRF's permission refusal in JSON: its `detail` (beside the interface's `success: 0`, as the
 * emulator sends it). Any other 403 (a proxy's page, another detail) stays a refused token.
 */
function isPermissionDenied(answer: ProbeAnswer): boolean {
  if (!isJsonMediaType(answer.headers['content-type'])) return false;
  try {
    const body: unknown = JSON.parse(answer.text);
    return isPlainObject(body) && body.detail === PERMISSION_DENIED_DETAIL;
  } catch {
    return false;
  }
}

/** DRF's refusal of a whole request: `{"detail": "..."}` and nothing else. */
function isDrfDetail(body: Record<string, unknown>): boolean {
  const keys = Object.keys(body);
  return keys.length === 1 && typeof body.detail === 'string';
}

function isFieldErrors(body: Record<string, unknown>, fields: readonly string[]): boolean {
  const keys = Object.keys(body);
  return (
    keys.length > 0 &&
    keys.every((key) => {
      const value = body[key];
      return (
        fields.includes(key) &&
        Array.isArray(value) &&
        value.length > 0 &&
        value.every((message) => typeof message === 'string')
      );
    })
  );
}

/** `application/json` or a `+json` type, parameters (charset) allowed. */
function isJsonMediaType(value: string | undefined): boolean {
  const type = (value ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type);
}

function readProbe(answer: ReceivedAnswer): ProbeResult {
  const type = answer.headers['content-type']?.trim();
  const contentType = type
    ? type.length > 100
      ? `${type.slice(0, 100)}…`
      : type
    : 'no content type';
  return {
    verdict: probeVerdict(answer, answer.dialect),
    status: answer.status,
    method: answer.method,
    path: answer.url.pathname,
    contentType,
    detail: detailOf(answer),
  };
}

function detailOf(answer: ReceivedAnswer): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    // Not JSON: the status says enough.
    return undefined;
  }
  if (!isPlainObject(body) || typeof body.detail !== 'string') return undefined;
  return redactSecrets(body.detail, answer.secrets);
}
