/**
 * A group a lookup created by mistake. The End User Group API (explo) reads a group only with
 * get-or-create: a command that looks a group up by its id (`delete --id`, `rotate --id`,
 * `whois --check --id`) creates it when the id is new, typo or not. Where the dialect has a
 * delete, that new group is ugs's own doing and nobody holds its token, so it is deleted again
 * at once (no question asked). The commands share these helpers so they say it alike.
 */
import type { Deps } from '../../context/factory.js';
import { ApiError } from '../../errors.js';
import { recorded } from '../../history/record.js';
import { commandWordFor } from '../../input/parse.js';
import type { Platform } from '../../platform/host.js';
import type { ServiceClient } from '../../service/client.js';
import type { Dialect } from '../../service/dialect.js';
import { wireOf } from '../../service/operation.js';
import type { Target } from '../../service/target.js';
import { message } from '../../text/message.js';
import { type DeleteUserGroupRequest, deleteUserGroup, sendDelete } from './operation.js';

/** Whether the dialect has a delete: only there can a group a lookup created go again. */
export function deletesLookupsGroup(dialect: Dialect | undefined): boolean {
  return wireOf(deleteUserGroup, dialect) !== undefined;
}

/**
 * Deletes the group a lookup just created (recorded as any delete); the error when that failed,
 * undefined when it is gone. The caller says what it means for its own command.
 */
export async function deleteCreatedGroup(
  id: string,
  token: string,
  client: ServiceClient,
  deps: Deps,
  target: Target,
): Promise<unknown> {
  deps.tracer.addSecret(token);
  deps.output.maskSecret(token);
  const request: DeleteUserGroupRequest = { current_token: token, user_group_id: id };
  try {
    await recorded(deps, target, deleteUserGroup, request, () => sendDelete(client, request));
    return undefined;
  } catch (error) {
    return error;
  }
}

/**
 * The explo lookup created the group it looked for: nothing existed, and the new one goes. Ends
 * the run (exit 1) either way; `outcome` says what the command did not do ("nothing was
 * rotated").
 */
export async function deleteLookupsGroup(
  id: string,
  token: string,
  client: ServiceClient,
  deps: Deps,
  target: Target,
  outcome = 'nothing else was deleted',
): Promise<never> {
  const error = await deleteCreatedGroup(id, token, client, deps, target);
  if (error !== undefined) {
    throw new ApiError(
      message`no user group "${id}" existed: the lookup of its token (a get, which creates a missing group) created one, and deleting that new group failed: ${error instanceof Error ? error.message : String(error)}`,
      {
        hint: `check the id for a typo; the group "${id}" may exist now: \`${deleteByIdCommand(id, target, deps.system.platform)}\` deletes it`,
        cause: error,
      },
    );
  }
  throw new ApiError(
    message`no user group "${id}" existed: the lookup of its token (a get, which creates a missing group) created one, and ugs deleted that new group again; ${outcome}`,
    { hint: 'check the id for a typo (ugs history lists the ids used before)' },
  );
}

/** `ugs delete --id <id> --yes`, quoted for `platform`'s shell (POSIX unless told). */
export function deleteByIdCommand(
  id: string,
  target: Target,
  platform: Platform = 'linux',
): string {
  const word = commandWordFor(platform);
  const parts = ['ugs delete --id', word(id), '--yes'];
  if (target.profile !== undefined && target.profile !== 'default') {
    parts.push('--profile', word(target.profile));
  }
  return parts.join(' ');
}
