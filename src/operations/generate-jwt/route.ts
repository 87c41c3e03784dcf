/**
 * Generate Embed JWT in the emulator (customer dialect): mints the JWT with the emulator's embed
 * secrets (`ugs serve --embed-secret KID:SECRET`), as `ugs jwt` does locally, so the two can be
 * compared. `key_id` picks the secret (the first one when absent); the customer must exist (a
 * 404 as get_customer/ answers otherwise: the emulator's choice, the vendor does not say).
 */
import type { Route } from '../../emulator/route.js';
import { parseJsonObject, RequestError } from '../../emulator/validation.js';
import { UsageError } from '../../errors.js';
import { encryptClaims } from '../../jwt/crypto.js';
import {
  DEFAULT_EXPIRES_SECONDS,
  type EmbedClaims,
  embedKey,
  isoDurationSeconds,
  MAX_EXPIRES_SECONDS,
  parseOrigin,
} from '../../jwt/embed.js';

export const route: Route = {
  async handle({ store, environment, text, embedSecrets }) {
    const body = parseJsonObject(text);
    const errors: Record<string, string[]> = {};
    const required = (field: string): string => {
      const value = body[field];
      if (value === undefined || value === null) errors[field] = ['This field is required.'];
      else if (typeof value !== 'string') errors[field] = ['Not a valid string.'];
      else if (value.trim() === '') errors[field] = ['This field may not be blank.'];
      return typeof value === 'string' ? value : '';
    };
    const optional = (field: string): string | undefined => {
      const value = body[field];
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'string') errors[field] = ['Not a valid string.'];
      return typeof value === 'string' ? value : undefined;
    };
    const providedId = required('provided_id');
    const embedId = required('embed_id');
    const keyId = optional('key_id');
    const expiration = optional('expiration');
    const origin = optional('embed_origin');
    // Accepted and not encoded: the local form documents no claim for a chart.
    optional('chart_id');
    let seconds = DEFAULT_EXPIRES_SECONDS;
    if (expiration !== undefined) {
      const read = isoDurationSeconds(expiration);
      if (read === undefined || read <= 0 || read > MAX_EXPIRES_SECONDS) {
        errors.expiration = ['Enter a valid duration.'];
      } else seconds = read;
    }
    let iss: string | undefined;
    if (origin !== undefined) {
      try {
        iss = parseOrigin(origin, 'embed_origin');
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        errors.embed_origin = ['Enter a valid URL.'];
      }
    }
    const secret =
      keyId === undefined ? embedSecrets[0] : embedSecrets.find((s) => s.kid === keyId);
    if (keyId !== undefined && secret === undefined) {
      errors.key_id = [`No embed secret with key id "${keyId}".`];
    }
    if (Object.keys(errors).length > 0) throw new RequestError(400, errors);
    if (secret === undefined) {
      throw RequestError.detail(
        400,
        'This environment has no embed secret (start ugs serve with --embed-secret KID:SECRET).',
      );
    }
    if (!store.find(environment, providedId)) {
      throw RequestError.detail(404, 'Not found.').withLog('unknown', providedId);
    }
    const claims: EmbedClaims = {
      cst: providedId,
      dsh: embedId,
      exp: Math.floor(Date.now() / 1000) + seconds,
      ...(iss !== undefined && { iss }),
    };
    const jwt = await encryptClaims(claims, embedKey(secret.secret, secret.kid), secret.kid);
    return { status: 200, body: { success: 1, jwt }, outcome: 'jwt', id: providedId };
  },
};
