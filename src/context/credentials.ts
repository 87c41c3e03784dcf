/**
 * Which API token and base URL a command uses, and where each came from: flag over environment
 * over profile (the API token never comes from a flag). A profile's token lives in the config
 * file, or in the OS credential store after `ugs login --secure-storage`; only the latter loads
 * the native credential-store module. Errors about a missing or unusable token name its source
 * and the `ugs login` command for the profile in use.
 */
import type { Profile } from '../config/config.js';
import { CredentialStoreError, credentialAccounts } from '../config/secure-store.js';
import { AuthError, ConfigError, UsageError } from '../errors.js';
import { parseBaseUrl } from '../input/parse.js';
import {
  DEFAULT_DIALECT,
  type Dialect,
  type DialectSource,
  isDialect,
  isVendorDialect,
} from '../service/dialect.js';
import { loginCommandFor, type Target, type TokenSource, USER_PATH } from '../service/target.js';
import { message } from '../text/message.js';
import type { Deps } from './factory.js';
import { parseApiPath, type Settings } from './settings.js';

/** Where the API token lives: what `status` shows and what `logout` removes. */
export type TokenLocation = 'environment' | 'config file' | 'credential store';

export interface ApiToken {
  value: string;
  source: TokenSource;
}

export interface Credentials {
  profileName: string;
  profile: Profile | undefined;
  tokenLocation: TokenLocation | undefined;
  /** The token when it is at hand without the credential store; see readApiToken. */
  apiToken: ApiToken | undefined;
  baseUrl: { value: string; source: 'flag' | 'env' | 'profile' } | undefined;
}

export interface ApiPathSetting {
  value: string;
  source: 'flag' | 'env' | 'profile' | 'default';
}

/** Flag over environment over profile. The API token never comes from a flag. */
export function resolveCredentials(deps: Deps): Credentials {
  const profileName = deps.settings.profile;
  const profile = deps.config.readProfile(profileName);
  const envToken = deps.io.env.UGS_API_TOKEN;
  let apiToken: ApiToken | undefined;
  let tokenLocation: TokenLocation | undefined;
  if (envToken !== undefined && envToken !== '') {
    apiToken = { value: envToken, source: 'env UGS_API_TOKEN' };
    tokenLocation = 'environment';
  } else if (profile?.tokenStore === 'keyring') {
    // Read on demand (readApiToken): loading the store costs a native module and a D-Bus call.
    tokenLocation = 'credential store';
  } else if (profile?.apiToken) {
    apiToken = { value: profile.apiToken, source: 'profile' };
    tokenLocation = 'config file';
  }
  const { baseUrl, baseUrlSource } = deps.settings;
  const resolvedBaseUrl =
    baseUrl !== undefined && baseUrlSource !== undefined
      ? { value: baseUrl, source: baseUrlSource }
      : profile?.baseUrl
        ? { value: profile.baseUrl, source: 'profile' as const }
        : undefined;
  return { profileName, profile, tokenLocation, apiToken, baseUrl: resolvedBaseUrl };
}

/**
 * The API token itself: `credentials.apiToken`, or the one the OS credential store holds for the
 * profile. A store that cannot be reached is a ConfigError (exit 2): the user must fix the setup,
 * and a network or auth code would send them looking in the wrong place.
 */
export async function readApiToken(
  deps: Deps,
  credentials: Credentials,
): Promise<ApiToken | undefined> {
  if (credentials.tokenLocation !== 'credential store') return credentials.apiToken;
  const { profileName } = credentials;
  const store = deps.credentialStore;
  let value: string | undefined;
  try {
    for (const account of credentialAccounts(profileName, deps.config.path)) {
      value = await store.get(account);
      if (value !== undefined && value !== '') break;
    }
  } catch (error) {
    if (!(error instanceof CredentialStoreError)) throw error;
    throw new ConfigError(
      message`cannot read the API token of profile "${profileName}" from the ${store.name}: ${error.reason}`,
      { hint: storeUnreachableHint(profileName), cause: error },
    );
  }
  if (value === undefined || value === '') {
    throw new AuthError(
      message`the ${store.name} holds no API token for profile "${profileName}" (it was removed there)`,
      {
        hint: `run \`${loginCommandFor(profileName)} --secure-storage\` to save it again, or set UGS_API_TOKEN`,
      },
    );
  }
  deps.tracer.addSecret(value);
  return { value, source: 'profile' };
}

/** What to do when the credential store is out of reach (a headless session, no keyring). */
function storeUnreachableHint(profile: string): string {
  const login = loginCommandFor(profile);
  return `run \`${login} --secure-storage\` again where the credential store is reachable, \`${login}\` to keep the token in the config file instead, or set UGS_API_TOKEN`;
}

/** `--api-path` over UGS_API_PATH over the profile's over `/api/user`, as the base URL goes. */
export function resolveApiPath(settings: Settings, credentials: Credentials): ApiPathSetting {
  const { apiPath, apiPathSource } = settings;
  if (apiPath !== undefined && apiPathSource !== undefined) {
    return { value: apiPath, source: apiPathSource };
  }
  const saved = credentials.profile?.apiPath;
  if (saved) {
    return {
      value: parseApiPath(saved, message`apiPath of profile "${credentials.profileName}"`),
      source: 'profile',
    };
  }
  return { value: USER_PATH, source: 'default' };
}

export interface DialectSetting {
  value: Dialect;
  source: DialectSource;
}

/** `--dialect` over UGS_DIALECT over the profile's (saved by login) over `interface`. */
export function resolveDialect(
  settings: Settings,
  credentials: Pick<Credentials, 'profile'>,
): DialectSetting {
  if (settings.dialect !== undefined) {
    return { value: settings.dialect, source: settings.dialectSource ?? 'flag' };
  }
  const saved = credentials.profile?.dialect;
  if (isDialect(saved)) return { value: saved, source: 'profile' };
  return { value: DEFAULT_DIALECT, source: 'default' };
}

/**
 * `--api-path` (or UGS_API_PATH) names the one endpoint of the `interface` dialect; the vendor's
 * dialects (`explo`, `customer`) have a fixed path per operation, so a path given for it would be silently ignored:
 * refused instead. A path saved in the profile by an earlier login is simply not used.
 */
export function checkApiPathForDialect(settings: Settings, dialect: DialectSetting): void {
  if (!isVendorDialect(dialect.value) || settings.apiPath === undefined) return;
  const name = dialect.value;
  const given = settings.apiPathSource === 'env' ? 'UGS_API_PATH' : '--api-path';
  const chosen =
    dialect.source === 'flag'
      ? `--dialect ${name}`
      : dialect.source === 'env'
        ? `UGS_DIALECT=${name}`
        : `the ${name} dialect of the profile`;
  const paths =
    name === 'customer'
      ? '/api/create_customer/, /api/get_customer/, /api/refresh_customer_token/'
      : '/api/create_user_group/, /api/refresh_user_group_token/';
  throw new UsageError(`${given} applies to the interface dialect only, not with ${chosen}`, {
    hint: `the ${name} dialect uses the vendor's paths (${paths}): ${settings.apiPathSource === 'env' ? 'unset UGS_API_PATH' : 'drop --api-path'}, or pass --dialect interface`,
  });
}

export interface CaFileSetting {
  value: string;
  source: 'flag' | 'env' | 'profile';
}

/**
 * `--ca-file` over UGS_CA_FILE over the profile's (saved by `login --ca-file` as an absolute
 * path, so it works from any directory); undefined: the public roots alone.
 */
export function resolveCaFile(
  settings: Settings,
  credentials: Pick<Credentials, 'profile'>,
): CaFileSetting | undefined {
  if (settings.caFile !== undefined) {
    return { value: settings.caFile, source: settings.caFileSource ?? 'flag' };
  }
  const saved = credentials.profile?.caFile;
  return saved ? { value: saved, source: 'profile' } : undefined;
}

/** Where to send requests, or a typed error saying what is missing and how to fix it. */
export async function resolveTarget(deps: Deps): Promise<Target> {
  const credentials = resolveCredentials(deps);
  let apiToken: ApiToken | undefined;
  try {
    apiToken = await readApiToken(deps, credentials);
  } finally {
    // After the read, so that a token from the credential store is traced like one from the file;
    // a read that failed still leaves the context in the trace, before the error.
    traceContext(deps, { ...credentials, apiToken });
  }
  // A usage error comes before a missing token: it is what the user must fix first.
  const dialect = resolveDialect(deps.settings, credentials);
  checkApiPathForDialect(deps.settings, dialect);
  const loginHint = loginCommandFor(deps.settings.profile);
  if (apiToken === undefined) {
    throw new AuthError(message`no API token for profile "${credentials.profileName}"`, {
      hint: `run \`${loginHint}\`, or set UGS_API_TOKEN`,
    });
  }
  if (credentials.baseUrl === undefined) {
    throw new UsageError(message`no base URL for profile "${credentials.profileName}"`, {
      hint: `pass --base-url <url>, set UGS_BASE_URL, or run \`${loginHint}\``,
    });
  }
  const { value: token, source: tokenSource } = apiToken;
  const problem = apiTokenProblem(token);
  if (problem !== undefined) {
    // Never sent: a header undici refuses, or a token the service cannot have issued.
    throw new AuthError(
      tokenSource === 'profile'
        ? message`the API token saved in profile "${credentials.profileName}" ${problem}`
        : `UGS_API_TOKEN ${problem}: it is not a valid API token`,
      {
        hint:
          tokenSource === 'profile'
            ? `run \`${loginHint}\` to save the token again`
            : 'set UGS_API_TOKEN to the token alone, without spaces or line breaks',
      },
    );
  }
  return {
    baseUrl: parseBaseUrl(credentials.baseUrl.value, { insecureHttp: deps.settings.insecureHttp }),
    apiToken: token,
    apiPath: resolveApiPath(deps.settings, credentials).value,
    dialect: dialect.value,
    profile: credentials.profileName,
    tokenSource,
    ...withCaFile(resolveCaFile(deps.settings, credentials)),
  };
}

/** The base URL of a dry run that knows none (never contacted; see dryRunTarget). */
export const NO_BASE_URL = 'http://dry-run.invalid/';

/**
 * The target of a dry run (`--dry-run`): the dialect and API path a real run would use (they
 * decide each request's body and path), and no API token, which a run that sends nothing does
 * not need: a dry run works without `ugs login` and without a profile. The base URL is the one a
 * real run would use, to say where the rows would go; without one (or one a real run would
 * refuse, which that run will say), NO_BASE_URL.
 */
export function dryRunTarget(deps: Deps): Target {
  const credentials = resolveCredentials(deps);
  const dialect = resolveDialect(deps.settings, credentials);
  checkApiPathForDialect(deps.settings, dialect);
  let baseUrl = new URL(NO_BASE_URL);
  if (credentials.baseUrl !== undefined) {
    try {
      baseUrl = parseBaseUrl(credentials.baseUrl.value, {
        insecureHttp: deps.settings.insecureHttp,
      });
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
    }
  }
  return {
    // Never contacted: the dry run's client hands each request to its capture.
    baseUrl,
    apiToken: '',
    apiPath: resolveApiPath(deps.settings, credentials).value,
    dialect: dialect.value,
    profile: credentials.profileName,
  };
}

/** The `caFile` member of a Target, present only when a CA file is in use. */
export function withCaFile(caFile: CaFileSetting | undefined): { caFile?: string } {
  return caFile === undefined ? {} : { caFile: caFile.value };
}

/** The first lines of a `--debug` trace: the settings in use and where each came from. */
function traceContext(deps: Deps, credentials: Credentials): void {
  let apiPath: ApiPathSetting;
  try {
    apiPath = resolveApiPath(deps.settings, credentials);
  } catch {
    apiPath = { value: credentials.profile?.apiPath ?? '', source: 'profile' };
  }
  deps.tracer.context({
    profile: { value: credentials.profileName, source: deps.settings.profileSource ?? 'default' },
    baseUrl: credentials.baseUrl,
    apiPath,
    apiToken: credentials.apiToken,
    dialect: resolveDialect(deps.settings, credentials),
  });
}

/**
 * An API token goes into the `Authorization` header: only visible ASCII can. A newline, a space
 * or a non-ASCII letter (a paste gone wrong) is refused where it is read, naming `source`, and
 * never sent; undici would refuse the header anyway, after the request had been counted as sent.
 * The token itself is never quoted, only the position and kind of the first bad character.
 */
export function apiTokenProblem(token: string): string | undefined {
  for (let i = 0; i < token.length; i++) {
    const code = token.charCodeAt(i);
    if (code > 0x20 && code < 0x7f) continue;
    const what =
      code === 0x0a || code === 0x0d
        ? 'a line break'
        : code === 0x20 || code === 0x09
          ? 'a space or tab'
          : code < 0x20 || (code >= 0x7f && code <= 0x9f)
            ? 'a control character'
            : /\s/.test(token[i] as string)
              ? 'a space character'
              : 'a non-ASCII character';
    return `contains ${what} at position ${i + 1} of ${token.length}`;
  }
  return token === '' ? 'is empty' : undefined;
}
