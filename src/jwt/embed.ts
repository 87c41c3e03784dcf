/**
 * Embed JWTs as the vendor documents them ("Generating a JWT"): a compact JWE with the protected
 * header `{"alg": "dir", "enc": "A256GCM", "kid": <key id>}` whose payload is the JSON claims
 * `cst` (the customer's provided id), `dsh` (the embed id), `exp` (seconds since the epoch) and,
 * optionally, `iss` (the embedding origin, with its trailing slash), `rbc` and `des`.
 *
 * This file is the pure part: durations, origins, the secret's checks and the compact form read
 * without any crypto. The crypto is `crypto.ts`, which alone loads the JOSE library.
 */
import { UsageError } from '../errors.js';
import { isLoopbackHost, readDuration } from '../input/parse.js';
import { message } from '../text/message.js';

/** The claims of an embed JWT; others a JWT carries are kept as they came. */
export interface EmbedClaims {
  cst: string;
  dsh: string;
  exp: number;
  iss?: string;
  [claim: string]: unknown;
}

/** The protected header of an embed JWT. */
export interface EmbedHeader {
  alg: 'dir';
  enc: 'A256GCM';
  kid: string;
}

/** An embed secret and the key id the vendor gave it. */
export interface EmbedSecret {
  kid: string;
  secret: string;
}

/** A256GCM takes a 256-bit key, and the vendor uses the secret's bytes as that key. */
export const EMBED_KEY_BYTES = 32;

/** The vendor's default lifetime of a JWT: 24 hours. */
export const DEFAULT_EXPIRES_SECONDS = 24 * 3600;

/**
 * The longest lifetime accepted: a year. A JWT cannot be revoked before its `exp` (only its key
 * can), so a longer one is a credential nobody can take back; the vendor documents no limit.
 */
export const MAX_EXPIRES_SECONDS = 366 * 24 * 3600;

const EXPIRES_FORM = { units: ['s', 'm', 'h', 'd', 'w'] as const, fractions: false };

/** ISO 8601 durations with fixed-length units only: weeks, days, hours, minutes, seconds. */
const ISO_DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/**
 * An ISO 8601 duration (`PT2H`, `P1D`, `P1DT12H`, `PT90S`, `P2W`) in seconds, or undefined when
 * it is not one. Years and months are refused (undefined): they have no fixed length, and the
 * service and ugs could count a different number of seconds for them.
 */
export function isoDurationSeconds(text: string): number | undefined {
  const trimmed = text.trim().toUpperCase();
  const match = ISO_DURATION.exec(trimmed);
  if (match === null || trimmed === 'P' || trimmed.endsWith('T')) return undefined;
  const [, w, d, h, m, s] = match.map((part) => (part === undefined ? 0 : Number(part)));
  return (((w ?? 0) * 7 + (d ?? 0)) * 24 + (h ?? 0)) * 3600 + (m ?? 0) * 60 + (s ?? 0);
}

/**
 * `--expires`: `90s`, `30m`, `2h`, `7d`, `1w`, `1h30m`, or ISO 8601 (`PT2H`, `P1D`). More than 0
 * and at most a year. Returns seconds.
 */
export function parseExpires(text: string, flag = '--expires'): number {
  const usage = (why: string) =>
    new UsageError(message`${flag} ${why}, got "${text}"`, {
      hint: `for example: ${flag} 90s, ${flag} 30m, ${flag} 2h, ${flag} 7d or ${flag} PT2H`,
    });
  const trimmed = text.trim();
  const seconds = /^p/i.test(trimmed)
    ? isoDurationSeconds(trimmed)
    : (() => {
        const ms = readDuration(trimmed, { units: [...EXPIRES_FORM.units], fractions: false });
        return ms === undefined ? undefined : ms / 1000;
      })();
  if (seconds === undefined) {
    // The date part of an ISO duration (before `T`) with Y or M: years or months.
    const calendar = /^p/i.test(trimmed) && /[YM]/i.test(trimmed.split(/t/i)[0] ?? '');
    throw usage(
      calendar
        ? 'takes no years or months (they have no fixed length): use days or weeks'
        : 'expects a duration such as 90s, 30m, 2h, 7d or PT2H',
    );
  }
  if (seconds <= 0 || seconds > MAX_EXPIRES_SECONDS) {
    throw usage('must be more than 0 and at most 366 days');
  }
  return seconds;
}

/** Seconds as the ISO 8601 duration the API takes (`expiration`): `PT2H`, `P7D`, `P1DT30M`. */
export function isoDuration(seconds: number): string {
  const days = Math.floor(seconds / 86400);
  let rest = seconds - days * 86400;
  const hours = Math.floor(rest / 3600);
  rest -= hours * 3600;
  const minutes = Math.floor(rest / 60);
  const secs = rest - minutes * 60;
  const time = `${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${secs ? `${secs}S` : ''}`;
  return `P${days ? `${days}D` : ''}${time ? `T${time}` : ''}` || 'PT0S';
}

/** A span as people read it: `1h 59m`, `3h`, `2d 4h`, `45s` (the two largest units). */
export function formatSpan(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const units: [number, string][] = [
    [86400, 'd'],
    [3600, 'h'],
    [60, 'm'],
    [1, 's'],
  ];
  const at = units.findIndex(([size]) => s >= size);
  if (at < 0) return '0s';
  const [size, name] = units[at] as [number, string];
  const first = Math.floor(s / size);
  const next = units[at + 1];
  const second = next === undefined ? 0 : Math.floor((s - first * size) / next[0]);
  return next === undefined || second === 0
    ? `${first}${name}`
    : `${first}${name} ${second}${next[1]}`;
}

/** "expires in 1h 59m" or "expired 3h ago", from `exp` and now (both in seconds). */
export function expiryWords(exp: number, nowSeconds: number): string {
  return exp > nowSeconds
    ? `expires in ${formatSpan(exp - nowSeconds)}`
    : `expired ${formatSpan(nowSeconds - exp)} ago`;
}

/** `exp` as a UTC time: `2026-11-30T08:00:00Z`. */
export function utcTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.000Z$/, 'Z');
}

/**
 * `--origin`: the `iss` claim, the origin the dashboard is embedded in, with its trailing slash
 * (as the vendor writes it). An origin is scheme, host and port: a path, query, fragment or user
 * name is refused rather than cut off, since the page that embeds would not match it. https only,
 * except on this machine (a developer's `http://localhost:3000`).
 */
export function parseOrigin(text: string, flag = '--origin'): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new UsageError(
      message`${flag} expects an origin such as https://app.example.com, got "${text}"`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(message`${flag} must be an https:// origin, got "${text}"`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new UsageError(
      message`${flag} must use https:// (http:// only for this machine), got "${text}"`,
      {
        hint: `use ${flag} https://${url.host}`,
      },
    );
  }
  if (
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== '' ||
    url.pathname !== '/'
  ) {
    throw new UsageError(
      message`${flag} is an origin (scheme, host and port), not a page: "${text}"`,
      { hint: `use ${flag} ${url.origin}` },
    );
  }
  return `${url.origin}/`;
}

/** The key id a JWT header carries: printable ASCII, as it goes into a JSON header and messages. */
export function checkKeyId(kid: string, what: string): string {
  if (kid === '' || !/^[\x21-\x7e]+$/.test(kid)) {
    throw new UsageError(message`${what} must be printable ASCII without spaces, got "${kid}"`);
  }
  return kid;
}

/**
 * The secret's bytes as the A256GCM key, as the vendor's examples use them: exactly 32 bytes, or
 * a usage error saying how many there are. No decoding is guessed (hex, base64): the vendor does
 * not document one, and a wrong guess would make a key that decrypts nothing.
 */
export function embedKey(secret: string, source: string): Uint8Array {
  const key = new TextEncoder().encode(secret);
  if (key.length !== EMBED_KEY_BYTES) {
    throw new UsageError(
      `the embed secret (${source}) is ${key.length} bytes; an A256GCM key is exactly ${EMBED_KEY_BYTES}`,
      {
        hint: "copy the secret again from the vendor's settings, whole and without quotes; its characters are the key's bytes",
      },
    );
  }
  return key;
}

/** `KID:SECRET` (`ugs serve --embed-secret`): split at the first colon, the secret checked. */
export function parseEmbedSecretSpec(text: string, flag = '--embed-secret'): EmbedSecret {
  const at = text.indexOf(':');
  if (at <= 0) {
    throw new UsageError(`${flag} expects KID:SECRET (the key id, a colon, the 32-byte secret)`);
  }
  const kid = checkKeyId(text.slice(0, at), `the key id of ${flag}`);
  const secret = text.slice(at + 1);
  embedKey(secret, `${flag} ${kid}`);
  return { kid, secret };
}

/** What a compact token is, read without any key. */
export type CompactToken =
  | { kind: 'jwe'; header: Record<string, unknown> }
  | { kind: 'jws'; header: Record<string, unknown> }
  | { kind: 'garbage'; why: string };

/** A base64url segment's JSON object, or undefined. */
function jsonSegment(segment: string): Record<string, unknown> | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(segment)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Which kind of token `text` is: a JWE has 5 dot-separated parts and a header with `enc`; a JWS
 * (a signed JWT, as most JWTs are, and not what an embedded dashboard takes) 3 and `alg`.
 */
export function readCompact(text: string): CompactToken {
  const parts = text.split('.');
  const header = jsonSegment(parts[0] ?? '');
  if (parts.length === 5 && header !== undefined && typeof header.enc === 'string') {
    return { kind: 'jwe', header };
  }
  if (parts.length === 3 && header !== undefined && typeof header.alg === 'string') {
    return { kind: 'jws', header };
  }
  if (header === undefined) {
    return { kind: 'garbage', why: 'its first part is not a base64url JSON header' };
  }
  return {
    kind: 'garbage',
    why: `it has ${parts.length} dot-separated part${parts.length === 1 ? '' : 's'}; a compact JWE has 5`,
  };
}
