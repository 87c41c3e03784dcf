/**
 * Where a command that changes data acts, and the one gate in front of a production profile.
 *
 * A profile marked production (`ugs login --production`, `ugs profile protect`) is never the
 * default, and every command that changes data on it asks first at a terminal, naming the profile
 * and the base URL, default no, whatever flags were given; without a terminal it needs `--yes`
 * (exit 2, nothing sent). `get`, `update` and the bulk runs call `confirmOnProduction` once the
 * target and what they will send are known; `rotate` and `delete` ask their own question (or need
 * `--yes`) on every profile, and that question names the place, so they need no second one.
 *
 * The place ("on prod (https://...)") is said in headlines and questions whenever the profile
 * could be mistaken for another: more than one profile saved, a profile not named `default`, or
 * a production profile. A single `default` profile keeps the short headline it always had.
 */
import { CancelledError, ConfigError, UsageError } from '../errors.js';
import { formatBaseUrl, redactUrl, shellWord } from '../input/parse.js';
import { canPrompt } from '../platform/io.js';
import type { Target } from '../service/target.js';
import { message } from '../text/message.js';
import type { Deps } from './factory.js';

/** Where a run acts: its profile and base URL, and whether that is worth saying. */
export interface Place {
  profile: string;
  /** As shown: credentials and query values masked. */
  baseUrl: string;
  production: boolean;
  /** Say the place: several profiles, or not `default`, or production. */
  named: boolean;
}

/** The place of `target`; a config file that cannot be read counts as no saved profile. */
export function placeOf(
  deps: Pick<Deps, 'config' | 'settings'>,
  target: Pick<Target, 'baseUrl' | 'profile'>,
): Place {
  const profile = target.profile ?? deps.settings.profile;
  let saved = 0;
  let production = false;
  try {
    const profiles = deps.config.listProfiles();
    saved = Object.keys(profiles).length;
    production = Object.hasOwn(profiles, profile) && profiles[profile]?.production === true;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
  }
  return {
    profile,
    baseUrl: redactUrl(formatBaseUrl(target.baseUrl)),
    production,
    named: production || saved > 1 || profile !== 'default',
  };
}

/** ` on prod (https://...)`, or '' where the place goes without saying. */
export function onPlace(place: Place): string {
  return place.named ? message` on ${place.profile} (${place.baseUrl})` : '';
}

export interface ProductionGate {
  /** `--yes` was given: no question. */
  yes: boolean;
  /** What the run does, lower case, for the question and the refusal: `update user group acme`. */
  action: string;
}

/**
 * On a production profile without `--yes` and without a terminal: exit 2 before anything is sent.
 * Elsewhere nothing. Bulk runs call it before reading their input, then `confirmOnProduction`.
 */
export function checkProductionYes(deps: Deps, target: Target, gate: ProductionGate): Place {
  const place = placeOf(deps, target);
  if (!place.production || gate.yes || canPrompt(deps.io, deps.settings.noInput)) return place;
  throw new UsageError(
    message`profile "${place.profile}" is a production profile: --yes is required to ${gate.action} when not running interactively; nothing was sent`,
    {
      hint: `add --yes to confirm that this run changes data on ${place.profile} (${place.baseUrl})`,
    },
  );
}

/**
 * On a production profile: asks "<Action> on production profile prod (https://...)?", default
 * no; a no sends nothing (exit 130). Without a terminal, `--yes` is required (checkProductionYes).
 */
export async function confirmOnProduction(
  deps: Deps,
  target: Target,
  gate: ProductionGate,
): Promise<void> {
  const place = checkProductionYes(deps, target, gate);
  if (!place.production || gate.yes) return;
  const action = gate.action.charAt(0).toUpperCase() + gate.action.slice(1);
  const confirmed = await deps.prompter.confirm(
    message`${action} on production profile ${place.profile} (${place.baseUrl})?`,
    { default: false },
  );
  if (!confirmed) {
    throw new CancelledError(message`not sent: nothing was changed on ${place.profile}`);
  }
}

/** `profile use` and friends: a production profile is named each time, never the default. */
export function productionNotDefault(name: string): UsageError {
  return new UsageError(
    message`profile "${name}" is a production profile and cannot be the default`,
    {
      hint: `pass -p ${shellWord(name)} to each command that should use it (\`ugs profile unprotect ${shellWord(name)}\` removes the mark)`,
    },
  );
}

/** The profile named `default` is used without naming it: it cannot be a production profile. */
export function defaultCannotBeProduction(): UsageError {
  return new UsageError(
    'the profile named "default" cannot be marked production: commands without --profile use it',
    {
      hint: 'save the production service under its own name: ugs login --profile prod --production',
    },
  );
}
