/**
 * Update User Group: changes an existing group's data, naming it by the caller's id. Only the
 * vendor's APIs have it (`--dialect explo`: update_user_group/; `--dialect customer`:
 * update_customer/, with more fields and a rename); the interface has no update. Only the
 * fields sent change: a request carries what the person gave, and nothing else.
 */
import { ApiError } from '../../errors.js';
import type { Fields } from '../../history/record.js';
import type { JsonObject, StringMap } from '../../input/parse.js';
import type { ServiceClient } from '../../service/client.js';
import { readCustomer, readUserGroup, type ServiceResult } from '../../service/user-group.js';
import { message } from '../../text/message.js';
import type { OperationDescriptor } from '../descriptor.js';

export interface UpdateUserGroupRequest {
  /** The group to change (`provided_id` in the Customer API). */
  user_group_id: string;
  name?: string;
  mapping?: StringMap;
  properties?: JsonObject;
  is_demo_group?: boolean;
  // The Customer API's own fields (`--dialect customer` only).
  new_provided_id?: string;
  emails?: string[];
  /** Replaces the group's tags; `[]` clears them. */
  group_tags?: string[];
  hierarchy_level?: string;
  parent_provided_id?: string;
}

/** How to see what an update whose answer was lost did. */
const CHECK =
  'read the group with `ugs show --id <user_group_id>` (customer dialect), or send the same update again: it sets the same values';

export const updateUserGroup: OperationDescriptor<UpdateUserGroupRequest> = {
  // The vendor's APIs only: no `method` (the interface has no update).
  explo: { method: 'POST', path: '/api/update_user_group/' },
  customer: {
    method: 'POST',
    path: '/api/update_customer/',
    body: ({ user_group_id, ...rest }) => ({ provided_id: user_group_id, ...rest }),
    read: readCustomer,
  },
  // A lost answer is not repeated: a rename repeated would find no group of the old id, and a
  // repeat could undo a change someone else made meanwhile. A 429 was refused before the
  // view ran, and a refused connection never reached it.
  retry: {
    maxRetries: 2,
    retryStatuses: new Set([429]),
    retryErrorCodes: new Set(['ECONNREFUSED']),
  },
  body: (request) => ({ ...request }),
  secrets: () => [],
  read: readUserGroup,
  risk: {
    request: 'the update request',
    outcome: 'the user group may or may not have been changed',
    notDone: 'the user group was not changed',
    maybe: 'the update may have happened',
    check: CHECK,
  },
  hints: { tooLarge: 'send smaller --properties or --mapping' },
  fields: [
    'user_group_id',
    'name',
    'mapping',
    'properties',
    'is_demo_group',
    'new_provided_id',
    'emails',
    'group_tags',
    'hierarchy_level',
    'parent_provided_id',
  ],
  // It overwrites what a group holds (its name, tags, even its id).
  changesData: true,
  history: {
    answer: updatedFields,
    error: (outcome, request) => ({
      userGroupId: request.user_group_id,
      name: request.name ?? null,
      outcome,
    }),
  },
};

/** An update's answer: `updated`, under the id the group has now (a rename's new one). */
function updatedFields(result: ServiceResult, request: UpdateUserGroupRequest): Fields {
  const { name, provided_id: id } = result.userGroup;
  return {
    userGroupId:
      typeof id === 'string' || typeof id === 'number'
        ? String(id)
        : (request.new_provided_id ?? request.user_group_id),
    name: typeof name === 'string' ? name : (request.name ?? null),
    outcome: 'updated',
    token: result.userGroup.token,
  };
}

declare module '../../service/client.js' {
  interface ServiceOperations {
    updateUserGroup: typeof updateUserGroup;
  }
}

/** The update; a 404 (no group of that id) is "no user group", exit 1, with nothing created. */
export async function sendUpdate(
  client: ServiceClient,
  request: UpdateUserGroupRequest,
): Promise<ServiceResult> {
  try {
    return await client.updateUserGroup(request);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      const id = request.user_group_id;
      throw new ApiError(
        message`no user group "${id}": the service has none with that id; nothing was changed`,
        {
          status: 404,
          hint: 'check the id for a typo (ugs history lists the ids used before)',
          cause: error,
        },
      );
    }
    throw error;
  }
}
