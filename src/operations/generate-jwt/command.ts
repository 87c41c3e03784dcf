/**
 * `ugs jwt`: the JWT an embedded dashboard is given, minted here with the embed secret
 * (`src/jwt/`: a compact JWE, `dir` + `A256GCM`, as the vendor documents it).
 *
 * The secret and every JWT are registered with the `--debug` tracer (last 4 only) and, under a CI
 * runner, masked before anything is printed; neither is ever written to the token history.
 */
import type { Command } from 'commander';
import { type DepsFactory, newCommand } from '../../cli/shared.js';
import {
  type EmbedSecretSource,
  guardSecret,
  noEmbedSecret,
  resolveEmbedSecret,
} from '../../context/embed-secret.js';
import type { Deps } from '../../context/factory.js';
import { UsageError } from '../../errors.js';
import { checkGroupText } from '../../input/parse.js';
import { encryptClaims } from '../../jwt/crypto.js';
import {
  checkKeyId,
  DEFAULT_EXPIRES_SECONDS,
  type EmbedClaims,
  embedKey,
  expiryWords,
  parseExpires,
  parseOrigin,
  utcTime,
} from '../../jwt/embed.js';
import { printLine, printMessage } from '../../output/messages.js';
import { formatValue, type OutputFormat, printJson } from '../../output/results.js';
import { canPrompt, readStdin, writeLine } from '../../platform/io.js';
import { message } from '../../text/message.js';

/** Where a secret given to the command itself comes from (else: environment, then profile). */
type SecretFlag = { kind: 'stdin' } | { kind: 'flag'; value: string } | undefined;

export interface MintOptions {
  action: 'mint';
  id: string;
  embed: string;
  /** Seconds; undefined: the default (24 hours), which `--via-api` leaves to the service. */
  expires: number | undefined;
  /** `iss`, normalised (trailing slash). */
  origin: string | undefined;
  keyId: string | undefined;
  secret: SecretFlag;
  format: OutputFormat;
}

export type JwtOptions = MintOptions;

interface MintFlags {
  id?: string;
  embed?: string;
  expires?: string;
  origin?: string;
  keyId?: string;
  secretStdin?: boolean;
  secret?: string;
  json?: boolean;
  field?: string;
}

/** What `--json` prints of a JWT, and the fields `--field` may name. */
const MINTED_FIELDS = ['jwt', 'header', 'claims', 'expires_at'] as const;

const SECRET_IN_ARGV_WARNING =
  'warning: --secret puts the embed secret in your shell history and in process lists; set UGS_EMBED_SECRET, pipe it to --secret-stdin, or save it with `ugs login --embed-secret-stdin`';

export function jwtCommand(makeDeps: DepsFactory, run = runJwt): Command {
  const command = newCommand('jwt', 'Mint the JWT an embedded dashboard is given', [
    'ugs jwt --id acme --embed sales-overview          # minted here with the embed secret',
    'ugs jwt --id acme --embed sales-overview --expires 2h --origin https://app.example.com',
    'JWT=$(ugs jwt --id acme --embed sales-overview --field jwt)',
  ])
    .option('--id <provided_id>', "the customer's id (provided_id): the JWT's cst")
    .option('--embed <embed_id>', "the dashboard's embed id: the JWT's dsh")
    .option('--expires <duration>', 'lifetime: 90s, 30m, 2h, 7d or ISO 8601 PT2H (default: 24h)')
    .option(
      '--origin <url>',
      'the origin the dashboard is embedded in (iss), e.g. https://app.example.com',
    )
    .option(
      '--key-id <kid>',
      "the embed secret's key id (default: UGS_EMBED_KEY_ID, or the profile's)",
    )
    .option('--secret-stdin', 'read the embed secret from stdin')
    .option('--secret <secret>', 'the embed secret, or - for stdin (visible in process lists)')
    .option('--json', 'print {jwt, header, claims, expires_at} as JSON')
    .option('--field <name>', 'print one of jwt, header, claims, expires_at');
  command.action(async (flags: MintFlags, cmd: Command) => {
    await run(parseMintFlags(flags), makeDeps(cmd));
  });
  return command;
}

function secretFlag(flags: { secretStdin?: boolean; secret?: string }): SecretFlag {
  if (flags.secretStdin === true && flags.secret !== undefined) {
    throw new UsageError('use either --secret or --secret-stdin, not both');
  }
  if (flags.secretStdin === true || flags.secret === '-') return { kind: 'stdin' };
  if (flags.secret !== undefined) {
    if (flags.secret.trim() === '') throw new UsageError('--secret cannot be empty');
    return { kind: 'flag', value: flags.secret };
  }
  return undefined;
}

/** An embed id: any text the service takes, but not empty and without control characters. */
function checkEmbedId(value: string, flag: string): string {
  if (value.trim() === '' || /\p{Cc}/u.test(value)) {
    throw new UsageError(message`${flag} must be a dashboard's embed id, got "${value}"`);
  }
  return value;
}

/** Flags to options: every usage error of the flags is found here, before anything is read. */
export function parseMintFlags(flags: MintFlags): MintOptions {
  if (flags.json === true && flags.field !== undefined) {
    throw new UsageError('--json and --field cannot be used together');
  }
  if (flags.id === undefined) {
    throw new UsageError("missing --id: the customer's provided_id is required", {
      hint: 'ugs jwt --id <provided_id> --embed <embed_id>',
    });
  }
  if (flags.embed === undefined) {
    throw new UsageError("missing --embed: the dashboard's embed id is required", {
      hint: 'ugs jwt --id <provided_id> --embed <embed_id>',
    });
  }
  const secret = secretFlag(flags);
  let format: OutputFormat = { kind: 'table' };
  if (flags.json === true) format = { kind: 'json' };
  else if (flags.field !== undefined) {
    if (!(MINTED_FIELDS as readonly string[]).includes(flags.field)) {
      throw new UsageError(message`--field "${flags.field}" is not a field of a JWT`, {
        hint: `fields: ${MINTED_FIELDS.join(', ')} (e.g. --field jwt)`,
      });
    }
    format = { kind: 'field', name: flags.field };
  }
  return {
    action: 'mint',
    id: checkGroupText(flags.id, '--id', 'id'),
    embed: checkEmbedId(flags.embed, '--embed'),
    expires: flags.expires === undefined ? undefined : parseExpires(flags.expires),
    origin: flags.origin === undefined ? undefined : parseOrigin(flags.origin),
    keyId: flags.keyId === undefined ? undefined : checkKeyId(flags.keyId, '--key-id'),
    secret,
    format,
  };
}

export async function runJwt(opts: JwtOptions, deps: Deps): Promise<void> {
  await runMint(opts, deps);
}

/** The secret given to the command itself: read from stdin, or taken from `--secret` (warned). */
async function givenSecret(
  secret: SecretFlag,
  deps: Deps,
): Promise<{ secret: string; source: 'stdin' | 'flag --secret' } | undefined> {
  if (secret === undefined) return undefined;
  if (secret.kind === 'flag') {
    // Registered before the warning is even printed: nothing may show it whole from here on.
    guardSecret(deps, secret.value);
    if (canPrompt(deps.io, deps.settings.noInput)) {
      await printMessage(deps.output, SECRET_IN_ARGV_WARNING, 'warning');
    }
    return { secret: secret.value, source: 'flag --secret' };
  }
  // A secret file ends with a line break; the secret's own bytes are the key.
  const value = (await readStdin(deps.io, '--secret-stdin')).replace(/\r?\n$/, '');
  if (value === '') throw new UsageError('--secret-stdin: stdin was empty');
  guardSecret(deps, value);
  return { secret: value, source: 'stdin' };
}

function sourceWords(source: EmbedSecretSource): string {
  return source === 'profile' ? 'the profile' : source;
}

/** A JWT, however it was made: registered as a secret before anything can print it. */
function guardJwt(deps: Deps, jwt: string): void {
  guardSecret(deps, jwt);
}

interface Minted {
  jwt: string;
  header: Record<string, unknown>;
  claims: Record<string, unknown> | null;
  expiresAt: string | null;
}

async function runMint(opts: MintOptions, deps: Deps): Promise<void> {
  const resolved = await resolveEmbedSecret(deps, await givenSecret(opts.secret, deps), opts.keyId);
  if (resolved === undefined) throw noEmbedSecret(deps, 'mint a JWT with (or pass --via-api)');
  if (resolved.kid === undefined) {
    throw new UsageError('no key id for the embed secret: the JWT header must name it (kid)', {
      hint: "pass --key-id <kid> or set UGS_EMBED_KEY_ID: the key id shown beside the secret in the vendor's settings",
    });
  }
  const key = embedKey(resolved.secret, sourceWords(resolved.source));
  const nowSeconds = Math.floor(deps.now().getTime() / 1000);
  const claims: EmbedClaims = {
    cst: opts.id,
    dsh: opts.embed,
    exp: nowSeconds + (opts.expires ?? DEFAULT_EXPIRES_SECONDS),
    ...(opts.origin !== undefined && { iss: opts.origin }),
  };
  const jwt = await encryptClaims(claims, key, resolved.kid);
  guardJwt(deps, jwt);
  await printMinted(deps, opts.format, {
    jwt,
    header: { alg: 'dir', enc: 'A256GCM', kid: resolved.kid },
    claims,
    expiresAt: utcTime(claims.exp),
  });
}

/**
 * The JWT alone on stdout (a script's `$(...)` takes it whole), `--json` or one field; at a
 * terminal a note on stderr says what it is for and when it expires.
 */
async function printMinted(deps: Deps, format: OutputFormat, minted: Minted): Promise<void> {
  const out = deps.output;
  const value = {
    jwt: minted.jwt,
    header: minted.header,
    claims: minted.claims,
    expires_at: minted.expiresAt,
  };
  switch (format.kind) {
    case 'json':
      printJson(out, value);
      return;
    case 'field':
      writeLine(out.stdout, formatValue(value[format.name as keyof typeof value]));
      return;
    case 'table': {
      writeLine(out.stdout, minted.jwt);
      if (!out.stderrIsTTY) return;
      const claims = minted.claims;
      const exp = claims?.exp;
      const what =
        claims === null
          ? 'claims not read (no embed secret for them)'
          : message`for customer "${String(claims.cst)}", dashboard "${String(claims.dsh)}"`;
      const when =
        typeof exp === 'number'
          ? `, expires ${utcTime(exp)} (${expiryWords(exp, Math.floor(deps.now().getTime() / 1000))})`
          : '';
      printLine(out, `note: kid ${String(minted.header.kid ?? 'none')}, ${what}${when}`);
      return;
    }
  }
}
