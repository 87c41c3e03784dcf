/**
 * Get Customer (`--dialect customer` only): reads one user group by the caller's id, and never
 * creates one. The vendor's Customer API has this read-one beside its get-or-create, so in that
 * dialect `get --must-exist` and `rotate --id` read with it: a mistyped id is "no user group",
 * with nothing created. The other dialects have no such call (their get creates a missing group).
 */
import { ApiError } from '../../errors.js';
import type { Fields } from '../../history/record.js';
import type { ServiceClient } from '../../service/client.js';
import type { Dialect } from '../../service/dialect.js';
import { wireOf } from '../../service/operation.js';
import { readCustomer, type ServiceResult } from '../../service/user-group.js';
import { message } from '../../text/message.js';
import { REPEATABLE_RETRY } from '../../transport/http.js';
import type { OperationDescriptor } from '../descriptor.js';

export const getCustomer: OperationDescriptor<string> = {
  // Only in the Customer API: no `method` (interface) and no `explo` wire.
  customer: { method: 'POST', path: '/api/get_customer/' },
  // A read: repeating it cannot change anything, so a lost answer is retried like a get's.
  retry: REPEATABLE_RETRY,
  body: (id) => ({ provided_id: id }),
  secrets: () => [],
  read: readCustomer,
  fields: ['provided_id'],
  changesData: false,
  // A read by id that never creates: whois --check asks it in this dialect, not create_customer/.
  readsGroup: { input: (id) => id, createsMissing: false },
  history: {
    answer: foundFields,
    error: (outcome, id) => ({ userGroupId: id, name: null, outcome }),
  },
};

/** A read's answer: the group was `found`, with its token. */
function foundFields(result: ServiceResult, id: string): Fields {
  const name = result.userGroup.name;
  return {
    userGroupId: id,
    name: typeof name === 'string' ? name : null,
    outcome: 'found',
    token: result.userGroup.token,
  };
}

declare module '../../service/client.js' {
  interface ServiceOperations {
    getCustomer: typeof getCustomer;
  }
}

/** Whether the dialect has this read-one: only there can a group be read without creating it. */
export function readsWithoutCreating(dialect: Dialect | undefined): boolean {
  return wireOf(getCustomer, dialect) !== undefined;
}

/**
 * The group of this id as it exists, read with Get Customer: a 404 (no customer of that id) is
 * "no user group", exit 1, and nothing was created. `created: false`, since it was there.
 */
export async function readExisting(client: ServiceClient, id: string): Promise<ServiceResult> {
  try {
    return { ...(await client.getCustomer(id)), created: false };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new ApiError(
        message`no user group "${id}": the service has none with that id; nothing was created`,
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
