/**
 * `POST /api/embed/check/` with `{jwt}` (optionally `provided_id`, `embed_id`): the emulator's
 * own route, no operation of the service. It plays the embedded dashboard that is shown a JWT,
 * with no API token (the JWT is the credential): 200 with `verdict: "valid"`, or a 401 "Invalid
 * token." with the reason the real dashboard keeps to itself (`expired`, `wrong-key`,
 * `wrong-customer`, `wrong-dashboard`, `not-a-jwe`). `ugs serve` prints each verdict on stderr
 * even without `--debug`, with the JWT by its last 4 only, so "invalid token" can be reproduced
 * and explained locally.
 */
import type { Environment } from '../../emulator/auth.js';
import type { PublicRoute, RouteAnswer } from '../../emulator/route.js';
import { parseJsonObject, RequestError } from '../../emulator/validation.js';
import { decryptClaims, UnreadableJweError, WrongKeyError } from '../../jwt/crypto.js';
import { embedKey, expiryWords, readCompact, utcTime } from '../../jwt/embed.js';
import { message } from '../../text/message.js';
import { fingerprint } from '../../text/redact.js';

const ENVIRONMENTS: readonly Environment[] = ['Customer', 'Testing'];

type Verdict =
  | 'valid'
  | 'expired'
  | 'wrong-key'
  | 'wrong-customer'
  | 'wrong-dashboard'
  | 'not-a-jwe';

export const route: PublicRoute = {
  async handle({ store, text, embedSecrets }) {
    const body = parseJsonObject(text);
    const jwt = body.jwt;
    if (typeof jwt !== 'string' || jwt.trim() === '') {
      throw new RequestError(400, {
        jwt: [jwt === undefined ? 'This field is required.' : 'Not a valid string.'],
      });
    }
    const expected = (field: string) =>
      typeof body[field] === 'string' ? (body[field] as string) : undefined;
    const wantedCustomer = expected('provided_id');
    const wantedDashboard = expected('embed_id');
    const shown = fingerprint(jwt.trim());
    const answer = (
      verdict: Verdict,
      reason: string,
      claims?: Record<string, unknown>,
    ): RouteAnswer => {
      const cst = typeof claims?.cst === 'string' ? claims.cst : undefined;
      const facts =
        claims === undefined
          ? ''
          : message` cst="${String(claims.cst)}" dsh="${String(claims.dsh)}"`;
      return {
        status: verdict === 'valid' ? 200 : 401,
        body: {
          ...(verdict === 'valid' ? { success: 1 } : { success: 0, detail: 'Invalid token.' }),
          verdict,
          reason,
          ...(claims !== undefined && { claims }),
        },
        outcome: `jwt-${verdict}`,
        id: cst ?? '',
        notice: `embed JWT ${shown}: ${verdict} (${reason})${facts}`,
      };
    };
    const read = readCompact(jwt.trim());
    if (read.kind !== 'jwe') {
      return answer('not-a-jwe', read.kind === 'jws' ? 'a JWS (signed JWT), not a JWE' : read.why);
    }
    const kid = read.header.kid;
    const secret = embedSecrets.find((candidate) => candidate.kid === kid);
    if (secret === undefined) {
      return answer('wrong-key', message`no embed secret has kid ${String(kid ?? 'none')}`);
    }
    let claims: Record<string, unknown>;
    try {
      claims = await decryptClaims(jwt.trim(), embedKey(secret.secret, secret.kid));
    } catch (error) {
      if (error instanceof WrongKeyError) {
        return answer(
          'wrong-key',
          message`not encrypted with the embed secret of kid ${secret.kid}`,
        );
      }
      if (error instanceof UnreadableJweError) return answer('not-a-jwe', error.reason);
      throw error;
    }
    const now = Math.floor(Date.now() / 1000);
    const exp = claims.exp;
    if (typeof exp !== 'number') return answer('expired', 'no exp claim', claims);
    if (exp <= now)
      return answer('expired', `${expiryWords(exp, now)}, at ${utcTime(exp)}`, claims);
    const cst = typeof claims.cst === 'string' ? claims.cst : '';
    if (wantedCustomer !== undefined && cst !== wantedCustomer) {
      return answer(
        'wrong-customer',
        message`for customer "${cst}", not "${wantedCustomer}"`,
        claims,
      );
    }
    if (!ENVIRONMENTS.some((environment) => store.find(environment, cst))) {
      return answer('wrong-customer', message`no customer "${cst}" in the emulator`, claims);
    }
    if (wantedDashboard !== undefined && claims.dsh !== wantedDashboard) {
      return answer(
        'wrong-dashboard',
        message`for dashboard "${String(claims.dsh)}", not "${wantedDashboard}"`,
        claims,
      );
    }
    return answer('valid', expiryWords(exp, now), claims);
  },
};
