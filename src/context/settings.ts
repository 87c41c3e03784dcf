/**
 * The global options, read once per run from commander's parsed flags and the injected
 * environment: flags over environment variables over defaults (the profile's values come later,
 * in credentials.ts). Everything below `main` takes its preferences from here.
 */

import { UsageError } from '../errors.js';
import { parseTimeoutSeconds } from '../input/parse.js';
import { controlCharacters, type Env } from '../platform/io.js';
import { type Dialect, parseDialect } from '../service/dialect.js';
import { message } from '../text/message.js';

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
  // Checked in this order, so that the first of several mistakes is the one reported.
  const baseUrl = flagOrEnv(flags.baseUrl, '--base-url', env.UGS_BASE_URL, 'UGS_BASE_URL');
  const apiPath = flagOrEnv(
    flags.apiPath,
    '--api-path',
    env.UGS_API_PATH,
    'UGS_API_PATH',
    parseApiPath,
  );
  const timeoutMs = Math.round(parseTimeoutSeconds(flags.timeout ?? '30') * 1000);
  const caFile = flagOrEnv(nonEmpty(flags.caFile), '--ca-file', env.UGS_CA_FILE, 'UGS_CA_FILE');
  const dialect = flagOrEnv(
    flags.dialect,
    '--dialect',
    env.UGS_DIALECT,
    'UGS_DIALECT',
    parseDialect,
  );
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
    baseUrl: baseUrl.value,
    baseUrlSource: baseUrl.source,
    apiPath: apiPath.value,
    apiPathSource: apiPath.source,
    timeoutMs,
    ...readPreferences(flags),
    insecureHttp: flags.insecureHttp === true,
    caFile: caFile.value,
    caFileSource: caFile.source,
    dialect: dialect.value,
    dialectSource: dialect.source,
    noHistory: flags.history === false || switchedOn(env.UGS_NO_HISTORY),
    historyFile: nonEmpty(flags.historyFile) ?? nonEmpty(env.UGS_HISTORY_FILE),
  };
}

/**
 * A global option given by its flag or its environment variable (empty counts as unset there), the
 * flag winning; `parse` checks the text and names the one it came from in its error.
 */
function flagOrEnv<T = string>(
  flag: string | undefined,
  flagName: string,
  envValue: string | undefined,
  envName: string,
  parse: (text: string, source: string) => T = (text) => text as T,
): { value: T | undefined; source: 'flag' | 'env' | undefined } {
  if (flag !== undefined) return { value: parse(flag, flagName), source: 'flag' };
  const fromEnv = nonEmpty(envValue);
  if (fromEnv !== undefined) return { value: parse(fromEnv, envName), source: 'env' };
  return { value: undefined, source: undefined };
}

/** A switch in the environment: set to anything but empty, `0` or `false`. */
function switchedOn(value: string | undefined): boolean {
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
  // Git Bash (MSYS) rewrites an argument or variable that looks like a POSIX path into a path
  // under its install folder before a Windows program sees it: `/api/user` arrives as
  // `C:/Program Files/Git/api/user`. Nothing else sends a drive letter here.
  if (/^[A-Za-z]:[\\/]/.test(text)) {
    const guess = /[\\/]Git[\\/](.+)$/i.exec(text)?.[1]?.replace(/\\/g, '/');
    const meant = guess === undefined ? '/api/user' : `/${guess}`;
    throw new UsageError(
      message`${source} ${text} is a Windows path: Git Bash rewrote the API path ${meant} into one`,
      {
        hint: message`run it as MSYS_NO_PATHCONV=1 ugs ..., or write the path with two slashes (/${meant}), which Git Bash leaves as ${meant}`,
      },
    );
  }
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
