/** Create User (token rotation) in the emulator: the old token stops working at once. */

import { customerObject } from '../../emulator/customer.js';
import type { Route } from '../../emulator/route.js';
import { parseRotateBody, RequestError } from '../../emulator/validation.js';
import { fingerprint } from '../../text/redact.js';

export const route: Route = {
  async handle({ store, environment, dialect, text, markChanged, durable }) {
    const currentToken = parseRotateBody(text);
    const group = store.rotate(environment, currentToken);
    // DRF's get_object_or_404; the token is not echoed: it is a credential. The access log
    // (--debug) names its last 4, and whether a rotation replaced it: someone holds an old one.
    if (!group) {
      const previous = store.previousOwner(environment, currentToken);
      const note =
        previous === undefined
          ? `token=${fingerprint(currentToken)} unknown`
          : `token=${fingerprint(currentToken)} was rotated before (${previous.rotatedAt.toISOString()}): a previous token of this group`;
      throw RequestError.detail(404, 'Not found.').withLog(note, previous?.providedId);
    }
    markChanged();
    // The Customer API's refresh_customer_token answers the customer object.
    const body =
      dialect === 'customer'
        ? { success: 1, customer: customerObject(group) }
        : {
            success: 1,
            user_group: {
              team_id: group.teamId,
              token: group.token,
              name: group.name,
              provided_id: group.providedId,
              // The field name the vendor documents; the interface leaves it unnamed.
              api_environment_tag: environment,
            },
          };
    await durable();
    return { status: 200, body, outcome: 'rotated', id: group.providedId };
  },
};
