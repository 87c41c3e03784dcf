/**
 * An operation's route in the emulator (`ugs serve`): what the service does with its request.
 * The emulator builds its table from the operations (`Operation.route`) and their wire in the
 * dialect it serves (`wireOf`): one route per method on the one API path with `interface`, one
 * path per operation with `explo`; that table also gives each path's `Allow` header. Routes live in their
 * operation's folder and are loaded by `import()`, so only the emulator ever runs them.
 */
import type { EmbedSecret } from '../jwt/embed.js';
import type { Dialect } from '../service/dialect.js';
import type { Environment } from './auth.js';
import type { Store } from './store.js';

export interface RouteContext {
  store: Store;
  /** The environment the API token authenticated. */
  environment: Environment;
  /** The wire format served: the `explo` answers carry the vendor's extra fields. */
  dialect: Dialect;
  /** The request body (possibly empty), already checked to be JSON when not empty. */
  text: string;
  /** The URL's query parameters (a GET's, such as a list's page). */
  query: URLSearchParams;
  /** Records that the store changed in memory. */
  markChanged(): void;
  /** Resolves once every change so far is durable; a 500 when it cannot be. */
  durable(): Promise<void>;
  /** `ugs serve --embed-secret KID:SECRET`: the keys embed JWTs are minted and checked with. */
  embedSecrets: readonly EmbedSecret[];
}

/** What a route of the emulator alone is given: no API token was asked, so no environment. */
export type PublicRouteContext = Omit<RouteContext, 'environment'>;

export interface RouteAnswer {
  status: number;
  body: Record<string, unknown>;
  /** What the request came to, for the access log (`created`, `rotated`, ...). */
  outcome: string;
  /** The user group's `provided_id`. */
  id: string;
  /**
   * A line `ugs serve` prints even without `--debug` (what an embed JWT it was shown came to);
   * never a whole token or JWT.
   */
  notice?: string;
}

export interface Route {
  handle(context: RouteContext): Promise<RouteAnswer>;
}

/** A route of the emulator alone, answered without an API token (see `EmulatorOnlyRoute`). */
export interface PublicRoute {
  handle(context: PublicRouteContext): Promise<RouteAnswer>;
}
