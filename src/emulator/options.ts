/**
 * How `ugs serve`'s emulator is started and what a started one offers: types only, so the
 * factory (`context/factory.ts`) can describe `startEmulator` without importing the emulator,
 * whose routes come from the operations registry, which imports the commands.
 */
import type { EmbedSecret } from '../jwt/embed.js';
import type { Dialect } from '../service/dialect.js';
import type { Rate } from '../service/rate.js';
import type { ApiToken } from './auth.js';
import type { FaultSpec } from './faults.js';

export interface EmulatorOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 4010; 0 picks a free port. */
  port?: number;
  /**
   * None given: one Customer and one Testing token are generated; with a dataFile they are
   * stored in it and reused on the next start, so a saved login keeps working. A given token
   * may be read-only (`readOnly: true`).
   */
  apiTokens?: ApiToken[];
  /** Where state is kept across restarts; without it the state lives in memory only. */
  dataFile?: string;
  faults?: FaultSpec[];
  /** Makes fault injection reproducible. */
  seed?: number;
  /** Delay of the 'slow' fault, default 2000. */
  slowMs?: number;
  /** Route `/api/user/` and redirect `/api/user` to it (Django's APPEND_SLASH); default false. */
  trailingSlash?: boolean;
  /** The wire format served (`ugs serve --dialect`); default `interface`. */
  dialect?: Dialect;
  /** `ugs serve --rate-limit`: DRF's sliding-window throttle per client IP; default none. */
  rateLimit?: Rate;
  /** One line per request: method, path, status, duration. Never contains a token. */
  log?: (line: string) => void;
  /**
   * `ugs serve --embed-secret KID:SECRET`: the keys generate_jwt/ mints with and the embed
   * check reads with; default none (generate_jwt/ then refuses with a 400 saying so).
   */
  embedSecrets?: EmbedSecret[];
  /**
   * Lines shown even without `--debug`: what each embed JWT the emulator was shown came to
   * (valid, expired, wrong key, wrong customer), never the JWT itself.
   */
  notice?: (line: string) => void;
}

export interface RunningEmulator {
  url: string;
  /** The tokens accepted, each with `readOnly: true` when it may only read. */
  apiTokens: ApiToken[];
  close(): Promise<void>;
}
