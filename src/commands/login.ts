import type { Command } from 'commander';
import { apiTokenProblem, loginCommandFor, resolveCredentials } from '../credentials.js';
import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { canPrompt, readStdin } from '../io.js';
import { formatBaseUrl, parseBaseUrl } from '../parse.js';
import { printMessage } from '../render.js';
import { type DepsFactory, newCommand } from './shared.js';

export interface LoginOptions {
  withToken: boolean;
}

/**
 * The token is not checked against the service: its only operations create or rotate user
 * groups, so there is nothing harmless to call. The first `ugs get` shows whether it works.
 */
export function loginCommand(makeDeps: DepsFactory, run = runLogin): Command {
  return newCommand('login', 'Save the base URL and API token for a profile', [
    'ugs login                                    # asks for the base URL and the token',
    'printenv UGS_TOKEN | ugs login --base-url https://analytics.example.com --with-token',
    'ugs login --profile staging --base-url https://staging.example.com',
    'ugs login --base-url https://analytics.example.com --api-path /api/user/   # a service that wants the slash',
  ])
    .option('--with-token', 'read the API token from stdin instead of prompting')
    .action(async (flags: { withToken?: boolean }, cmd: Command) => {
      await run({ withToken: flags.withToken === true }, makeDeps(cmd));
    });
}

export async function runLogin(opts: LoginOptions, deps: Deps): Promise<void> {
  const { io, settings, config, prompter } = deps;
  const interactive = canPrompt(io, settings.noInput);
  const credentials = resolveCredentials(deps);
  const validateUrl = (text: string) => parseBaseUrl(text, { insecureHttp: settings.insecureHttp });
  // `--with-token` with a terminal on stdin must fail before the base URL prompt, not after the
  // user has answered it (readStdin refuses a terminal at once).
  if (opts.withToken && io.stdinIsTTY) await readStdin(io, '--with-token');

  let baseUrl: URL;
  if (settings.baseUrl !== undefined) {
    baseUrl = validateUrl(settings.baseUrl);
  } else if (interactive) {
    const answer = await prompter.input('Base URL of the User Group Service:', {
      ...(credentials.profile?.baseUrl && { default: credentials.profile.baseUrl }),
      validate: (text) => {
        try {
          validateUrl(text);
          return true;
        } catch (error) {
          return error instanceof Error ? error.message : String(error);
        }
      },
    });
    baseUrl = validateUrl(answer);
  } else if (credentials.profile?.baseUrl) {
    baseUrl = validateUrl(credentials.profile.baseUrl);
  } else {
    throw new UsageError('missing --base-url: the service address is required', {
      hint: 'pass --base-url https://... or set UGS_BASE_URL',
    });
  }

  let apiToken: string;
  if (opts.withToken) {
    apiToken = (await readStdin(io, '--with-token')).trim();
    if (apiToken === '')
      throw new UsageError('--with-token: stdin was empty; pipe the API token in');
  } else if (interactive) {
    apiToken = (
      await prompter.password('API token:', {
        validate: (value) => {
          if (value.trim() === '') return 'the API token is required';
          const problem = apiTokenProblem(value.trim());
          return problem === undefined || `the API token ${problem}`;
        },
      })
    ).trim();
  } else {
    throw new UsageError('no API token given, and prompts are off', {
      hint: `pipe the token in: printenv UGS_TOKEN | ${loginCommandFor(settings.profile)} --with-token`,
    });
  }
  deps.tracer.addSecret(apiToken);
  // Refused here rather than saved: a token with a line break or a space cannot go into the
  // Authorization header, and the first `ugs get` would report it as a network failure.
  const problem = apiTokenProblem(apiToken);
  if (problem !== undefined) {
    throw new UsageError(`the API token ${problem}; nothing was saved`, {
      hint: `pass the token alone, e.g. printenv UGS_TOKEN | ${loginCommandFor(settings.profile)} --with-token`,
    });
  }

  const saved = formatBaseUrl(baseUrl);
  await config.updateProfile(settings.profile, (current) => ({
    ...current,
    baseUrl: saved,
    apiToken,
    // --api-path (or UGS_API_PATH) is remembered for the profile; without it the saved one stays.
    ...(settings.apiPath !== undefined && { apiPath: settings.apiPath }),
  }));

  await printMessage(
    io,
    settings,
    `Logged in to ${saved}${settings.apiPath === undefined ? '' : ` (API path ${settings.apiPath})`} as profile "${settings.profile}"; saved to ${config.path}`,
    'success',
  );
  if (io.env.UGS_API_TOKEN) {
    await printMessage(
      io,
      settings,
      'warning: UGS_API_TOKEN is set and overrides the token just saved; unset it to use this one',
      'warning',
    );
  }
}
