/**
 * The crypto of embed JWTs, by the JOSE library (`jose`), loaded by the first call only: no
 * other command pays for it at start-up (test/platform/startup-loads.process.test.ts).
 */
import type { EmbedClaims, EmbedHeader } from './embed.js';

/** The key did not decrypt the JWT: another key, or a JWT changed in transit. */
export class WrongKeyError extends Error {
  constructor() {
    super('the key does not decrypt it');
    this.name = 'WrongKeyError';
  }
}

/** The JWT is a JWE, but not one of this form (another `alg` or `enc`, a broken part). */
export class UnreadableJweError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'UnreadableJweError';
  }
}

/** A compact JWE (`dir`, `A256GCM`, `kid`) of `claims` under `key` (32 bytes). */
export async function encryptClaims(
  claims: EmbedClaims,
  key: Uint8Array,
  kid: string,
): Promise<string> {
  const { CompactEncrypt } = await import('../vendor/jose.js');
  const header: EmbedHeader = { alg: 'dir', enc: 'A256GCM', kid };
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader({ ...header })
    .encrypt(key);
}

/**
 * The payload of a compact JWE under `key`, parsed as JSON. Only `dir` + `A256GCM` is accepted:
 * the one form the vendor documents, so a token of another form is named as such rather than
 * decrypted with a key meant for something else.
 */
export async function decryptClaims(
  jwt: string,
  key: Uint8Array,
): Promise<Record<string, unknown>> {
  const { compactDecrypt } = await import('../vendor/jose.js');
  let plaintext: Uint8Array;
  try {
    ({ plaintext } = await compactDecrypt(jwt, key, {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
    }));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_JWE_DECRYPTION_FAILED') throw new WrongKeyError();
    const reason = error instanceof Error ? error.message : String(error);
    throw new UnreadableJweError(reason);
  }
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plaintext));
  } catch {
    throw new UnreadableJweError('its payload is not JSON');
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) {
    throw new UnreadableJweError('its payload is not a JSON object of claims');
  }
  return claims as Record<string, unknown>;
}
