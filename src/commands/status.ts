import type { Command } from 'commander';
import {
  loginCommandFor,
  resolveApiPath,
  resolveCredentials,
  type TokenSource,
} from '../credentials.js';
import type { Deps } from '../deps.js';
import { AuthError } from '../errors.js';
import { printFieldTable, printJson } from '../render.js';
import { type DepsFactory, newCommand } from './shared.js';

export interface StatusOptions {
  json: boolean;
}

export interface Status {
  profile: string;
  baseUrl: string | null;
  baseUrlSource: 'flag' | 'env' | 'profile' | null;
  apiPath: string;
  apiPathSource: 'flag' | 'env' | 'profile' | 'default';
  tokenSource: TokenSource | null;
  token: string | null;
  configPath: string;
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

/**
 * The last 4 characters tell two tokens apart; a token shorter than 8 characters would be half
 * given away by them, so it is hidden whole.
 */
export function maskToken(token: string): string {
  return token.length >= 8 ? `****${token.slice(-4)}` : '****';
}

export function collectStatus(deps: Deps): Status {
  const credentials = resolveCredentials(deps);
  return {
    profile: credentials.profileName,
    baseUrl: credentials.baseUrl?.value ?? null,
    baseUrlSource: credentials.baseUrl?.source ?? null,
    ...apiPathOf(deps, credentials),
    tokenSource: credentials.apiToken?.source ?? null,
    token: credentials.apiToken ? maskToken(credentials.apiToken.value) : null,
    configPath: deps.config.path,
  };
}

function apiPathOf(
  deps: Deps,
  credentials: ReturnType<typeof resolveCredentials>,
): { apiPath: string; apiPathSource: Status['apiPathSource'] } {
  const { value, source } = resolveApiPath(deps.settings, credentials);
  return { apiPath: value, apiPathSource: source };
}

export async function runStatus(opts: StatusOptions, deps: Deps): Promise<void> {
  const status = collectStatus(deps);
  if (opts.json) {
    printJson(deps.io, status);
  } else {
    await printFieldTable(deps.io, deps.settings, [
      ['profile', status.profile],
      ['base URL', status.baseUrl ? `${status.baseUrl} (${status.baseUrlSource})` : null],
      ['API path', `${status.apiPath} (${status.apiPathSource})`],
      ['token', status.token],
      ['token source', status.tokenSource],
      ['config file', status.configPath],
    ]);
  }
  if (status.tokenSource === null) {
    throw new AuthError(`no API token for profile "${status.profile}"`, {
      hint: `run \`${loginCommandFor(status.profile)}\`, or set UGS_API_TOKEN`,
    });
  }
}
