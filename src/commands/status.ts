import type { Command } from 'commander';
import { type Deps, loginCommandFor, resolveCredentials, type TokenSource } from '../context.js';
import { AuthError } from '../errors.js';
import { writeLine } from '../io.js';
import { renderJson, renderTable, styleFor } from '../render.js';
import { type DepsFactory, newCommand } from './shared.js';

export interface StatusOptions {
  json: boolean;
}

export interface Status {
  profile: string;
  baseUrl: string | null;
  baseUrlSource: 'flag' | 'env' | 'profile' | null;
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

/** Enough of the token to tell two apart, never enough to use: short ones are hidden whole. */
export function maskToken(token: string): string {
  return token.length >= 12 ? `****${token.slice(-4)}` : '****';
}

export function collectStatus(deps: Deps): Status {
  const credentials = resolveCredentials(deps);
  return {
    profile: credentials.profileName,
    baseUrl: credentials.baseUrl?.value ?? null,
    baseUrlSource: credentials.baseUrl?.source ?? null,
    tokenSource: credentials.apiToken?.source ?? null,
    token: credentials.apiToken ? maskToken(credentials.apiToken.value) : null,
    configPath: deps.config.path,
  };
}

export async function runStatus(opts: StatusOptions, deps: Deps): Promise<void> {
  const status = collectStatus(deps);
  if (opts.json) {
    writeLine(deps.io.stdout, renderJson(status));
  } else {
    const style = await styleFor(deps.io, 'stdout');
    const none = style.dim('(none)');
    const rows: [string, string][] = [
      ['profile', status.profile],
      ['base URL', status.baseUrl ? `${status.baseUrl} (${status.baseUrlSource})` : none],
      ['token', status.token ?? none],
      ['token source', status.tokenSource ?? none],
      ['config file', status.configPath],
    ];
    writeLine(deps.io.stdout, await renderTable(rows, style));
  }
  if (status.tokenSource === null) {
    throw new AuthError(`no API token for profile "${status.profile}"`, {
      hint: `run \`${loginCommandFor(status.profile)}\`, or set UGS_API_TOKEN`,
    });
  }
}
