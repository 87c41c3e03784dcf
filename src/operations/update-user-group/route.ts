/** Update User Group (explo) and Update Customer (customer) in the emulator. */

import { customerObject } from '../../emulator/customer.js';
import type { Route } from '../../emulator/route.js';
import { parseUpdateBody, RequestError } from '../../emulator/validation.js';

export const route: Route = {
  async handle({ store, environment, dialect, text, markChanged, durable }) {
    const customer = dialect === 'customer';
    const input = parseUpdateBody(text, customer);
    const group = store.find(environment, input.id);
    // DRF's get_object_or_404: an update never creates the group it names.
    if (!group) throw RequestError.detail(404, 'Not found.').withLog('unknown', input.id);
    if (input.newId !== undefined && input.newId !== group.providedId) {
      // A unique field's own message, as DRF's UniqueValidator words it.
      if (store.find(environment, input.newId)) {
        throw new RequestError(400, {
          new_provided_id: ['customer with this provided id already exists.'],
        }).withLog('new id taken', input.id);
      }
    }
    store.update(group, {
      ...(input.name !== undefined && { name: input.name }),
      ...(input.mapping !== undefined && { mapping: input.mapping }),
      ...(input.properties !== undefined && { properties: input.properties }),
      ...(input.isDemoGroup !== undefined && { isDemoGroup: input.isDemoGroup }),
      ...(input.newId !== undefined && { providedId: input.newId }),
    });
    markChanged();
    const body = customer
      ? { success: 1, customer: customerObject(group) }
      : {
          success: 1,
          user_group: {
            team_id: group.teamId,
            token: group.token,
            name: group.name,
            provided_id: group.providedId,
            properties: group.properties,
            is_demo_group: group.isDemoGroup,
          },
        };
    await durable();
    return { status: 200, body, outcome: 'updated', id: group.providedId };
  },
};
