/** Get User: gets a user group by the caller's id, creating it when the id is new. */
import type { JsonObject, StringMap } from '../../parse.js';
import type { Operation } from '../operation.js';
import { readUserGroup, type ServiceResult } from '../user-group.js';

export interface GetUserRequest {
  name: string;
  user_group_id: string;
  mapping?: StringMap;
  properties?: JsonObject;
  /** The vendor's demo watermark (`--dialect explo` only): demo groups are not billed. */
  is_demo_group?: boolean;
}

export const getUser: Operation<GetUserRequest, ServiceResult> = {
  // A GET with a JSON body: that is the service's interface (undici's request() sends it).
  method: 'GET',
  explo: { method: 'POST', path: '/api/create_user_group/' },
  // Get-or-create by id: repeating it cannot create a second group, so a lost answer is retried.
  retry: {
    maxRetries: 2,
    retryStatuses: new Set([429, 502, 503, 504]),
    retryErrorCodes: new Set([
      'ECONNREFUSED',
      'ECONNRESET',
      'EPIPE',
      'UND_ERR_SOCKET',
      'UND_ERR_CONNECT_TIMEOUT',
      'EAI_AGAIN',
      'ETIMEDOUT',
    ]),
  },
  body: (request) => ({ ...request }),
  secrets: () => [],
  read: readUserGroup,
  hints: { tooLarge: 'send smaller --properties or --mapping' },
  route: () => import('./route.js'),
};

declare module '../client.js' {
  interface ServiceOperations {
    getUser: typeof getUser;
  }
}
