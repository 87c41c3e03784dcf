/** Get User in the emulator: get-or-create by the caller's id, as the service does. */

import { customerObject, parentFor } from '../../emulator/customer.js';
import type { Route } from '../../emulator/route.js';
import { parseGetUserBody, RequestError } from '../../emulator/validation.js';

export const route: Route = {
  async handle({ store, environment, dialect, text, markChanged, durable }) {
    const customer = dialect === 'customer';
    // The Customer API's create_customer names the id `provided_id`.
    const { parentId, ...input } = parseGetUserBody(
      text,
      customer ? 'provided_id' : 'user_group_id',
    );
    // The parent is checked as the rest of the body is, before the get or create: a request
    // naming a parent the environment does not hold (or the group itself) is refused, found or
    // not; a group found is then answered as it is, its parent unchanged.
    const found =
      parentId === undefined
        ? { parent: null }
        : parentFor(store, environment, parentId, { group: undefined, id: input.userGroupId });
    if ('error' in found) {
      throw new RequestError(400, { parent_provided_id: [found.error] }).withLog(
        'parent refused',
        input.userGroupId,
      );
    }
    const { created, group } = store.getOrCreate(environment, { ...input, parent: found.parent });
    if (created) markChanged();
    if (customer) {
      // The customer as stored: an existing one is answered as it is.
      const body = { success: 1, new_customer: created, customer: customerObject(group) };
      await durable();
      return { status: 200, body, outcome: created ? 'created' : 'found', id: group.providedId };
    }
    // Rules 1 and 3 of Get User: name and properties are the request's own, whatever was
    // stored first; the stored group itself is never changed by a later get. The answer is
    // taken before waiting, so it shows exactly the state the wait covers even if the group is
    // rotated meanwhile.
    const body = {
      success: 1,
      new_user_group: created,
      user_group: {
        team_id: group.teamId,
        token: group.token,
        name: input.name,
        provided_id: group.providedId,
        properties: input.properties ?? null,
        // The vendor's API answers the group's demo flag, as it was set when it was created.
        ...(dialect === 'explo' && { is_demo_group: group.isDemoGroup }),
      },
    };
    // Also when found: a concurrent request may have created it and not yet saved it, and a
    // token must never be handed out before it is durable.
    await durable();
    return { status: 200, body, outcome: created ? 'created' : 'found', id: group.providedId };
  },
};
