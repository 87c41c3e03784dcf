/**
 * The dialect of the service: how the same two operations look on the wire. `interface` is the
 * interface ugs was written from (`GET`/`POST` on one path, `Authorization: Token`); `explo` is
 * the vendor's published End User Group API (a `POST` path per operation, each ending in `/`,
 * and `Explo-Authorization: Token`); `customer` is the vendor's Customer API (the same host and
 * header, its own paths and field names). Each operation says its method and path per dialect
 * (`operations/<op>/operation.ts`); this module holds what is the dialect's own: its name, the
 * header that carries the API token, its default base URL and its rate limit.
 */
import { UsageError } from '../errors.js';
import { message } from '../text/message.js';

export type Dialect = 'interface' | 'explo' | 'customer';

export const DIALECTS: readonly Dialect[] = ['interface', 'explo', 'customer'];

/**
 * The vendor's dialects (`explo`, `customer`): its host, its `Explo-Authorization` header, its
 * fixed paths (no `--api-path`) and its published rate limit.
 */
export function isVendorDialect(dialect: Dialect | undefined): boolean {
  return dialect === 'explo' || dialect === 'customer';
}

export const DEFAULT_DIALECT: Dialect = 'interface';

/** Where a run's dialect came from: `status`, `doctor` and `profile list` say it. */
export type DialectSource = 'flag' | 'env' | 'profile' | 'default';

/** The vendor's hosted service: `login --dialect explo` offers it when no --base-url is given. */
export const EXPLO_BASE_URL = 'https://api.explo.co';

/**
 * The vendor's published limit: 180 requests per minute per client IP, across all endpoints. A
 * bulk run with the `explo` dialect is paced to it unless `--rate` says otherwise.
 */
export const EXPLO_RATE = { count: 180, windowMs: 60_000 } as const;

/**
 * How long a bulk run with the `explo` dialect waits after a 429 that names no Retry-After: the
 * vendor's window is a minute, and its own example sleeps 60 s.
 */
export const EXPLO_THROTTLE_WAIT_MS = 60_000;

/**
 * Said with an explo-dialect answer that suggests a wrong address: the vendor's paths are fixed
 * (no `--api-path`), and a service that speaks the interface is reached with the other dialect.
 */
export const NOT_THE_VENDOR_API =
  "if the service speaks the interface (GET/POST /api/user) rather than the vendor's API, use --dialect interface";

/** The request header (lower case, as undici sends it) that carries `Token <API token>`. */
export function tokenHeader(dialect: Dialect | undefined): string {
  return isVendorDialect(dialect) ? 'explo-authorization' : 'authorization';
}

export function isDialect(value: unknown): value is Dialect {
  return value === 'interface' || value === 'explo' || value === 'customer';
}

/** `--dialect` or `UGS_DIALECT`: one of the names, case and surrounding spaces forgiven. */
export function parseDialect(text: string, source: string): Dialect {
  const value = text.trim().toLowerCase();
  if (isDialect(value)) return value;
  throw new UsageError(message`${source} must be interface, explo or customer, got "${text}"`, {
    hint: "interface: the User Group Service interface (GET/POST /api/user); explo: the vendor's published End User Group API; customer: the vendor's Customer API",
  });
}

/**
 * A profile's dialect as saved by `ugs login` (absent: `interface`). For `ugs profile list` and
 * anything else that shows a profile without resolving a whole run.
 */
export function profileDialect(profile: { dialect?: string | undefined } | undefined): Dialect {
  return isDialect(profile?.dialect) ? profile.dialect : DEFAULT_DIALECT;
}
