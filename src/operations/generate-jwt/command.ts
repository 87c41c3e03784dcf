/**
 * `ugs jwt`: the JWT an embedded dashboard is given. By default it is minted here, with the embed
 * secret (`src/jwt/`: a compact JWE, `dir` + `A256GCM`, as the vendor documents it); with
 * `--via-api` the Customer API mints it (`generate_jwt/`). `ugs jwt inspect` reads one: its
 * header always, and with the secret its claims and expiry, exit 1 when the dashboard would
 * refuse it (expired, another key, another customer or dashboard, no JWE at all).
 *
 * The secret and every JWT are registered with the `--debug` tracer (last 4 only) and, under a CI
 * runner, masked before anything is printed; neither is ever written to the token history.
 */
import type { Command } from 'commander';
import { checkOffered } from '../../cli/dialects.js';
import { type DepsFactory, newCommand } from '../../cli/shared.js';
import { resolveTarget } from '../../context/credentials.js';
import {
  type EmbedSecretSource,
  guardSecret,
  noEmbedSecret,
  type ResolvedEmbedSecret,
  resolveEmbedSecret,
} from '../../context/embed-secret.js';
import type { Deps } from '../../context/factory.js';
import { ApiError, InvalidJwtError, UsageError } from '../../errors.js';
import { checkGroupText } from '../../input/parse.js';
import {
  decryptClaims,
  encryptClaims,
  UnreadableJweError,
  WrongKeyError,
} from '../../jwt/crypto.js';
import {
  checkKeyId,
  DEFAULT_EXPIRES_SECONDS,
  type EmbedClaims,
  embedKey,
  expiryWords,
  isoDuration,
  parseExpires,
  parseOrigin,
  readCompact,
  utcTime,
} from '../../jwt/embed.js';
import { printLine, printMessage } from '../../output/messages.js';
import {
  formatValue,
  type OutputFormat,
  printFieldTable,
  printJson,
  withJsonErrorBody,
} from '../../output/results.js';
import { canPrompt, readStdin, writeLine } from '../../platform/io.js';
import { message } from '../../text/message.js';
import { readExisting } from '../get-customer/operation.js';
import { type GenerateJwtRequest, generateJwt } from './operation.js';

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
  /** `--chart`: the API's `chart_id` (`--via-api` only). */
  chart: string | undefined;
  viaApi: boolean;
  secret: SecretFlag;
  format: OutputFormat;
}

export interface InspectOptions {
  action: 'inspect';
  /** The JWT from argv; undefined: from stdin (`-`) or asked at a terminal. */
  jwt: string | undefined;
  jwtFromStdin: boolean;
  id: string | undefined;
  embed: string | undefined;
  /** `--check`: ask the service whether the customer exists (customer dialect). */
  check: boolean;
  keyId: string | undefined;
  secret: SecretFlag;
  json: boolean;
}

export type JwtOptions = MintOptions | InspectOptions;

interface MintFlags {
  id?: string;
  embed?: string;
  expires?: string;
  origin?: string;
  keyId?: string;
  chart?: string;
  viaApi?: boolean;
  secretStdin?: boolean;
  secret?: string;
  json?: boolean;
  field?: string;
}

interface InspectFlags {
  id?: string;
  embed?: string;
  check?: boolean;
  keyId?: string;
  secretStdin?: boolean;
  secret?: string;
  json?: boolean;
}

/** What `--json` prints of a JWT, and the fields `--field` may name. */
const MINTED_FIELDS = ['jwt', 'header', 'claims', 'expires_at'] as const;

const SECRET_IN_ARGV_WARNING =
  'warning: --secret puts the embed secret in your shell history and in process lists; set UGS_EMBED_SECRET, pipe it to --secret-stdin, or save it with `ugs login --embed-secret-stdin`';

const JWT_IN_ARGV_WARNING =
  'warning: a JWT on the command line lands in your shell history and in process lists; pass - and pipe it in, or leave it out to paste it at a masked prompt';

export function jwtCommand(makeDeps: DepsFactory, run = runJwt): Command {
  const command = newCommand(
    'jwt',
    'Mint the JWT an embedded dashboard is given (or inspect one)',
    [
      'ugs jwt --id acme --embed sales-overview          # minted here with the embed secret',
      'ugs jwt --id acme --embed sales-overview --expires 2h --origin https://app.example.com',
      'JWT=$(ugs jwt --id acme --embed sales-overview --field jwt)',
      'ugs jwt --via-api --id acme --embed sales-overview  # the service mints it (customer dialect)',
      'printenv JWT | ugs jwt inspect -                  # header, claims, expiry; exit 1 if invalid',
    ],
  )
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
    .option('--chart <chart_id>', 'with --via-api: a JWT for one chart of the dashboard (chart_id)')
    .option('--via-api', 'have the service mint it (generate_jwt/, --dialect customer)')
    .option('--secret-stdin', 'read the embed secret from stdin')
    .option('--secret <secret>', 'the embed secret, or - for stdin (visible in process lists)')
    .option('--json', 'print {jwt, header, claims, expires_at} as JSON')
    .option('--field <name>', 'print one of jwt, header, claims, expires_at');
  command.action(async (flags: MintFlags, cmd: Command) => {
    await run(parseMintFlags(flags), makeDeps(cmd));
  });
  command.addCommand(
    newCommand('inspect', 'Read an embed JWT: header, claims, expiry; exit 1 if invalid', [
      'printenv JWT | ugs jwt inspect -',
      'ugs jwt inspect                                   # asks for the JWT (masked)',
      'ugs jwt inspect - --id acme --embed sales-overview < jwt.txt',
      'ugs jwt inspect - --check < jwt.txt               # does the customer exist? (customer dialect)',
    ])
      .argument('[jwt]', 'the JWT, or - to read it from stdin')
      .option('--id <provided_id>', 'exit 1 unless the JWT names this customer (cst)')
      .option('--embed <embed_id>', 'exit 1 unless the JWT names this dashboard (dsh)')
      .option('--check', 'ask the service whether the customer exists (--dialect customer)')
      .option('--key-id <kid>', "the embed secret's key id, for the messages")
      .option('--secret-stdin', 'read the embed secret from stdin')
      .option('--secret <secret>', 'the embed secret (visible in process lists)')
      .option('--json', 'print {header, claims, expires_at, expired, problems} as JSON')
      .action(async (jwt: string | undefined, flags: InspectFlags, cmd: Command) => {
        // Commander gives a flag that both `jwt` and `inspect` declare (--id, --json, ...) to
        // `jwt`, wherever it stands (the program does not use positional options): inspect reads
        // them from there, and refuses what only minting takes.
        const parent = (cmd.parent?.opts() ?? {}) as MintFlags;
        const mintOnly = (
          [
            ['--expires', parent.expires],
            ['--origin', parent.origin],
            ['--chart', parent.chart],
            ['--via-api', parent.viaApi],
            ['--field', parent.field],
          ] as const
        ).find(([, value]) => value !== undefined);
        if (mintOnly !== undefined) {
          throw new UsageError(`${mintOnly[0]} is not an option of jwt inspect`, {
            hint: 'jwt inspect takes --id, --embed, --check, --key-id, --secret-stdin and --json',
          });
        }
        const { expires: _e, origin: _o, chart: _c, viaApi: _v, field: _f, ...shared } = parent;
        await run(parseInspectFlags(jwt, { ...shared, ...flags }), makeDeps(cmd));
      }),
  );
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
  const viaApi = flags.viaApi === true;
  if (flags.chart !== undefined && !viaApi) {
    // The vendor documents no claim for a chart in the local form: guessing one would make a
    // JWT that the dashboard reads differently from what was asked.
    throw new UsageError(
      '--chart needs --via-api: the local JWT has no documented claim for a chart',
    );
  }
  const secret = secretFlag(flags);
  // With --via-api a secret is not needed, but is used when given: it reads the claims back.
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
    chart: flags.chart === undefined ? undefined : checkEmbedId(flags.chart, '--chart'),
    viaApi,
    secret,
    format,
  };
}

export function parseInspectFlags(jwt: string | undefined, flags: InspectFlags): InspectOptions {
  const secret = secretFlag(flags);
  const jwtFromStdin = jwt === '-';
  if (jwtFromStdin && secret?.kind === 'stdin') {
    throw new UsageError('the JWT and the embed secret cannot both come from stdin', {
      hint: 'set UGS_EMBED_SECRET (or save it with ugs login --embed-secret-stdin) and pipe the JWT',
    });
  }
  if (jwt !== undefined && !jwtFromStdin && jwt.trim() === '') {
    throw new UsageError('the JWT cannot be empty');
  }
  return {
    action: 'inspect',
    jwt: jwtFromStdin ? undefined : jwt?.trim(),
    jwtFromStdin,
    id: flags.id === undefined ? undefined : checkGroupText(flags.id, '--id', 'id'),
    embed: flags.embed === undefined ? undefined : checkEmbedId(flags.embed, '--embed'),
    check: flags.check === true,
    keyId: flags.keyId === undefined ? undefined : checkKeyId(flags.keyId, '--key-id'),
    secret,
    json: flags.json === true,
  };
}

export async function runJwt(opts: JwtOptions, deps: Deps): Promise<void> {
  if (opts.action === 'inspect') await runInspect(opts, deps);
  else if (opts.viaApi) await runViaApi(opts, deps);
  else await runMint(opts, deps);
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

async function runViaApi(opts: MintOptions, deps: Deps): Promise<void> {
  // Only the Customer API mints JWTs: exit 2 in another dialect, before anything is read or sent.
  checkOffered(deps, 'jwt --via-api', generateJwt);
  const given = await givenSecret(opts.secret, deps);
  const target = await resolveTarget(deps);
  const request: GenerateJwtRequest = {
    provided_id: opts.id,
    embed_id: opts.embed,
    ...(opts.keyId !== undefined && { key_id: opts.keyId }),
    // As an ISO 8601 duration, as the API takes it; absent: the service's own 24 hours.
    ...(opts.expires !== undefined && { expiration: isoDuration(opts.expires) }),
    ...(opts.chart !== undefined && { chart_id: opts.chart }),
    ...(opts.origin !== undefined && { embed_origin: opts.origin }),
  };
  const client = await deps.connect(target);
  const jsonErrors: OutputFormat = opts.format.kind === 'json' ? opts.format : { kind: 'table' };
  const result = await withJsonErrorBody(deps.output, jsonErrors, () =>
    opts.format.kind === 'table'
      ? deps.progress.during(message`Asking the service for a JWT for ${opts.id}`, () =>
          client.generateJwt(request),
        )
      : client.generateJwt(request),
  );
  const { jwt } = result;
  guardJwt(deps, jwt);
  const read = readCompact(jwt);
  const header = read.kind === 'garbage' ? {} : read.header;
  if (read.kind !== 'jwe') {
    await printMessage(
      deps.output,
      read.kind === 'jws'
        ? 'warning: the service answered a JWS (a signed JWT), not the JWE an embedded dashboard takes'
        : `warning: the service's "jwt" is not a compact JWE: ${read.why}`,
      'warning',
    );
  }
  // With a secret at hand (given, in the environment or the profile), the claims are read back:
  // a JWT the service encrypted with another key than yours is the first thing to know.
  let claims: Record<string, unknown> | null = null;
  const resolved =
    read.kind === 'jwe' ? await resolveEmbedSecret(deps, given, opts.keyId) : undefined;
  if (resolved !== undefined) {
    try {
      claims = await decryptClaims(jwt, embedKey(resolved.secret, sourceWords(resolved.source)));
    } catch (error) {
      if (!(error instanceof WrongKeyError || error instanceof UnreadableJweError)) throw error;
      await printMessage(
        deps.output,
        message`warning: the service's JWT is not encrypted with your embed secret (${sourceWords(resolved.source)}; the JWT names kid ${String(header.kid ?? 'none')})`,
        'warning',
      );
    }
  }
  const exp = claims?.exp;
  await printMinted(deps, opts.format, {
    jwt,
    header,
    claims,
    expiresAt: typeof exp === 'number' ? utcTime(exp) : null,
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

async function readJwtInput(opts: InspectOptions, deps: Deps): Promise<string> {
  const interactive = canPrompt(deps.io, deps.settings.noInput);
  if (opts.jwt !== undefined) {
    guardJwt(deps, opts.jwt);
    if (interactive) await printMessage(deps.output, JWT_IN_ARGV_WARNING, 'warning');
    return opts.jwt;
  }
  if (opts.jwtFromStdin) {
    const text = (await readStdin(deps.io, 'jwt inspect -')).trim();
    if (text === '') throw new UsageError('jwt inspect -: stdin was empty; pipe the JWT in');
    guardJwt(deps, text);
    return text;
  }
  if (!interactive) {
    throw new UsageError('missing the JWT to inspect', {
      hint: 'pipe it in: printenv JWT | ugs jwt inspect -',
    });
  }
  const text = (
    await deps.prompter.password('Embed JWT:', {
      validate: (value) => value.trim() !== '' || 'paste the JWT',
    })
  ).trim();
  guardJwt(deps, text);
  return text;
}

async function runInspect(opts: InspectOptions, deps: Deps): Promise<void> {
  if (opts.check) checkOffered(deps, 'jwt inspect --check', generateJwt);
  const jwt = await readJwtInput(opts, deps);
  const read = readCompact(jwt);
  if (read.kind === 'garbage') {
    if (opts.json)
      printJson(deps.output, {
        header: null,
        claims: null,
        expires_at: null,
        expired: null,
        problems: ['not a JWT'],
      });
    throw new InvalidJwtError(`this is not a JWT: ${read.why}`, {
      hint: 'copy the JWT again, whole (it is five base64url parts joined by dots)',
    });
  }
  const { header } = read;
  if (read.kind === 'jws') {
    await printInspected(deps, opts, header, null, ['a JWS, not a JWE']);
    throw new InvalidJwtError(
      message`this is a JWS (a signed JWT, alg ${String(header.alg)}), not the JWE an embedded dashboard takes`,
      { hint: 'embed JWTs are encrypted (alg dir, enc A256GCM): mint one with ugs jwt' },
    );
  }
  if (header.alg !== 'dir' || header.enc !== 'A256GCM') {
    await printInspected(deps, opts, header, null, ['another JWE form']);
    throw new InvalidJwtError(
      message`this JWE is alg ${String(header.alg)}, enc ${String(header.enc)}; embed JWTs are alg dir, enc A256GCM`,
    );
  }
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  const resolved = await resolveEmbedSecret(deps, await givenSecret(opts.secret, deps), opts.keyId);
  if (resolved === undefined) {
    if (opts.id !== undefined || opts.embed !== undefined || opts.check) {
      throw noEmbedSecret(deps, 'read the claims with (--id, --embed and --check need them)');
    }
    await printInspected(deps, opts, header, null, []);
    printLine(
      deps.output,
      "note: the claims are encrypted: give the embed secret (UGS_EMBED_SECRET, --secret-stdin, or the profile's) to read them and check the expiry",
    );
    return;
  }
  const key = embedKey(resolved.secret, sourceWords(resolved.source));
  let claims: Record<string, unknown>;
  try {
    claims = await decryptClaims(jwt, key);
  } catch (error) {
    if (error instanceof WrongKeyError) {
      await printInspected(deps, opts, header, null, ['wrong key']);
      throw new InvalidJwtError(
        message`not encrypted with this embed secret (kid ${kid ?? 'none'})`,
        { hint: wrongKeyHint(kid, resolved) },
      );
    }
    if (error instanceof UnreadableJweError) {
      await printInspected(deps, opts, header, null, ['unreadable']);
      throw new InvalidJwtError(message`the JWE cannot be read: ${error.reason}`);
    }
    throw error;
  }
  const problems = claimProblems(claims, opts, Math.floor(deps.now().getTime() / 1000));
  await printInspected(
    deps,
    opts,
    header,
    claims,
    problems.map((p) => p.short),
  );
  if (problems.length > 0) {
    throw new InvalidJwtError(problems.map((p) => p.text).join('; '), {
      hint: problems[0]?.hint,
    });
  }
  if (opts.check) await checkCustomer(deps, String(claims.cst));
}

function wrongKeyHint(kid: string | undefined, resolved: ResolvedEmbedSecret): string {
  const yours = resolved.kid === undefined ? 'no key id given' : `key id ${resolved.kid}`;
  if (kid !== undefined && resolved.kid !== undefined && kid !== resolved.kid) {
    return message`the JWT names key ${kid}; the embed secret used (${sourceWords(resolved.source)}) is ${yours}: use the secret of key ${kid}, or mint the JWT again with this one`;
  }
  return `the embed secret used (${sourceWords(resolved.source)}, ${yours}) is not the one it was made with: the key was rotated in the vendor's settings, or the JWT comes from another environment; mint it again`;
}

interface Problem {
  short: string;
  text: string;
  hint: string;
}

/** Why a dashboard would refuse these claims: expired, another customer, another dashboard. */
function claimProblems(
  claims: Record<string, unknown>,
  opts: InspectOptions,
  now: number,
): Problem[] {
  const problems: Problem[] = [];
  const { exp, cst, dsh } = claims;
  if (typeof exp !== 'number') {
    problems.push({
      short: 'no exp',
      text: 'the JWT has no "exp" time',
      hint: 'mint it again with ugs jwt',
    });
  } else if (exp <= now) {
    problems.push({
      short: 'expired',
      text: `the JWT ${expiryWords(exp, now)} (at ${utcTime(exp)})`,
      hint: 'mint a new one (ugs jwt ... --expires 2h); a dashboard refuses an expired JWT as "invalid token"',
    });
  }
  if (opts.id !== undefined && cst !== opts.id) {
    problems.push({
      short: 'another customer',
      text: message`the JWT is for customer "${String(cst)}", not "${opts.id}"`,
      hint: 'mint it with --id set to the customer the page shows',
    });
  }
  if (opts.embed !== undefined && dsh !== opts.embed) {
    problems.push({
      short: 'another dashboard',
      text: message`the JWT is for dashboard "${String(dsh)}", not "${opts.embed}"`,
      hint: 'mint it with --embed set to the embed id of the dashboard on the page',
    });
  }
  return problems;
}

/** `--check`: the customer the JWT names exists on the service (Get Customer; nothing created). */
async function checkCustomer(deps: Deps, id: string): Promise<void> {
  const target = await resolveTarget(deps);
  const client = await deps.connect(target);
  try {
    // Not recorded in the token history: the check only reads, and the JWT is no group token.
    await readExisting(client, id);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new InvalidJwtError(
        message`the JWT's customer "${id}" does not exist on the service: a dashboard refuses it`,
        { hint: 'create it with ugs get, or mint the JWT for an existing customer', cause: error },
      );
    }
    throw error;
  }
  printLine(deps.output, message`the service has customer "${id}"`);
}

async function printInspected(
  deps: Deps,
  opts: InspectOptions,
  header: Record<string, unknown>,
  claims: Record<string, unknown> | null,
  problems: readonly string[],
): Promise<void> {
  const now = Math.floor(deps.now().getTime() / 1000);
  const exp = claims?.exp;
  if (opts.json) {
    printJson(deps.output, {
      header,
      claims,
      expires_at: typeof exp === 'number' ? utcTime(exp) : null,
      expired: typeof exp === 'number' ? exp <= now : null,
      problems,
    });
    return;
  }
  const text = (value: unknown) => (value === undefined ? null : formatValue(value));
  const rows: [string, string | null][] = [
    ['alg', text(header.alg)],
    ['enc', text(header.enc)],
    ['kid', text(header.kid)],
  ];
  for (const [name, value] of Object.entries(header)) {
    if (!['alg', 'enc', 'kid'].includes(name)) rows.push([`header ${name}`, text(value)]);
  }
  if (claims !== null) {
    for (const [name, value] of Object.entries(claims)) {
      rows.push([
        name,
        name === 'exp' && typeof value === 'number'
          ? `${value} (${utcTime(value)}, ${expiryWords(value, now)})`
          : text(value),
      ]);
    }
  }
  await printFieldTable(deps.output, rows);
}
