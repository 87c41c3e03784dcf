/**
 * The user group both operations return, checked: the fields we rely on must be there; every
 * other field is kept as sent.
 */

import type { JsonObject } from '../input/parse.js';
import type { ResultRecord } from '../output/results.js';
import { isPlainObject } from '../platform/guards.js';
import type { SuccessAnswer, Unreadable } from './operation.js';

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
  /** The HTTP status of the answer (a 2xx); absent for results not read off the wire. */
  status?: number;
}

/** Documented fields first, in the order a person reads them; the table shows others after. */
export const USER_GROUP_FIELD_ORDER: readonly string[] = [
  'provided_id',
  'name',
  'team_id',
  'token',
  'environment',
  // The rotation answer's environment tag (`Customer` or `Testing`).
  'api_environment_tag',
  // The vendor's demo watermark (`--dialect explo`), shown when the answer has it.
  'is_demo_group',
  'properties',
];

export function readUserGroup(answer: SuccessAnswer): ServiceResult | Unreadable {
  return readGroup(answer, 'user_group', 'new_user_group');
}

/**
 * The vendor's Customer API (`--dialect customer`): its `customer` object is the user group, kept
 * as sent (`token`, `name`, `provided_id`, `emails`, `hierarchy_level`, ...), and `new_customer`
 * says whether it was created.
 */
export function readCustomer(answer: SuccessAnswer): ServiceResult | Unreadable {
  return readGroup(answer, 'customer', 'new_customer');
}

function readGroup(
  answer: SuccessAnswer,
  key: string,
  createdKey: string,
): ServiceResult | Unreadable {
  const { body, text } = answer;
  const userGroup = body[key];
  if (!isPlainObject(userGroup)) return { unreadable: `the answer has no "${key}" object` };
  if (typeof userGroup.token !== 'string' || userGroup.token === '') {
    return { unreadable: `the answer's "${key}" has no "token" string` };
  }
  const flag = body[createdKey];
  const created = typeof flag === 'boolean' ? flag : undefined;
  return { body, text, userGroup: userGroup as UserGroup, created, status: answer.status };
}

/** What the table and `--field` show of a result: its user group. */
export function userGroupRecord(result: ServiceResult): ResultRecord {
  return { name: 'user_group', fields: result.userGroup, order: USER_GROUP_FIELD_ORDER };
}

/**
 * The group an answer is about, when it names another than the one asked for: the interface's
 * rule 2 says `provided_id` is the request's `user_group_id`. An answer that leaves it out (or
 * sends null) names no group and is taken as it is; a number is read as its digits, since a
 * service may store ids as numbers.
 */
export function otherGroupOf(result: ServiceResult, requestedId: string): string | undefined {
  const id = result.userGroup.provided_id;
  if (id === undefined || id === null) return undefined;
  const answered =
    typeof id === 'string' || typeof id === 'number' ? String(id) : JSON.stringify(id);
  return answered === requestedId ? undefined : answered;
}

/** A rotation answer that hands back the token that was sent did not rotate anything. */
export function isUnrotated(result: ServiceResult, sentToken: string): boolean {
  return result.userGroup.token === sentToken;
}
