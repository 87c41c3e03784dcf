/**
 * What one operation of the service is, declared in one place: how it is sent, whether it may be
 * repeated, how its answer is read, what a failure that may hide a success means for it, and the
 * hints only it can give. `service.ts` runs any of them the same way.
 *
 * On the wire it depends on the dialect (`dialect.ts`): with `interface` every operation goes to
 * the one configured endpoint (`--api-path`, `/api/user` by default), its method telling them
 * apart, as the interface documents; with `explo` each has its own path (`wire.explo`), as the
 * vendor publishes it; with `customer` (the vendor's Customer API) each has its path there too,
 * and may name its fields differently (`customer.body`, `customer.read`). An operation that exists
 * in one dialect only (the Customer API's read-one) leaves the others out. `wireOf` says which,
 * for the client and the emulator alike.
 */

import type { JsonObject } from '../input/parse.js';
import type { HttpMethod, RetryPolicy } from '../transport/http.js';
import { DIALECTS, type Dialect } from './dialect.js';

/** An operation's method and path in one of the vendor's dialects. */
export interface VendorWire {
  method: HttpMethod;
  path: string;
}

/**
 * An operation in the vendor's Customer API (`--dialect customer`): its path, and where its
 * fields are named differently (`provided_id`, `customer`), its own body and reading of the answer.
 */
export interface CustomerWire<Input, Result> extends VendorWire {
  body?(input: Input): JsonObject;
  read?(answer: SuccessAnswer): Result | Unreadable;
  /**
   * A GET whose parameters go in the URL's query (the Customer API's list): no body is sent,
   * since a server may ignore, or refuse, a GET's body.
   */
  query?(input: Input): Readonly<Record<string, string>>;
  /**
   * Its success is any 2xx JSON object: DRF's list views answer with no `success` envelope.
   * Every other answer is read as any operation's (a 401, a 404's `detail`, ...).
   */
  bare?: true;
}

/** What every operation declares, however its answer is read. */
interface OperationBase<Input, Result> {
  /** Its method in the `interface` dialect, on the configured API path; absent: not there. */
  method?: HttpMethod;
  /** Its method and path in the vendor's published API (`--dialect explo`); absent: not there. */
  explo?: VendorWire;
  /** Its form in the vendor's Customer API (`--dialect customer`); absent: not there. */
  customer?: CustomerWire<Input, Result>;
  /**
   * Whether a call may add, change or remove the service's data: what a read-only API token is
   * refused (the emulator answers it DRF's 403 "You do not have permission to perform this
   * action.", and the client words that 403 as a read-only token). Wider than a descriptor's
   * `changesData` (changes or removes what exists, for the typo guard): a get-or-create writes,
   * since it may create. Absent: as `changesData` says (`writesData`), so an operation that
   * changes data need not say it twice.
   */
  writes?: boolean;
  /** Which failures may be retried: only those that cannot make the operation happen twice. */
  retry: RetryPolicy;
  /** The JSON request body. */
  body(input: Input): JsonObject;
  /** Input values that must never be shown, even when the server quotes them back. */
  secrets(input: Input): readonly string[];
  /**
   * For an operation that changes something and must not be repeated blindly: how to word a
   * failure after which it may or may not have happened. Absent for operations that are safe to
   * repeat: a lost answer is then just a network error (the retry policy has already tried again).
   */
  risk?: DeliveryRisk;
  hints?: OperationHints;
}

/**
 * An operation of the service's interface: its success is HTTP 2xx with `success: 1`, and every
 * other answer is one typed error (`service.ts` words it, with the operation's hints).
 */
export interface EnvelopeOperation<Input, Result> extends OperationBase<Input, Result> {
  /** The result in a `success: 1` answer, or why it is not one this operation can use. */
  read(answer: SuccessAnswer): Result | Unreadable;
  readAnswer?: never;
}

/**
 * A request whose every answer is its result, read as it came (doctor's probe, for which a 400
 * is the good news). Everything before an answer is the same as for any operation: the headers,
 * the transport, the one slash redirect (any other redirect is an error, as it is for `get`).
 */
export interface AnswerOperation<Input, Result> extends OperationBase<Input, Result> {
  readAnswer(answer: ReceivedAnswer): Result;
  read?: never;
}

export type Operation<Input, Result> =
  | EnvelopeOperation<Input, Result>
  | AnswerOperation<Input, Result>;

/** How an operation goes on the wire in a dialect: its method, and its path (none: `--api-path`). */
export interface Wire {
  method: HttpMethod;
  path: string | undefined;
}

/** The parts of an operation that say how it goes on the wire in each dialect. */
export type Wires = Pick<OperationBase<never, unknown>, 'method' | 'explo' | 'customer'>;

/**
 * DRF's `PermissionDenied` default detail: its answer (403) to a call the authenticated API
 * token may not make, such as a read-only token's call that writes.
 */
export const PERMISSION_DENIED_DETAIL = 'You do not have permission to perform this action.';

/**
 * Whether a call of the operation may change the service's data: its `writes`, else its
 * `changesData` where it declares one (what changes or removes data writes). The one rule both
 * the emulator (which refuses it to a read-only API token) and the client (which words that
 * refusal) read, so an operation added later is covered without being named.
 */
export function writesData(operation: { writes?: boolean; changesData?: boolean }): boolean {
  return operation.writes ?? operation.changesData === true;
}

/** Its wire in a dialect, or undefined when the operation is not part of that dialect. */
export function wireOf(operation: Wires, dialect: Dialect | undefined): Wire | undefined {
  switch (dialect) {
    case 'explo':
      return operation.explo && { method: operation.explo.method, path: operation.explo.path };
    case 'customer':
      return (
        operation.customer && { method: operation.customer.method, path: operation.customer.path }
      );
    default:
      return operation.method === undefined
        ? undefined
        : { method: operation.method, path: undefined };
  }
}

/**
 * The dialects an operation is part of: those it has a wire in. A command of an operation that
 * is not in every dialect (the Customer API's read-one) is refused, and its help says so, from
 * this alone (the command kit's `cli/dialects.ts`).
 */
export function dialectsOf(operation: Wires): Dialect[] {
  return DIALECTS.filter((dialect) => wireOf(operation, dialect) !== undefined);
}

/** Any answer that is not a redirect, as received, and where it came from. */
export interface ReceivedAnswer {
  status: number;
  headers: Readonly<Record<string, string>>;
  /** The body as text, a UTF-8 BOM removed; the server's words, not yet cleaned. */
  text: string;
  /** The URL that answered: the endpoint, or where the one slash redirect led. */
  url: URL;
  /** The API token and the input's secrets: to be cut out of anything quoted from `text`. */
  secrets: readonly string[];
  /** The method that was sent, as the dialect has it (`wireOf`). */
  method: HttpMethod;
  /** The dialect spoken: what an answer should look like depends on which request was sent. */
  dialect: Dialect;
}

/** An answer with HTTP 2xx and `success: 1`. */
export interface SuccessAnswer {
  status: number;
  body: JsonObject;
  /** The body as the server sent it (BOM removed): `--json` prints it from this text. */
  text: string;
}

/** Why a successful answer cannot be used, e.g. `the answer has no "user_group" object`. */
export interface Unreadable {
  unreadable: string;
}

export function isUnreadable(value: unknown): value is Unreadable {
  return typeof value === 'object' && value !== null && 'unreadable' in value;
}

/**
 * A request that may have reached the service, followed by no answer, a 5xx, or an answer that
 * cannot be read: the change may have been made (exit 5), and the user is told how to find out.
 */
export interface DeliveryRisk {
  /** What was sent, as in "the rotation request was sent but no answer came back". */
  request: string;
  /** Appended to such a failure, e.g. "the token may or may not have been rotated". */
  outcome: string;
  /** Appended to a failure that proves nothing happened (a redirect not followed). */
  notDone: string;
  /** Said before `check` when an answer came back but could not be used. */
  maybe: string;
  /** How to find out what happened. */
  check: string;
}

export interface OperationHints {
  /** The service answered `success: 0`. */
  refused?: string;
  /** A 404 with a JSON body (in the service's envelope or not): the operation's own view said no. */
  jsonNotFound?: string;
  /** A 413: what of this operation's request can be made smaller. */
  tooLarge?: string;
}
