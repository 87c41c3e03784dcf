import type { Command } from 'commander';
import { type DepsFactory, newCommand } from '../cli/shared.js';
import {
  type ApiToken,
  type CaFileSetting,
  readApiToken,
  resolveApiPath,
  resolveCaFile,
  resolveCredentials,
  resolveDialect,
  type TokenLocation,
} from '../context/credentials.js';
import type { Deps } from '../context/factory.js';
import { defaultProfile } from '../context/profiles.js';
import type { ProfileSource } from '../context/settings.js';
import { AuthError, UgsError } from '../errors.js';
import { redactUrl } from '../input/parse.js';
import { printFieldTable, printJson } from '../output/results.js';
import { type Dialect, type DialectSource, isVendorDialect } from '../service/dialect.js';
import { loginCommandFor, type TokenSource } from '../service/target.js';
import { message } from '../text/message.js';
import { maskToken } from '../text/redact.js';

export interface StatusOptions {
  json: boolean;
}

export interface Status {
  profile: string;
  /** Why this profile: `--profile`, UGS_PROFILE, `ugs profile use` (config), or the built-in. */
  profileSource: ProfileSource;
  /** Marked production (`ugs profile protect`): commands that change data ask first. */
  production: boolean;
  /** The profile used without `--profile` and UGS_PROFILE: the one `ugs profile use` chose. */
  defaultProfile: string;
  defaultProfileSource: 'config' | 'default';
  baseUrl: string | null;
  baseUrlSource: 'flag' | 'env' | 'profile' | null;
  apiPath: string;
  apiPathSource: 'flag' | 'env' | 'profile' | 'default';
  /** The wire format: `interface`, or `explo` (the vendor's API, whose paths are its own). */
  dialect: Dialect;
  dialectSource: DialectSource;
  tokenSource: TokenSource | null;
  /** Where the token lives: the environment, the config file or the OS credential store. */
  tokenLocation: TokenLocation | null;
  token: string | null;
  configPath: string;
  /** Only when a CA file is in use (`--ca-file`, `UGS_CA_FILE`, or saved by `login --ca-file`). */
  caFile?: string;
  caFileSource?: CaFileSetting['source'];
}

export function statusCommand(makeDeps: DepsFactory, run = runStatus): Command {
  return newCommand('status', 'Show the profile, base URL and where the API token comes from', [
    'ugs status',
    'ugs status --profile staging --json',
  ])
    .option('--json', 'print the status as JSON on stdout')
    .action(async (flags: { json?: boolean }, cmd: Command) => {
      await run({ json: flags.json === true }, makeDeps(cmd));
    });
}

export async function collectStatus(deps: Deps): Promise<Status> {
  return (await collectStatusReport(deps)).status;
}

/**
 * The status, and why the token could not be read when it lives in a credential store out of
 * reach: the table still shows where it lives, then the command fails with that error.
 */
async function collectStatusReport(
  deps: Deps,
): Promise<{ status: Status; tokenError: UgsError | undefined }> {
  const credentials = resolveCredentials(deps);
  let apiToken: ApiToken | undefined;
  let tokenError: UgsError | undefined;
  try {
    apiToken = await readApiToken(deps, credentials);
  } catch (error) {
    if (!(error instanceof UgsError)) throw error;
    tokenError = error;
  }
  const located = credentials.tokenLocation !== undefined;
  const fallback = defaultProfile(deps);
  const apiPath = resolveApiPath(deps.settings, credentials);
  const dialect = resolveDialect(deps.settings, credentials);
  const caFile = resolveCaFile(deps.settings, credentials);
  const status: Status = {
    profile: credentials.profileName,
    profileSource: deps.settings.profileSource ?? 'default',
    production: credentials.profile?.production === true,
    defaultProfile: fallback.name,
    defaultProfileSource: fallback.source,
    // A base URL with `user:password@` or a query is refused before any request, but status shows
    // whatever was given: shown as every URL is (redactUrl), in the table and in --json alike.
    baseUrl: credentials.baseUrl === undefined ? null : redactUrl(credentials.baseUrl.value),
    baseUrlSource: credentials.baseUrl?.source ?? null,
    apiPath: apiPath.value,
    apiPathSource: apiPath.source,
    dialect: dialect.value,
    dialectSource: dialect.source,
    tokenSource: apiToken?.source ?? (located ? 'profile' : null),
    tokenLocation: credentials.tokenLocation ?? null,
    token: apiToken ? maskToken(apiToken.value) : null,
    configPath: deps.config.path,
    ...(caFile && { caFile: caFile.value, caFileSource: caFile.source }),
  };
  return { status, tokenError };
}

export async function runStatus(opts: StatusOptions, deps: Deps): Promise<void> {
  const { status, tokenError } = await collectStatusReport(deps);
  if (opts.json) {
    printJson(deps.output, status);
  } else {
    await printFieldTable(deps.output, [
      [
        'profile',
        `${status.profile} (${PROFILE_SOURCES[status.profileSource]})${status.production ? ', production: commands that change data ask first' : ''}`,
      ],
      [
        'default profile',
        status.defaultProfileSource === 'config'
          ? `${status.defaultProfile} (set by ugs profile use)`
          : `${status.defaultProfile} (none set with ugs profile use)`,
      ],
      ['base URL', status.baseUrl ? `${status.baseUrl} (${status.baseUrlSource})` : null],
      ['dialect', `${status.dialect} (${status.dialectSource})`],
      // The vendor's dialects have a path per operation (its own); --api-path does not apply.
      [
        'API path',
        isVendorDialect(status.dialect)
          ? `the vendor's (${status.dialect} dialect)`
          : `${status.apiPath} (${status.apiPathSource})`,
      ],
      ...(status.caFile === undefined
        ? []
        : [['CA file', `${status.caFile} (${status.caFileSource})`] as [string, string]]),
      ['token', status.token],
      ['token source', status.tokenSource],
      ['token stored in', tokenLocationText(status, deps.credentialStore.name)],
      ['config file', status.configPath],
    ]);
  }
  if (tokenError !== undefined) throw tokenError;
  if (status.tokenSource === null) {
    throw new AuthError(message`no API token for profile "${status.profile}"`, {
      hint: `run \`${loginCommandFor(status.profile)}\`, or set UGS_API_TOKEN`,
    });
  }
}

/** Why the profile in use is the one: shown beside it. */
const PROFILE_SOURCES: Record<ProfileSource, string> = {
  flag: '--profile',
  env: 'UGS_PROFILE',
  config: 'the default, set by ugs profile use',
  default: 'the default',
};

function tokenLocationText(status: Status, storeName: string): string | null {
  switch (status.tokenLocation) {
    case 'environment':
      return 'environment (UGS_API_TOKEN)';
    case 'config file':
      return 'config file';
    case 'credential store':
      return `credential store (${storeName})`;
    default:
      return null;
  }
}
