/** Get Customer in the emulator: reads one group by its id, never creates one. */

import { customerObject } from '../../emulator/customer.js';
import type { Route } from '../../emulator/route.js';
import { parseGetCustomerBody, RequestError } from '../../emulator/validation.js';

export const route: Route = {
  async handle({ store, environment, text }) {
    const providedId = parseGetCustomerBody(text);
    const group = store.find(environment, providedId);
    // DRF's get_object_or_404: nothing is created for an id the service does not know.
    if (!group) throw RequestError.detail(404, 'Not found.').withLog('unknown', providedId);
    return {
      status: 200,
      body: { success: 1, customer: customerObject(group) },
      outcome: 'found',
      id: group.providedId,
    };
  },
};
