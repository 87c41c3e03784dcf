/**
 * Delete User Group: removes a user group, named by its current token. Only the vendor's APIs
 * have it (`--dialect explo`: `DELETE /api/delete_user_group/`; `--dialect customer`:
 * `DELETE /api/delete_customer/`), each with a JSON body `{current_token}` (a DELETE with a body,
 * as the vendor documents it) answered `{success: 1}`; the interface has no delete. Gone is gone:
 * dashboards that embed the token break, and the id can be created again, with a new token.
 */
import { ApiError } from '../../errors.js';
import type { Fields } from '../../history/record.js';
import type { JsonObject } from '../../input/parse.js';
import type { ServiceClient } from '../../service/client.js';
import type { SuccessAnswer } from '../../service/operation.js';
import { message } from '../../text/message.js';
import type { OperationDescriptor } from '../descriptor.js';

export interface DeleteUserGroupRequest {
  current_token: string;
  /**
   * The group's id when the caller knows it (`delete --id`, or a bulk row): never sent (the
   * service knows the group by its token), only written to the history and the messages.
   */
  user_group_id?: string;
}

/** A delete's answer: nothing but `success`; the body is kept for `--json`. */
export interface DeleteResult {
  status: number;
  body: JsonObject;
  text: string;
}

/** How to see what a delete whose answer was lost did. */
export const DELETE_CHECK =
  'see whether the group is still there with `ugs show --id <user_group_id>` (customer dialect; "no user group" means it was deleted), or send the same delete again: "no group has that token" means it is gone';

export const deleteUserGroup: OperationDescriptor<DeleteUserGroupRequest, DeleteResult> = {
  // The vendor's APIs only: no `method` (the interface has no delete).
  explo: { method: 'DELETE', path: '/api/delete_user_group/' },
  customer: { method: 'DELETE', path: '/api/delete_customer/' },
  // A lost answer is not repeated blindly: the repeat of a delete that happened is a 404, which
  // would then read as "no group has that token" (the single command says what to run instead;
  // a bulk run settles it from its journal). A 429 was refused before the view ran, and a
  // refused connection never reached it.
  retry: {
    maxRetries: 2,
    retryStatuses: new Set([429]),
    retryErrorCodes: new Set(['ECONNREFUSED']),
  },
  // Only the token goes on the wire; the id is the caller's note.
  body: ({ current_token }) => ({ current_token }),
  secrets: ({ current_token }) => [current_token],
  read: readDeleted,
  risk: {
    request: 'the delete request',
    outcome: 'the user group may or may not have been deleted',
    notDone: 'the user group was not deleted',
    maybe: 'the delete may have happened',
    check: DELETE_CHECK,
  },
  hints: {
    // DRF's get_object_or_404 in the delete view: the address is right, the token unknown.
    jsonNotFound:
      'the service does not know this token: it is mistyped, was rotated, or its group was deleted already (ugs whois - tells what the history knows of it)',
  },
  fields: ['current_token'],
  // It removes the group: every dashboard that embeds its token breaks.
  changesData: true,
  history: {
    answer: (_result, request) => deletedFields(request, 'deleted'),
    error: (outcome, request) => deletedFields(request, outcome),
  },
};

/** A delete's event: the token sent (as a fingerprint), and the group's id when known. */
function deletedFields(request: DeleteUserGroupRequest, outcome: Fields['outcome']): Fields {
  return {
    userGroupId: request.user_group_id ?? null,
    name: null,
    outcome,
    sentToken: request.current_token,
    token: null,
  };
}

/** `{success: 1}` is all a delete answers: there is nothing else to read. */
function readDeleted(answer: SuccessAnswer): DeleteResult {
  return { status: answer.status, body: answer.body, text: answer.text };
}

declare module '../../service/client.js' {
  interface ServiceOperations {
    deleteUserGroup: typeof deleteUserGroup;
  }
}

/** The error of a delete the service answered 404: no group has that token (exit 1). */
export function noGroupWithToken(cause: ApiError, id: string | undefined): ApiError {
  return new ApiError(
    id === undefined
      ? 'no group has that token: the service knows no user group by it; nothing was deleted'
      : message`no group has that token: the token read for "${id}" is no group's any more (deleted or rotated meanwhile); nothing was deleted`,
    { status: 404, hint: deleteUserGroup.hints?.jsonNotFound, cause },
  );
}

/** The delete; a 404 is "no group has that token", exit 1. */
export async function sendDelete(
  client: ServiceClient,
  request: DeleteUserGroupRequest,
): Promise<DeleteResult> {
  try {
    return await client.deleteUserGroup(request);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw noGroupWithToken(error, request.user_group_id);
    }
    throw error;
  }
}
