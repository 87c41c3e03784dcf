// Only the compact JWE form (`dir` + `A256GCM`) of the embed JWTs: the subpaths keep the rest of
// jose (JWS, JWKS, key import) out of the bundle.

import { compactDecrypt } from 'jose/jwe/compact/decrypt';
import { CompactEncrypt } from 'jose/jwe/compact/encrypt';

export { CompactEncrypt, compactDecrypt };
