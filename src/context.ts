/**
 * What commands depend on, made from the global options once per run. Nothing here does work
 * until asked: the config file is read when a command reads it, and the HTTP stack (undici) is
 * imported only when a command connects.
 */
import { type ConfigStore, configDir, FileConfigStore, type Profile } from './config.js';
import { StreamTracer, silentTracer, type Tracer } from './debug.js';
import { AuthError, UgsError, UsageError } from './errors.js';
import { createHttpClient, type HttpClient } from './http.js';
import { type Env, type IO, writeLine } from './io.js';
import { parseBaseUrl, parseTimeoutSeconds } from './parse.js';
import { InquirerPrompter, type Prompter } from './prompter.js';
import { type OutputFormat, renderJson } from './render.js';
import {
  apiTokenProblem,
  HttpServiceClient,
  loginCommandFor,
  parseApiPath,
  type ServiceClient,
  type Target,
  type TokenSource,
  USER_PATH,
} from './service.js';
import { userAgent } from './version.js';

/** The global options, checked. */
export interface Settings {
  profile: string;
  /** `--base-url` or `UGS_BASE_URL` (commander applies flag over env). */
  baseUrl: string | undefined;
  baseUrlSource: 'flag' | 'env' | undefined;
  /** `--api-path` or `UGS_API_PATH`, checked; the profile's and the default come later. */
  apiPath?: string | undefined;
  apiPathSource?: 'flag' | 'env' | undefined;
  timeoutMs: number;
  debug: boolean;
  insecureHttp: boolean;
  caFile: string | undefined;
}

export interface Deps {
  io: IO;
  settings: Settings;
  config: ConfigStore;
  prompter: Prompter;
  tracer: Tracer;
  /** A client for the service at `target`; the HTTP stack is loaded on the first call. */
  connect(target: Target): Promise<ServiceClient>;
}

export interface SystemInfo {
  platform: NodeJS.Platform;
  homedir: string;
  nodeVersion: string;
  /** Resolves with a signal's name when the process is asked to stop (for `ugs serve`). */
  waitForShutdown(): Promise<string>;
}

/** Raw global options as commander parsed them. */
export interface GlobalFlags {
  profile?: string;
  baseUrl?: string;
  apiPath?: string;
  timeout?: string;
  input?: boolean;
  debug?: boolean;
  color?: boolean;
  insecureHttp?: boolean;
  caFile?: string;
}

/** Flags over environment variables over defaults; the profile's values come later. */
export function parseSettings(flags: GlobalFlags, env: Env): Settings {
  const profile = flags.profile ?? nonEmpty(env.UGS_PROFILE) ?? 'default';
  if (profile.trim() === '') throw new UsageError('--profile needs a name');
  const envBaseUrl = nonEmpty(env.UGS_BASE_URL);
  const envApiPath = nonEmpty(env.UGS_API_PATH);
  return {
    profile,
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
    debug: flags.debug === true,
    insecureHttp: flags.insecureHttp === true,
    caFile: nonEmpty(flags.caFile) ?? nonEmpty(env.UGS_CA_FILE),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** The real dependencies. `clients` collects HTTP clients so `main` can close their sockets. */
export function createDeps(
  io: IO,
  settings: Settings,
  system: SystemInfo,
  clients: HttpClient[],
): Deps {
  const tracer = settings.debug ? new StreamTracer(io.stderr) : silentTracer;
  return {
    io,
    settings,
    config: new FileConfigStore(configDir(io.env, system.platform, system.homedir), {
      warn: (m) => io.stderr.write(`${m}\n`),
    }),
    prompter: new InquirerPrompter(io),
    tracer,
    async connect(target) {
      tracer.addSecret(target.apiToken);
      const http = await createHttpClient({
        timeoutMs: settings.timeoutMs,
        env: io.env,
        caFile: settings.caFile,
        tracer,
      });
      clients.push(http);
      return new HttpServiceClient(http, target, userAgent(system.nodeVersion), {
        // stderr, so a note goes with --json and --field too without touching their stdout.
        notify: (message) => writeLine(io.stderr, `note: ${message}`),
      });
    },
  };
}

export type { TokenSource };

export interface Credentials {
  profileName: string;
  profile: Profile | undefined;
  apiToken: { value: string; source: TokenSource } | undefined;
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
  const apiToken =
    envToken !== undefined && envToken !== ''
      ? { value: envToken, source: 'env UGS_API_TOKEN' as const }
      : profile?.apiToken
        ? { value: profile.apiToken, source: 'profile' as const }
        : undefined;
  const { baseUrl, baseUrlSource } = deps.settings;
  const resolvedBaseUrl =
    baseUrl !== undefined && baseUrlSource !== undefined
      ? { value: baseUrl, source: baseUrlSource }
      : profile?.baseUrl
        ? { value: profile.baseUrl, source: 'profile' as const }
        : undefined;
  return { profileName, profile, apiToken, baseUrl: resolvedBaseUrl };
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
      value: parseApiPath(saved, `apiPath of profile "${credentials.profileName}"`),
      source: 'profile',
    };
  }
  return { value: USER_PATH, source: 'default' };
}

/** Where to send requests, or a typed error saying what is missing and how to fix it. */
export function resolveTarget(deps: Deps): Target {
  const credentials = resolveCredentials(deps);
  const loginHint = loginCommandFor(deps.settings.profile);
  if (credentials.apiToken === undefined) {
    throw new AuthError(`no API token for profile "${credentials.profileName}"`, {
      hint: `run \`${loginHint}\`, or set UGS_API_TOKEN`,
    });
  }
  if (credentials.baseUrl === undefined) {
    throw new UsageError(`no base URL for profile "${credentials.profileName}"`, {
      hint: `pass --base-url <url>, set UGS_BASE_URL, or run \`${loginHint}\``,
    });
  }
  const { value: apiToken, source: tokenSource } = credentials.apiToken;
  const problem = apiTokenProblem(apiToken);
  if (problem !== undefined) {
    // Never sent: a header undici refuses, or a token the service cannot have issued.
    throw new AuthError(
      tokenSource === 'profile'
        ? `the API token saved in profile "${credentials.profileName}" ${problem}`
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
    apiToken,
    apiPath: resolveApiPath(deps.settings, credentials).value,
    profile: credentials.profileName,
    tokenSource,
  };
}

export { loginCommandFor };

/**
 * Runs a service call; with `--json`, a JSON error body from the service is also printed on
 * stdout, so scripts can read the service's own words.
 */
export async function callService<T>(
  deps: Deps,
  format: OutputFormat,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (format.kind === 'json' && error instanceof UgsError && error.body !== undefined) {
      writeLine(deps.io.stdout, renderJson(error.body));
    }
    throw error;
  }
}

/** `--json` and `--field` are two ways of asking for machine output; both at once is a mistake. */
export function outputFormat(flags: { json?: boolean; field?: string }): OutputFormat {
  if (flags.json && flags.field !== undefined) {
    throw new UsageError('--json and --field cannot be used together');
  }
  if (flags.json) return { kind: 'json' };
  if (flags.field !== undefined) {
    if (flags.field === '') throw new UsageError('--field needs a field name, e.g. --field token');
    return { kind: 'field', name: flags.field };
  }
  return { kind: 'table' };
}
