/** Create User (token rotation): replaces a user group's token, given the current one. */
import type { Fields } from '../../history/record.js';
import {
  isUnrotated,
  readCustomer,
  readUserGroup,
  type ServiceResult,
} from '../../service/user-group.js';
import type { OperationDescriptor } from '../descriptor.js';

/**
 * `ugs get` returns an existing group unchanged, token included: the way to see the outcome.
 * `--must-exist` because `get` creates a group it does not know: an id mistyped (or mangled on
 * its way through a shell) must fail, not print a new group's token as the rotated one.
 */
export const READ_CURRENT_TOKEN_HINT =
  "read the group's current token with `ugs get --id <user_group_id> --name <name> --must-exist --field token`";

/**
 * The fields of the rotation answer's `user_group`, as the interface documents them (4.2) and the
 * emulator answers them (`api_environment_tag` is the vendor's name for the environment tag).
 * `rotate --field` takes only these: a typo must be refused before the token is rotated, since
 * afterwards it could only fail with the new token unseen.
 */
export const ROTATION_ANSWER_FIELDS = [
  'team_id',
  'token',
  'name',
  'provided_id',
  'api_environment_tag',
] as const;

export const rotateToken: OperationDescriptor<string> = {
  method: 'POST',
  explo: { method: 'POST', path: '/api/refresh_user_group_token/' },
  // The Customer API's rotation: the same body, the group answered as `customer`.
  customer: { method: 'POST', path: '/api/refresh_customer_token/', read: readCustomer },
  // Not idempotent: a repeat would rotate the new token (or fail on the old one). Only a refused
  // connection proves the server never saw the request.
  retry: { maxRetries: 2, retryStatuses: new Set(), retryErrorCodes: new Set(['ECONNREFUSED']) },
  body: (currentToken) => ({ current_token: currentToken }),
  secrets: (currentToken) => [currentToken],
  read: readUserGroup,
  // A framework can fail after the database committed (a crash while rendering the answer), and a
  // gateway can give up while the service goes on: a 5xx or an unreadable 2xx may be a success.
  risk: {
    request: 'the rotation request',
    outcome: 'the token may or may not have been rotated',
    notDone: 'the token was not rotated',
    maybe: 'the rotation may have happened',
    check: READ_CURRENT_TOKEN_HINT,
  },
  hints: {
    // The service's own envelope says no: nothing was done, even for a rotation (exit 1).
    refused: `check the token; if it was rotated already, ${READ_CURRENT_TOKEN_HINT}`,
    // DRF's get_object_or_404 in the rotation view: the address is right, the token unknown.
    jsonNotFound: `the service does not know this token: it is mistyped or was rotated already; ${READ_CURRENT_TOKEN_HINT}`,
  },
  fields: ['current_token'],
  // The old token stops working: dashboards that embed it break.
  changesData: true,
  history: {
    answer: rotateAnswerFields,
    // An error names no group: only the token sent is known.
    error: (outcome, sentToken) => ({ userGroupId: null, name: null, outcome, sentToken }),
    // DRF's get_object_or_404: the service does not know the token (rotated already, or mistyped).
    notFound: 'stale',
  },
};

/** A rotation's answer: `rotated` to the answered token, or `failed` when nothing changed. */
export function rotateAnswerFields(result: ServiceResult, sentToken: string): Fields {
  const group = result.userGroup;
  const id = group.provided_id;
  const tag = group.api_environment_tag;
  const fields: Fields = {
    userGroupId: typeof id === 'string' || typeof id === 'number' ? String(id) : null,
    name: typeof group.name === 'string' ? group.name : null,
    outcome: 'rotated',
    sentToken,
    token: group.token,
    ...(typeof tag === 'string' && { environmentTag: tag }),
  };
  if (isUnrotated(result, sentToken)) return { ...fields, outcome: 'failed', token: null };
  return fields;
}

declare module '../../service/client.js' {
  interface ServiceOperations {
    rotateToken: typeof rotateToken;
  }
}
