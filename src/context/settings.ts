/**
 * The global options, read once per run from commander's parsed flags and the injected
 * environment: flags over environment variables over defaults (the profile's values come later,
 * in credentials.ts). Everything below `main` takes its preferences from here.
 */
import { type Dialect, parseDialect } from '../dialect.js';
import { UsageError } from '../errors.js';
import { controlCharacters, type Env } from '../io.js';
import { parseTimeoutSeconds } from '../parse.js';

/** The endpoint both operations use when neither a flag, the environment nor the profile says. */
export const USER_PATH = '/api/user';

/** How the user wants ugs to behave; read even when the other global options are invalid. */
export interface Preferences {
  /** `--debug`: trace requests, print stacks. */
  debug: boolean;
  /** `--no-color`. */
  noColor: boolean;
  /** `--no-input`: never prompt, whatever the terminal. */
  noInput: boolean;
  /** `-q/--quiet`: no notes, warnings, spinner or progress on stderr; errors still. */
  quiet: boolean;
}

/** The global options, checked. */
export interface Settings extends Preferences {
  profile: string;
  /**
   * Where `profile` came from: `--profile`, UGS_PROFILE, the default chosen with `ugs profile
   * use` (`config`), or the built-in `default`.
   */
  profileSource?: ProfileSource;
  /** `--base-url` or `UGS_BASE_URL`, the flag winning. */
  baseUrl: string | undefined;
  baseUrlSource: 'flag' | 'env' | undefined;
  /** `--api-path` or `UGS_API_PATH`, checked; the profile's and the default come later. */
  apiPath?: string | undefined;
  apiPathSource?: 'flag' | 'env' | undefined;
  timeoutMs: number;
  insecureHttp: boolean;
  /** `--ca-file` or `UGS_CA_FILE`, the flag winning; the profile's (saved by login) comes later. */
  caFile: string | undefined;
  caFileSource?: 'flag' | 'env' | undefined;
  /** `--dialect` or `UGS_DIALECT`, checked; the profile's and the default come later. */
  dialect?: Dialect | undefined;
  dialectSource?: 'flag' | 'env' | undefined;
  /** `--no-history` or `UGS_NO_HISTORY=1`: no token history is written. */
  noHistory?: boolean;
  /** `--history-file` or `UGS_HISTORY_FILE` (the flag winning): a shared history file. */
  historyFile?: string | undefined;
}

export type ProfileSource = 'flag' | 'env' | 'config' | 'default';

/** Raw global options as commander parsed them. */
export interface GlobalFlags {
  profile?: string;
  baseUrl?: string;
  apiPath?: string;
  timeout?: string;
  input?: boolean;
  debug?: boolean;
  quiet?: boolean;
  color?: boolean;
  insecureHttp?: boolean;
  caFile?: string;
  dialect?: string;
  /** False for `--no-history`. */
  history?: boolean;
  historyFile?: string;
}

export function readPreferences(flags: GlobalFlags): Preferences {
  return {
    debug: flags.debug === true,
    noColor: flags.color === false,
    noInput: flags.input === false,
    quiet: flags.quiet === true,
  };
}

/**
 * The environment variables are applied here from the injected env, not by commander's .env(),
 * which reads process.env behind the caller's back. `savedDefault` reads the default profile
 * chosen with `ugs profile use`, only when neither the flag nor the environment names one.
 */
export function parseSettings(
  flags: GlobalFlags,
  env: Env,
  savedDefault: () => string | undefined = () => undefined,
): Settings {
  const named = flags.profile ?? nonEmpty(env.UGS_PROFILE);
  const saved = named === undefined ? nonEmpty(savedDefault()) : undefined;
  const profile = named ?? saved ?? 'default';
  if (profile.trim() === '') throw new UsageError('--profile needs a name');
  const envBaseUrl = nonEmpty(env.UGS_BASE_URL);
  const envApiPath = nonEmpty(env.UGS_API_PATH);
  const envDialect = nonEmpty(env.UGS_DIALECT);
  return {
    profile,
    profileSource:
      flags.profile !== undefined
        ? 'flag'
        : nonEmpty(env.UGS_PROFILE) !== undefined
          ? 'env'
          : saved !== undefined
            ? 'config'
            : 'default',
    baseUrl: flags.baseUrl ?? envBaseUrl,
    baseUrlSource:
      flags.baseUrl !== undefined ? 'flag' : envBaseUrl !== undefined ? 'env' : undefined,
    apiPath:
      flags.apiPath !== undefined
        ? parseApiPath(flags.apiPath, '--api-path')
        : envApiPath !== undefined
          ? parseApiPath(envApiPath, 'UGS_API_PATH')
          : undefined,
    apiPathSource:
      flags.apiPath !== undefined ? 'flag' : envApiPath !== undefined ? 'env' : undefined,
    timeoutMs: Math.round(parseTimeoutSeconds(flags.timeout ?? '30') * 1000),
    ...readPreferences(flags),
    insecureHttp: flags.insecureHttp === true,
    caFile: nonEmpty(flags.caFile) ?? nonEmpty(env.UGS_CA_FILE),
    caFileSource:
      nonEmpty(flags.caFile) !== undefined
        ? 'flag'
        : nonEmpty(env.UGS_CA_FILE) !== undefined
          ? 'env'
          : undefined,
    dialect:
      flags.dialect !== undefined
        ? parseDialect(flags.dialect, '--dialect')
        : envDialect !== undefined
          ? parseDialect(envDialect, 'UGS_DIALECT')
          : undefined,
    dialectSource:
      flags.dialect !== undefined ? 'flag' : envDialect !== undefined ? 'env' : undefined,
    noHistory: flags.history === false || isSet(env.UGS_NO_HISTORY),
    historyFile: nonEmpty(flags.historyFile) ?? nonEmpty(env.UGS_HISTORY_FILE),
  };
}

/** A switch in the environment: set to anything but empty, `0` or `false`. */
function isSet(value: string | undefined): boolean {
  return value !== undefined && !['', '0', 'false', 'no'].includes(value.trim().toLowerCase());
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/**
 * `--api-path`: an absolute path, kept as given (a trailing slash included). Query, fragment,
 * whitespace and control characters have no place in it; `.` segments, written plainly or as `%2e`,
 * would be resolved away.
 */
export function parseApiPath(text: string, source: string): string {
  const fail = (why: string) =>
    new UsageError(`${source} ${why}`, { hint: 'for example: --api-path /api/user/' });
  if (!text.startsWith('/')) throw fail('must start with "/"');
  if (/[\s?#\\]/.test(text) || controlCharacters().test(text)) {
    throw fail('cannot contain spaces, control characters, "\\", "?" or "#"');
  }
  // URL parsers (WHATWG, and so undici) read `%2e` as a dot in a segment: `/api/%2e%2e/admin`
  // would reach `/admin`. An encoded slash or backslash is refused too: a server that decodes it
  // before routing sees segments the user never wrote (`..%2fadmin`).
  if (/%(2f|5c)/i.test(text)) throw fail('cannot contain an encoded "/" or "\\" (%2F, %5C)');
  const dots = (segment: string) => segment.replace(/%2e/gi, '.');
  if (text.split('/').some((segment) => dots(segment) === '.' || dots(segment) === '..')) {
    throw fail('cannot contain "." or ".." segments, percent-encoded or not (%2e)');
  }
  return text;
}
