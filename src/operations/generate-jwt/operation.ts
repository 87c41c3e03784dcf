/**
 * Generate Embed JWT (`--dialect customer` only): the Customer API mints the JWT an embedded
 * dashboard is given, `POST /api/generate_jwt/` with `{provided_id, embed_id, key_id?,
 * expiration?, chart_id?, embed_origin?}` (`expiration` an ISO 8601 duration; 24 hours when
 * absent), answered `{success: 1, jwt}`. `ugs jwt --via-api` sends it; `ugs jwt` without it mints
 * the same JWT locally with the embed secret (`src/jwt/`). It changes nothing on the service,
 * and writes no token history: a JWT is a credential, and the history keeps none.
 */
import type { JsonObject } from '../../input/parse.js';
import type { SuccessAnswer, Unreadable } from '../../service/operation.js';
import { REPEATABLE_RETRY } from '../../transport/http.js';
import type { OperationDescriptor } from '../descriptor.js';

export interface GenerateJwtRequest {
  provided_id: string;
  embed_id: string;
  key_id?: string;
  /** ISO 8601, e.g. `PT2H`. */
  expiration?: string;
  chart_id?: string;
  embed_origin?: string;
}

export interface GeneratedJwt {
  jwt: string;
  /** The answer as sent. */
  body: JsonObject;
}

export const generateJwt: OperationDescriptor<GenerateJwtRequest, GeneratedJwt> = {
  // Only in the Customer API: no `method` (interface) and no `explo` wire.
  customer: { method: 'POST', path: '/api/generate_jwt/' },
  // Minting changes nothing on the service: a lost answer is asked again, as a read is.
  retry: REPEATABLE_RETRY,
  body: (input) => ({ ...input }),
  secrets: () => [],
  read: readJwt,
  fields: ['provided_id', 'embed_id', 'key_id', 'expiration', 'chart_id', 'embed_origin'],
  changesData: false,
  hints: {
    // DRF's get_object_or_404 on the customer: the address is right, the id unknown.
    jsonNotFound:
      'the service knows no customer of that --id (or no dashboard of that --embed): check both for a typo',
  },
};

declare module '../../service/client.js' {
  interface ServiceOperations {
    generateJwt: typeof generateJwt;
  }
}

function readJwt(answer: SuccessAnswer): GeneratedJwt | Unreadable {
  const { jwt } = answer.body;
  if (typeof jwt !== 'string' || jwt === '' || /\s/.test(jwt)) {
    return { unreadable: 'the answer has no "jwt" string' };
  }
  return { jwt, body: answer.body };
}
