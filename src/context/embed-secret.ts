/**
 * Which embed secret and key id `ugs jwt` uses, and where they came from: stdin
 * (`--secret-stdin`) over UGS_EMBED_SECRET over the profile (`ugs login --embed-secret-stdin`,
 * in the config file or the OS credential store). The key id goes with it: `--key-id`, else
 * UGS_EMBED_KEY_ID, else the profile's, but the profile's only with the profile's secret: a
 * secret from elsewhere paired with the profile's key id would be a guess.
 *
 * Every secret read here is registered at once with the `--debug` tracer (shown by its last 4)
 * and, under a CI runner, masked before anything can print it.
 */
import { CredentialStoreError, credentialAccount } from '../config/secure-store.js';
import { ConfigError, UsageError } from '../errors.js';
import { checkKeyId } from '../jwt/embed.js';
import { loginCommandFor } from '../service/target.js';
import { message } from '../text/message.js';
import type { Deps } from './factory.js';

export type EmbedSecretSource = 'stdin' | 'flag --secret' | 'env UGS_EMBED_SECRET' | 'profile';

export interface ResolvedEmbedSecret {
  secret: string;
  /** Undefined when no key id was given for a secret from stdin or the environment. */
  kid: string | undefined;
  source: EmbedSecretSource;
  /** Where the key id came from, for messages. */
  kidSource: string | undefined;
}

/**
 * The credential store account of a profile's embed secret: the API token's account with a
 * suffix, so the two secrets of one profile never overwrite each other.
 */
export function embedSecretAccount(profile: string, configPath: string): string {
  return `${credentialAccount(profile, configPath)} embed secret`;
}

/** Registers a secret with the tracer and the CI mask before anything may print it. */
export function guardSecret(deps: Pick<Deps, 'tracer' | 'output'>, secret: string): void {
  deps.tracer.addSecret(secret);
  deps.output.maskSecret(secret);
}

/**
 * The embed secret to use, or undefined when there is none anywhere. `given` is a secret the
 * command read itself (stdin, or the `--secret` flag), `keyIdFlag` the `--key-id` flag.
 */
export async function resolveEmbedSecret(
  deps: Deps,
  given: { secret: string; source: 'stdin' | 'flag --secret' } | undefined,
  keyIdFlag: string | undefined,
): Promise<ResolvedEmbedSecret | undefined> {
  const env = deps.io.env;
  const envKid =
    env.UGS_EMBED_KEY_ID !== undefined && env.UGS_EMBED_KEY_ID !== ''
      ? env.UGS_EMBED_KEY_ID
      : undefined;
  const outsideKid =
    keyIdFlag !== undefined
      ? { kid: checkKeyId(keyIdFlag, '--key-id'), source: 'flag --key-id' }
      : envKid !== undefined
        ? { kid: checkKeyId(envKid, 'UGS_EMBED_KEY_ID'), source: 'env UGS_EMBED_KEY_ID' }
        : undefined;
  const outside =
    given ??
    (env.UGS_EMBED_SECRET !== undefined && env.UGS_EMBED_SECRET !== ''
      ? { secret: env.UGS_EMBED_SECRET, source: 'env UGS_EMBED_SECRET' as const }
      : undefined);
  if (outside !== undefined) {
    guardSecret(deps, outside.secret);
    return {
      secret: outside.secret,
      kid: outsideKid?.kid,
      source: outside.source,
      kidSource: outsideKid?.source,
    };
  }
  const profileName = deps.settings.profile;
  const profile = deps.config.readProfile(profileName);
  let secret = profile?.embedSecret;
  if (profile?.embedSecretStore === 'keyring') {
    const store = deps.credentialStore;
    try {
      secret = await store.get(embedSecretAccount(profileName, deps.config.path));
    } catch (error) {
      if (!(error instanceof CredentialStoreError)) throw error;
      throw new ConfigError(
        message`cannot read the embed secret of profile "${profileName}" from the ${store.name}: ${error.reason}`,
        {
          hint: 'run ugs where the credential store is reachable, or set UGS_EMBED_SECRET and UGS_EMBED_KEY_ID',
          cause: error,
        },
      );
    }
    if (secret === undefined || secret === '') {
      throw new ConfigError(
        message`the ${store.name} holds no embed secret for profile "${profileName}" (it was removed there)`,
        {
          hint: `save it again: ${loginCommandFor(profileName)} --embed-secret-stdin --embed-key-id <kid> --secure-storage`,
        },
      );
    }
  }
  if (secret === undefined || secret === '') return undefined;
  guardSecret(deps, secret);
  const kid =
    outsideKid ??
    (profile?.embedKeyId === undefined
      ? undefined
      : { kid: profile.embedKeyId, source: message`profile "${profileName}"` });
  return { secret, kid: kid?.kid, source: 'profile', kidSource: kid?.source };
}

/** What to say when `ugs jwt` finds no embed secret. */
export function noEmbedSecret(deps: Deps, what: string): UsageError {
  return new UsageError(`no embed secret to ${what}`, {
    hint: `set UGS_EMBED_SECRET (and UGS_EMBED_KEY_ID), pipe it to --secret-stdin, or save it: printenv EMBED_SECRET | ${loginCommandFor(deps.settings.profile)} --embed-secret-stdin --embed-key-id <kid>`,
  });
}
