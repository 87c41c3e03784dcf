import { resolve } from 'node:path';
import type { Command } from 'commander';
import { type DepsFactory, newCommand } from '../cli/shared.js';
import type { Profile } from '../config/config.js';
import {
  CredentialStoreError,
  credentialAccount,
  credentialAccounts,
} from '../config/secure-store.js';
import {
  apiTokenProblem,
  checkApiPathForDialect,
  resolveApiPath,
  resolveCaFile,
  resolveCredentials,
  resolveDialect,
  withCaFile,
} from '../context/credentials.js';
import { embedSecretAccount, guardSecret } from '../context/embed-secret.js';
import type { Deps } from '../context/factory.js';
import { defaultCannotBeProduction } from '../context/production.js';
import { checkProfileName, defaultProfile } from '../context/profiles.js';
import { ApiError, AuthError, ConfigError, NetworkError, UsageError } from '../errors.js';
import { endpointUrl, formatBaseUrl, parseBaseUrl, redactUrl, shellWord } from '../input/parse.js';
import { checkKeyId, embedKey } from '../jwt/embed.js';
import { printLine, printMessage } from '../output/messages.js';
import { canPrompt, readStdin } from '../platform/io.js';
import {
  DEFAULT_DIALECT,
  EXPLO_BASE_URL,
  isVendorDialect,
  NOT_THE_VENDOR_API,
  profileDialect,
} from '../service/dialect.js';
import { expectedRefusal, type ProbeResult } from '../service/probe.js';
import { loginCommandFor, type Target } from '../service/target.js';
import { message } from '../text/message.js';

export interface LoginOptions {
  withToken: boolean;
  /** Keep the API token in the OS credential store; the config file then holds no token. */
  secureStorage: boolean;
  /**
   * Check the token with doctor's probe before saving it (the default); `--no-verify` saves it
   * unchecked, e.g. offline or before the service is up.
   */
  verify: boolean;
  /**
   * `--embed-secret-stdin`: save the embed secret (read from stdin) and its key id
   * (`--embed-key-id`) for `ugs jwt`, and nothing else: the base URL and API token stay as they are.
   */
  embedSecretStdin?: boolean;
  embedKeyId?: string | undefined;
  /** `--production`: mark the profile production (`ugs profile protect`) once it is saved. */
  production?: boolean;
}

/**
 * The token is checked before anything is saved, with the one harmless request there is (doctor's
 * probe: a request with `{}`, which a service refuses for its missing fields once the token passed):
 * a wrong token, port or path fails here, not at the first `ugs get`.
 */
export function loginCommand(makeDeps: DepsFactory, run = runLogin): Command {
  return newCommand('login', 'Save the base URL and API token for a profile', [
    'ugs login                                    # asks for the base URL and the token',
    'printenv UGS_TOKEN | ugs login --base-url https://analytics.example.com --with-token',
    'ugs login --profile staging --base-url https://staging.example.com',
    'ugs login --base-url https://analytics.example.com --api-path /api/user/   # a service that wants the slash',
    'ugs login --secure-storage                   # the token goes to the OS credential store',
    'ugs login --no-verify                        # save without asking the service (offline)',
    'printenv EMBED_SECRET | ugs login --embed-secret-stdin --embed-key-id k1   # for ugs jwt',
    "ugs login --dialect explo                    # the vendor's hosted API (https://api.explo.co)",
    "ugs login --dialect customer                 # the vendor's Customer API, same host",
    'ugs login --profile prod --production        # ask before every change on prod',
  ])
    .option('--with-token', 'read the API token from stdin instead of prompting')
    .option(
      '--secure-storage',
      'keep the API token in the OS credential store (Keychain, Credential Manager, Secret Service) instead of the config file',
    )
    .option('--no-verify', 'save the token without checking it against the service')
    .option(
      '--embed-secret-stdin',
      'save the embed secret (read from stdin) that ugs jwt mints with, and nothing else',
    )
    .option('--embed-key-id <kid>', "with --embed-secret-stdin: the secret's key id")
    .option(
      '--production',
      'mark the profile production: commands that change data ask first, and it is never the default',
    )
    .action(
      async (
        flags: {
          withToken?: boolean;
          secureStorage?: boolean;
          verify?: boolean;
          embedSecretStdin?: boolean;
          embedKeyId?: string;
          production?: boolean;
        },
        cmd: Command,
      ) => {
        await run(
          {
            withToken: flags.withToken === true,
            secureStorage: flags.secureStorage === true,
            verify: flags.verify !== false,
            ...(flags.embedSecretStdin === true && { embedSecretStdin: true }),
            ...(flags.embedKeyId !== undefined && { embedKeyId: flags.embedKeyId }),
            ...(flags.production === true && { production: true }),
          },
          // Logging in to a profile that does not exist yet is how one is created.
          makeDeps(cmd, { acceptsUnknownProfile: true }),
        );
      },
    );
}

export async function runLogin(opts: LoginOptions, deps: Deps): Promise<void> {
  const { io, settings, config, prompter } = deps;
  // Before any prompt: the profile this login saves is named in every hint that follows.
  checkProfileName(
    settings.profile,
    { flag: '--profile', env: 'UGS_PROFILE', config: 'the default profile', default: '--profile' }[
      settings.profileSource ?? 'default'
    ],
  );
  if (opts.embedSecretStdin === true || opts.embedKeyId !== undefined) {
    await saveEmbedSecret(opts, deps);
    return;
  }
  // Before any prompt too: the profile every command without --profile uses cannot be one.
  if (opts.production === true && settings.profile === 'default') throw defaultCannotBeProduction();
  const interactive = canPrompt(io, settings.noInput);
  const credentials = resolveCredentials(deps);
  const validateUrl = (text: string) => parseBaseUrl(text, { insecureHttp: settings.insecureHttp });
  const dialect = resolveDialect(settings, credentials);
  checkApiPathForDialect(settings, dialect);
  // The vendor's hosted service is where the explo dialect is spoken: its address is the default.
  // A profile's saved address still wins when it was saved for this dialect; one saved for the
  // interface (switching with `--dialect explo`) belongs to another service.
  // The customer dialect is the same vendor's other API, on the same host.
  const vendor = isVendorDialect(dialect.value);
  const savedBaseUrl =
    vendor && !isVendorDialect(profileDialect(credentials.profile))
      ? undefined
      : credentials.profile?.baseUrl;
  const defaultBaseUrl = savedBaseUrl || (vendor ? EXPLO_BASE_URL : undefined);
  // `--with-token` with a terminal on stdin must fail before the base URL prompt, not after the
  // user has answered it (readStdin refuses a terminal at once).
  if (opts.withToken && io.stdinIsTTY) await readStdin(io, '--with-token');

  let baseUrl: URL;
  if (settings.baseUrl !== undefined) {
    baseUrl = validateUrl(settings.baseUrl);
  } else if (interactive) {
    const answer = await prompter.input('Base URL of the User Group Service:', {
      ...(defaultBaseUrl && { default: defaultBaseUrl }),
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
  } else if (defaultBaseUrl) {
    baseUrl = validateUrl(defaultBaseUrl);
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

  let readOnly: string | undefined;
  if (opts.verify) {
    readOnly = await verifyToken(deps, {
      baseUrl,
      apiToken,
      apiPath: resolveApiPath(settings, credentials).value,
      // The probe goes where this dialect's requests will go (explo: the vendor's path and header).
      dialect: dialect.value,
      profile: settings.profile,
      tokenSource: 'profile',
      ...withCaFile(resolveCaFile(settings, credentials)),
    });
  }

  const saved = formatBaseUrl(baseUrl);
  const profileChange = (current: Profile | undefined): Profile => {
    const {
      apiToken: _oldToken,
      tokenStore: _oldStore,
      dialect: _oldDialect,
      ...kept
    } = current ?? {};
    // The explo dialect has its own paths: an API path saved by an earlier login would be unused.
    const { apiPath: _oldPath, ...withoutPath } = kept;
    const rest: Profile = vendor ? withoutPath : kept;
    return {
      ...rest,
      // Saved only when it is not the default, so a profile file without it means `interface`.
      ...(dialect.value !== 'interface' && { dialect: dialect.value }),
      baseUrl: saved,
      ...(opts.secureStorage ? { tokenStore: 'keyring' as const } : { apiToken }),
      // --api-path (or UGS_API_PATH) is remembered for the profile; without it the saved one stays.
      ...(settings.apiPath !== undefined && { apiPath: settings.apiPath }),
      // So is --ca-file (or UGS_CA_FILE), as an absolute path: later commands run from anywhere.
      ...(settings.caFile !== undefined && { caFile: resolve(settings.caFile) }),
    };
  };
  const notes = [
    vendor ? `dialect ${dialect.value}` : undefined,
    settings.apiPath === undefined ? undefined : `API path ${settings.apiPath}`,
    settings.caFile === undefined ? undefined : message`CA ${resolve(settings.caFile)}`,
  ].filter((note): note is string => note !== undefined);
  const apiPathNote = notes.length === 0 ? '' : ` (${notes.join(', ')})`;
  const checked = opts.verify ? ' (the service accepted the token)' : '';
  const loggedIn = message`Logged in to ${saved}${apiPathNote} as profile "${settings.profile}"${checked}`;
  if (opts.secureStorage) {
    await saveInCredentialStore(deps, apiToken, profileChange);
    await printMessage(
      deps.output,
      `${loggedIn}; the API token is in the ${deps.credentialStore.name}, the profile in ${config.path}`,
      'success',
    );
  } else {
    const storedBefore = credentials.profile?.tokenStore === 'keyring';
    await config.updateProfile(settings.profile, profileChange);
    await printMessage(deps.output, `${loggedIn}; saved to ${config.path}`, 'success');
    // Only a profile that used the store loads it here: a plain login stays free of it.
    if (storedBefore) await removeStoredCopy(deps);
  }
  if (opts.production === true) {
    // A second write, which also drops the profile as the chosen default (protectProfile).
    const { wasDefault } = await config.protectProfile(settings.profile, true);
    printLine(
      deps.output,
      `note: profile ${shellWord(settings.profile)} is marked production: commands that change data on it ask first (--yes without a terminal)${wasDefault ? '; it is no longer the default, pass -p each time' : ''}`,
    );
  }
  if (!opts.verify) {
    printLine(
      deps.output,
      'note: the token was not checked (--no-verify); `ugs doctor --probe` checks it against the service',
    );
  }
  if (readOnly !== undefined) await printMessage(deps.output, readOnly, 'warning');
  if (io.env.UGS_API_TOKEN) {
    await printMessage(
      deps.output,
      'warning: UGS_API_TOKEN is set and overrides the token just saved; unset it to use this one',
      'warning',
    );
  }
  printLine(deps.output, `next: ${nextCommand(deps)}`);
}

/**
 * The first thing to do with a new login: get (or create) a user group, with `--profile` unless
 * the profile is the one a command without it uses (UGS_PROFILE, else `ugs profile use`'s).
 */
function nextCommand(deps: Deps): string {
  const { profile } = deps.settings;
  const env = deps.io.env.UGS_PROFILE;
  const bare = env !== undefined && env !== '' ? env : defaultProfile(deps).name;
  const select = profile === bare ? '' : ` --profile ${shellWord(profile)}`;
  return `ugs get${select} --id <id> --name <name>`;
}

/**
 * Sends the probe to `target` and returns only when the service accepted the token (it refused
 * the empty request with its own 400: see probeVerdict), with a warning to print once saved when
 * the token looks read-only. Every other outcome throws, and nothing has been saved yet: refused
 * (401/403) exit 3; no answer exit 4; any other answer (a 404 or 405
 * from a wrong base URL or API path, a 400 from a proxy or another server, a 5xx, a redirect ugs
 * does not follow) exit 1, naming the status, content type and URL tried.
 */
async function verifyToken(deps: Deps, target: Target): Promise<string | undefined> {
  const { settings } = deps;
  const offline = `pass --no-verify to save the token without checking it`;
  let result: ProbeResult;
  try {
    const client = await deps.connect(target);
    result = await deps.progress.during('Checking the API token', () => client.probe());
  } catch (error) {
    if (error instanceof NetworkError) {
      throw new NetworkError(`could not check the API token: ${error.message}; nothing was saved`, {
        hint: `${error.hint === undefined ? '' : `${error.hint}; or `}${offline} (offline, or before the service is up)`,
        cause: error,
        ...(error.code !== undefined && { code: error.code }),
      });
    }
    if (error instanceof ApiError) {
      throw new ApiError(`could not check the API token: ${error.message}; nothing was saved`, {
        ...(error.status !== undefined && { status: error.status }),
        hint: `${error.hint === undefined ? '' : `${error.hint}; or `}${offline}`,
        cause: error,
      });
    }
    throw error;
  }
  const tried = new URL(result.path, endpointUrl(target.baseUrl, target.apiPath ?? '/'));
  // The method the dialect sent: GET with the interface, POST with explo.
  const where = message`${result.method} ${redactUrl(tried.href)}`;
  const explo = isVendorDialect(target.dialect);
  // `--api-path` is the interface's one path; with the vendor's dialects it is refused, so never
  // suggested.
  const check = explo ? 'check --base-url' : 'check --base-url and --api-path';
  const said = result.detail === undefined ? '' : message` (${result.detail.slice(0, 200)})`;
  switch (result.verdict) {
    case 'accepted':
      return undefined;
    case 'read-only': {
      // DRF's permission 403 comes only after the token was authenticated: the token is good,
      // but the probe is a call that writes in this dialect (the explo token refresh, the
      // interface's get-or-create), and a read-only token is refused those. Saved, with a
      // warning, rather than refused: a read-only key is a real key, good for the calls that
      // read (the customer dialect's show and list, whose probe reads and passes), and refusing
      // it would tell the user it is wrong when it is not.
      const dialectText = isVendorDialect(target.dialect)
        ? ` with --dialect ${target.dialect}`
        : '';
      return `warning: the service accepted the API token but refused the check, a call that changes data${dialectText} (${where} answered HTTP ${result.status}${said}): the token may be read-only, and commands that create or change data will be refused with it; for those, run \`${loginCommandFor(settings.profile)}\` with a read-write API token`;
    }
    case 'refused':
      throw new AuthError(
        `the service refused the API token: ${where} answered HTTP ${result.status}${said}; nothing was saved`,
        {
          status: result.status,
          hint: `check that the token is for ${target.baseUrl.host} and copy it again: ${loginCommandFor(settings.profile)}`,
        },
      );
    case 'unexpected': {
      const answered = message`${where} answered HTTP ${result.status} with ${result.contentType}${said}`;
      if (result.status === 400) {
        // A 400 that is not the service's own refusal of `{}`: something in front of it (or
        // another server) refused the request before any token was looked at.
        throw new ApiError(
          `could not check the API token: ${answered}, not the service's refusal of an empty request (${expectedRefusal(target.dialect ?? DEFAULT_DIALECT)}); nothing was saved`,
          {
            status: result.status,
            hint: `a proxy, a load balancer or another server may have answered instead of the User Group Service: ${check}; or ${offline}`,
          },
        );
      }
      const why: Record<number, string> = explo
        ? {
            404: `nothing answers at that URL: check --base-url (a path prefix missing or doubled?); ${NOT_THE_VENDOR_API}`,
            405: `that URL does not take this request: check --base-url; ${NOT_THE_VENDOR_API}`,
          }
        : {
            404: 'nothing answers at that URL: check --base-url (a path prefix missing or doubled?) and --api-path',
            405: `that URL does not take this request: check --base-url and --api-path${target.apiPath?.endsWith('/') ? '' : message` (the service may want the trailing slash: --api-path ${target.apiPath ?? ''}/)`}`,
          };
      // A 404/405 in the interface may be the vendor's API at that address: one read-only probe
      // of each of its dialects tells, and the hint then names the dialect that answered.
      const vendor =
        !explo && (result.status === 404 || result.status === 405)
          ? await vendorDialectAt(deps, target)
          : undefined;
      const reason =
        (vendor !== undefined
          ? `the vendor's ${vendor === 'customer' ? 'Customer API' : 'End User Group API'} answers at ${target.baseUrl.host}: ${loginCommandFor(settings.profile)} --dialect ${vendor}`
          : undefined) ??
        why[result.status] ??
        (result.status >= 500
          ? 'the service had a problem; try again later'
          : `that does not look like the User Group Service: ${check}`);
      throw new ApiError(
        `could not check the API token: ${answered}, expected ${target.dialect === 'customer' ? '400 or 404' : '400'} (token accepted) or 401/403 (token refused); nothing was saved`,
        { status: result.status, hint: `${reason}; or ${offline}` },
      );
    }
  }
}

/**
 * Which of the vendor's dialects answers at the target's base URL, if one does: its probe sent
 * as that dialect sends it (the Customer API's read-one for an empty id, then the End User Group
 * API's token refresh with no token), each a request that reads or is refused and never changes
 * anything. An answer counts when it is that API's own: the token accepted (its refusal of the
 * empty request) or refused (401/403), where the interface's path had nothing. Anything else,
 * a network error included, is "none": the hint then stays as it was. At most two requests.
 */
async function vendorDialectAt(
  deps: Deps,
  target: Target,
): Promise<'customer' | 'explo' | undefined> {
  // The interface's path is not the vendor's: each dialect uses its own.
  const { apiPath: _interfacePath, ...base } = target;
  for (const dialect of ['customer', 'explo'] as const) {
    try {
      const client = await deps.connect({ ...base, dialect });
      const answer = await client.probe();
      if (answer.verdict !== 'unexpected') return dialect;
    } catch {
      // No answer there either: try the next, then give the hint as it was.
    }
  }
  return undefined;
}

/**
 * The store first, then the config file: if the store refuses (no D-Bus session, no Secret
 * Service, a locked keyring) nothing has been written anywhere, and the token is never quietly
 * put in the file instead. If the config file then cannot be written, the store's copy is taken
 * back, so no token is left where no profile points.
 */
async function saveInCredentialStore(
  deps: Deps,
  apiToken: string,
  profileChange: (current: Profile | undefined) => Profile,
): Promise<void> {
  const { settings, config, credentialStore: store } = deps;
  const account = credentialAccount(settings.profile, config.path);
  try {
    await store.set(account, apiToken);
  } catch (error) {
    if (!(error instanceof CredentialStoreError)) throw error;
    throw new ConfigError(
      `cannot save the API token in the ${store.name}: ${error.reason}; nothing was saved`,
      {
        hint: `run ugs where the credential store is reachable (a desktop session, or a Secret Service such as gnome-keyring on a D-Bus session bus), or run \`${loginCommandFor(settings.profile)}\` without --secure-storage to keep the token in the config file (mode 0600)`,
        cause: error,
      },
    );
  }
  try {
    await config.updateProfile(settings.profile, profileChange);
  } catch (error) {
    await store.delete(account).catch(() => false);
    throw error;
  }
  // An earlier version's entry for this profile holds the old token: the new one replaces it.
  for (const old of credentialAccounts(settings.profile, config.path).slice(1)) {
    await store.delete(old).catch(() => false);
  }
}

/** After a plain login the token lives in the file, so the store's old copy goes. */
async function removeStoredCopy(deps: Deps): Promise<void> {
  const { settings, config, credentialStore: store } = deps;
  const [account = '', ...older] = credentialAccounts(settings.profile, config.path);
  try {
    await store.delete(account);
    for (const old of older) await store.delete(old);
  } catch (error) {
    if (!(error instanceof CredentialStoreError)) throw error;
    // The login itself succeeded; the old copy is still a secret left behind, so say where.
    await printMessage(
      deps.output,
      // The account in plain quotes, not JSON-escaped as a quoted value would be: it holds the
      // config path, whose backslashes (on Windows) are part of the name to look for.
      message`warning: could not remove the old API token of profile "${settings.profile}" from the ${store.name} (${error.reason}); remove the entry of service "ugs", account ${`"${account}"`} there yourself`,
      'warning',
    );
  }
}

/**
 * `ugs login --embed-secret-stdin --embed-key-id KID`: the embed secret is kept as the API token
 * is, in the config file (0600) or with `--secure-storage` in the OS credential store (store
 * first, then the file, as saveInCredentialStore does), and checked first: a secret that is not
 * the 32 bytes of an A256GCM key is refused, and nothing is saved. The rest of the profile stays.
 */
async function saveEmbedSecret(opts: LoginOptions, deps: Deps): Promise<void> {
  const { io, settings, config } = deps;
  if (opts.embedSecretStdin !== true) {
    throw new UsageError('--embed-key-id goes with --embed-secret-stdin', {
      hint: 'printenv EMBED_SECRET | ugs login --embed-secret-stdin --embed-key-id <kid>',
    });
  }
  if (opts.embedKeyId === undefined) {
    throw new UsageError(
      '--embed-secret-stdin needs --embed-key-id: the JWT header names the key',
      {
        hint: "the key id is shown beside the secret in the vendor's settings",
      },
    );
  }
  if (opts.withToken) {
    throw new UsageError('--with-token and --embed-secret-stdin both read stdin: run login twice');
  }
  const kid = checkKeyId(opts.embedKeyId, '--embed-key-id');
  const secret = (await readStdin(io, '--embed-secret-stdin')).replace(/\r?\n$/, '');
  if (secret === '')
    throw new UsageError('--embed-secret-stdin: stdin was empty; pipe the secret in');
  guardSecret(deps, secret);
  embedKey(secret, 'stdin');
  const profileName = settings.profile;
  const store = deps.credentialStore;
  const account = embedSecretAccount(profileName, config.path);
  const storedBefore = config.readProfile(profileName)?.embedSecretStore === 'keyring';
  const change = (current: Profile | undefined): Profile => {
    const { embedSecret: _secret, embedSecretStore: _store, ...rest } = current ?? {};
    return {
      ...rest,
      embedKeyId: kid,
      ...(opts.secureStorage ? { embedSecretStore: 'keyring' as const } : { embedSecret: secret }),
    };
  };
  if (opts.secureStorage) {
    try {
      await store.set(account, secret);
    } catch (error) {
      if (!(error instanceof CredentialStoreError)) throw error;
      throw new ConfigError(
        `cannot save the embed secret in the ${store.name}: ${error.reason}; nothing was saved`,
        {
          hint: 'run ugs where the credential store is reachable, or leave out --secure-storage to keep it in the config file (mode 0600)',
          cause: error,
        },
      );
    }
    try {
      await config.updateProfile(profileName, change);
    } catch (error) {
      await store.delete(account).catch(() => false);
      throw error;
    }
  } else {
    await config.updateProfile(profileName, change);
    // The store's old copy goes: one secret, one place.
    if (storedBefore) await store.delete(account).catch(() => false);
  }
  const where = opts.secureStorage ? `the ${store.name}` : config.path;
  await printMessage(
    deps.output,
    message`Saved the embed secret (kid ${kid}) of profile "${profileName}" in ${where}`,
    'success',
  );
  if (io.env.UGS_EMBED_SECRET) {
    await printMessage(
      deps.output,
      'warning: UGS_EMBED_SECRET is set and overrides the secret just saved; unset it to use this one',
      'warning',
    );
  }
  printLine(deps.output, `next: ugs jwt --id <provided_id> --embed <embed_id>`);
}
