/** Delete User Group (explo) and Delete Customer (customer) in the emulator. */

import type { Route } from '../../emulator/route.js';
import { parseRotateBody, RequestError } from '../../emulator/validation.js';
import { fingerprint } from '../../text/redact.js';

export const route: Route = {
  async handle({ store, environment, text, markChanged, durable }) {
    // The same body as a rotation's: `{current_token}`, required and not blank.
    const currentToken = parseRotateBody(text);
    const group = store.findByToken(environment, currentToken);
    // DRF's get_object_or_404; the token is not echoed (a credential), the log names its last 4.
    if (!group) {
      throw RequestError.detail(404, 'Not found.').withLog(
        `token=${fingerprint(currentToken)} unknown`,
      );
    }
    store.remove(group);
    markChanged();
    await durable();
    return { status: 200, body: { success: 1 }, outcome: 'deleted', id: group.providedId };
  },
};
