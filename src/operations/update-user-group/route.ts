/** Update User Group (explo) and Update Customer (customer) in the emulator. */

import { customerObject, parentFor } from '../../emulator/customer.js';
import type { Route } from '../../emulator/route.js';
import { parseUpdateBody, RequestError } from '../../emulator/validation.js';

export const route: Route = {
  async handle({ store, environment, dialect, text, markChanged, durable }) {
    const customer = dialect === 'customer';
    const input = parseUpdateBody(text, customer);
    const group = store.find(environment, input.id);
    // DRF's get_object_or_404: an update never creates the group it names.
    if (!group) throw RequestError.detail(404, 'Not found.').withLog('unknown', input.id);
    // Every refused field at once, as a DRF serializer reports them.
    const refused: Record<string, string[]> = {};
    const notes: string[] = [];
    if (input.newId !== undefined && input.newId !== group.providedId) {
      // A unique field's own message, as DRF's UniqueValidator words it.
      if (store.find(environment, input.newId)) {
        refused.new_provided_id = ['customer with this provided id already exists.'];
        notes.push('new id taken');
      }
    }
    // A parent of the caller's environment; not the group itself (by its id now or after a
    // rename), nor one of its descendants.
    const found =
      input.parentId === undefined
        ? undefined
        : parentFor(store, environment, input.parentId, {
            group,
            id: input.newId ?? group.providedId,
          });
    if (found !== undefined && 'error' in found) {
      refused.parent_provided_id = [found.error];
      notes.push('parent refused');
    }
    if (notes.length > 0) throw new RequestError(400, refused).withLog(notes.join(', '), input.id);
    const parent = found !== undefined && 'parent' in found ? found.parent : undefined;
    store.update(group, {
      ...(input.name !== undefined && { name: input.name }),
      ...(input.mapping !== undefined && { mapping: input.mapping }),
      ...(input.properties !== undefined && { properties: input.properties }),
      ...(input.isDemoGroup !== undefined && { isDemoGroup: input.isDemoGroup }),
      ...(input.newId !== undefined && { providedId: input.newId }),
      ...(input.emails !== undefined && { emails: input.emails }),
      ...(input.groupTags !== undefined && { groupTags: input.groupTags }),
      ...(input.hierarchyLevel !== undefined && { hierarchyLevel: input.hierarchyLevel }),
      ...(parent !== undefined && { parent }),
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
