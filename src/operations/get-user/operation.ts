/** Get User: gets a user group by the caller's id, creating it when the id is new. */
import type { Fields } from '../../history/record.js';
import type { JsonObject, StringMap } from '../../input/parse.js';
import {
  otherGroupOf,
  readCustomer,
  readUserGroup,
  type ServiceResult,
} from '../../service/user-group.js';
import { message } from '../../text/message.js';
import { REPEATABLE_RETRY } from '../../transport/http.js';
import type { OperationDescriptor } from '../descriptor.js';

export interface GetUserRequest {
  name: string;
  user_group_id: string;
  mapping?: StringMap;
  properties?: JsonObject;
  /** The vendor's demo watermark (`--dialect explo` only): demo groups are not billed. */
  is_demo_group?: boolean;
}

export const getUser: OperationDescriptor<GetUserRequest> = {
  // A GET with a JSON body: that is the service's interface (undici's request() sends it).
  method: 'GET',
  explo: { method: 'POST', path: '/api/create_user_group/' },
  // The Customer API's get-or-create: the id is `provided_id`, the answer's group `customer`.
  customer: {
    method: 'POST',
    path: '/api/create_customer/',
    body: ({ user_group_id, ...rest }) => ({ provided_id: user_group_id, ...rest }),
    read: readCustomer,
  },
  // Get-or-create by id: repeating it cannot create a second group, so a lost answer is retried.
  retry: REPEATABLE_RETRY,
  body: (request) => ({ ...request }),
  secrets: () => [],
  read: readUserGroup,
  hints: { tooLarge: 'send smaller --properties or --mapping' },
  fields: ['name', 'user_group_id', 'mapping', 'properties', 'is_demo_group'],
  // It only adds a group that is missing, and leaves an existing one as it is.
  changesData: false,
  // But adding one is a write: a read-only API token is refused it, even for a group that exists
  // (the service decides by the call, before it looks the group up).
  writes: true,
  history: {
    answer: getAnswerFields,
    error: (outcome, request) => ({
      userGroupId: request.user_group_id,
      name: request.name,
      outcome,
    }),
  },
  // There is no `create`: Get User creates a missing group, so these words lead to `get`, never
  // to a command that changes data (commander's own guess for `create` was `rotate`).
  suggestedFor: {
    words: ['create', 'new', 'add', 'provision'],
    note: 'get creates the user group when it does not exist',
  },
  // A get returns an existing group as it is, and creates a missing one: where the dialect has
  // a read that creates nothing (the Customer API's get_customer), that one is asked instead.
  readsGroup: { input: (id, name) => ({ user_group_id: id, name }), createsMissing: true },
};

/** A get's answer: `created` or `found`; an answer about another group is `failed`, tokenless. */
export function getAnswerFields(
  result: ServiceResult,
  request: { user_group_id: string; name: string },
): Fields {
  if (otherGroupOf(result, request.user_group_id) !== undefined) {
    return { userGroupId: request.user_group_id, name: request.name, outcome: 'failed' };
  }
  const name = result.userGroup.name;
  return {
    userGroupId: request.user_group_id,
    name: typeof name === 'string' ? name : request.name,
    // A service that does not say whether it created the group found one, as far as ugs knows.
    outcome: result.created === true ? 'created' : 'found',
    token: result.userGroup.token,
  };
}

/**
 * `--must-exist`: why an answer breaks it, or undefined when the group was there already. The
 * service has no read-only lookup, so the get that checks has already created a new group: the
 * message says so, since a person must know a group now exists that nobody meant to make. An
 * answer without `new_user_group` cannot vouch that the group existed: that fails too, since
 * the flag is a promise that a typo does not pass.
 */
export function mustExistProblem(
  id: string,
  created: boolean | undefined,
): { message: string; hint: string } | undefined {
  if (created === false) return undefined;
  if (created === true) {
    return {
      message: message`--must-exist: user group "${id}" did not exist, so the service created it: it now exists, and ugs cannot remove it`,
      hint: 'check the id for a typo; the service has no delete: only its owner can remove the group',
    };
  }
  return {
    message: message`--must-exist: the service did not say whether user group "${id}" existed (its answer has no new_user_group), so it may have been created now`,
    hint: 'this service cannot be checked with --must-exist; ask its owner whether the group is new',
  };
}

declare module '../../service/client.js' {
  interface ServiceOperations {
    getUser: typeof getUser;
  }
}
