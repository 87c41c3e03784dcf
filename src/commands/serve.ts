import type { Command } from 'commander';
import { collect, type DepsFactory, newCommand } from '../cli/shared.js';
import type { Deps } from '../context/factory.js';
import type { FaultSpec, RunningEmulator } from '../emulator/server.js';
import { UsageError } from '../errors.js';
import { type EmbedSecret, parseEmbedSecretSpec } from '../jwt/embed.js';
import { type Env, writeLine } from '../platform/io.js';
import { type Dialect, parseDialect } from '../service/dialect.js';
import { parseRate, type Rate } from '../service/rate.js';

export interface ServeOptions {
  host: string;
  port: number;
  dataFile: string | undefined;
  apiTokens: string[];
  faults: string[];
  seed: number | undefined;
  json: boolean;
  log: boolean;
  trailingSlash: boolean;
  dialect: Dialect;
  rateLimit: Rate | undefined;
  /** `--embed-secret KID:SECRET`: generate_jwt/ and the embed check use these keys. */
  embedSecrets?: EmbedSecret[];
}

/**
 * What `serve` takes from the factory: the streams, the emulator, and the wait for SIGINT or
 * SIGTERM (`system.waitForShutdown` resolves with the signal's name).
 */
export type ServeDeps = Pick<Deps, 'io' | 'startEmulator'> & {
  system: Pick<Deps['system'], 'waitForShutdown'>;
};

interface ServeFlags {
  port: string;
  host: string;
  data?: string;
  apiToken: string[];
  fault: string[];
  seed?: string;
  json?: boolean;
  trailingSlash?: boolean;
  rateLimit?: string;
  embedSecret?: string[];
  /** The global `--dialect`. */
  dialect?: string;
}

export function serveCommand(makeDeps: DepsFactory, run = runServe): Command {
  return newCommand('serve', 'Run a local emulator of the User Group Service', [
    'ugs serve                                    # http://127.0.0.1:4010, prints its API tokens',
    'ugs serve --port 0 --data ./ugs-state.json --api-token dev-token:Testing',
    'ugs serve --api-token rw-key:Customer --api-token ro-key:Customer:ro   # a read-only key too',
    'ugs serve --fault 502-html:0.2 --fault reset:0.05 --seed 42   # test your scripts against failures',
    "ugs serve --trailing-slash                   # route /api/user/ like the vendor's service",
    "ugs serve --dialect explo --rate-limit 180/min   # the vendor's published API and limit",
    'ugs serve --dialect customer --embed-secret k1:$EMBED_SECRET   # generate_jwt/, embed checks',
  ])
    .option('--port <n>', 'port to listen on (0 picks a free one)', '4010')
    .option('--host <addr>', 'address to listen on', '127.0.0.1')
    .option('--data <file>', 'keep state in this file (saved after every change)')
    .option(
      '--api-token <token:environment[:ro]>',
      'accept this API token for Customer or Testing; :ro makes it read-only (refused every call that changes data, 403), :rw or nothing read-write (repeatable; default: one read-write token of each environment, generated)',
      collect,
      [],
    )
    .option(
      '--fault <kind:rate>',
      'inject faults: 500, 502-html, 504-html, 429, reset, slow or commit-reset, rate 0..1, optionally :for=3s from the first request (repeatable)',
      collect,
      [],
    )
    .option('--seed <n>', 'make fault injection repeatable')
    .option('--json', 'print the URL and API tokens as one line of JSON')
    .option(
      '--trailing-slash',
      'route /api/user/ and redirect /api/user to it with a 301, as the Django service does',
    )
    .option(
      '--rate-limit <n/s|n/min>',
      "throttle each client IP as Django REST Framework does (429 with Retry-After), e.g. 180/min, the vendor's limit",
    )
    .option(
      '--embed-secret <kid:secret>',
      'an embed secret (32 bytes) for generate_jwt/ and POST /api/embed/check/ (repeatable)',
      collect,
      [],
    )
    .action(async (_flags: ServeFlags, cmd: Command) => {
      // The emulator needs no settings beyond the preferences: an invalid UGS_API_PATH must not
      // stop it. `--dialect` is the global option (or UGS_DIALECT), read here alone.
      const deps = makeDeps(cmd, { checkSettings: false });
      const flags = cmd.optsWithGlobals<ServeFlags>();
      await run(parseServeFlags(flags, deps.preferences.debug, deps.io.env), deps);
    });
}

export function parseServeFlags(flags: ServeFlags, log: boolean, env: Env = {}): ServeOptions {
  const port = Number(flags.port);
  if (!/^\d+$/.test(flags.port) || port > 65535) {
    throw new UsageError(`--port expects a number from 0 to 65535, got "${flags.port}"`);
  }
  // node binds every interface for an empty host: refuse it rather than expose the emulator.
  if (flags.host.trim() === '') {
    throw new UsageError('--host is empty, which would listen on every interface', {
      hint: 'give an address: --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface, on purpose)',
    });
  }
  if (flags.seed !== undefined && !/^-?\d+$/.test(flags.seed)) {
    throw new UsageError(`--seed expects a whole number, got "${flags.seed}"`);
  }
  return {
    host: flags.host,
    port,
    dataFile: flags.data,
    apiTokens: flags.apiToken,
    faults: flags.fault,
    seed: flags.seed === undefined ? undefined : Number(flags.seed),
    json: flags.json === true,
    log,
    trailingSlash: flags.trailingSlash === true,
    dialect:
      flags.dialect !== undefined
        ? parseDialect(flags.dialect, '--dialect')
        : env.UGS_DIALECT
          ? parseDialect(env.UGS_DIALECT, 'UGS_DIALECT')
          : 'interface',
    rateLimit:
      flags.rateLimit === undefined ? undefined : parseRate(flags.rateLimit, '--rate-limit'),
    // Only when given: a run without them parses to what it always did.
    ...(flags.embedSecret?.length && { embedSecrets: embedSecretsOf(flags.embedSecret) }),
  };
}

/**
 * `--embed-secret KID:SECRET`, each checked (32 bytes) and no key id twice. The emulator's keys
 * are test keys, given in argv like its API tokens: never a production secret.
 */
function embedSecretsOf(specs: readonly string[]): EmbedSecret[] {
  const secrets = specs.map((spec) => parseEmbedSecretSpec(spec));
  const kids = secrets.map((secret) => secret.kid);
  const twice = kids.find((kid, i) => kids.indexOf(kid) !== i);
  if (twice !== undefined) throw new UsageError(`--embed-secret: key id ${twice} is given twice`);
  return secrets;
}

/**
 * The URL a client on this machine uses. A wildcard address (`0.0.0.0`, `::`) is where the
 * emulator listens, not where to connect: Windows refuses to connect to it, and `ugs login`
 * would take it for a remote host that needs --insecure-http. The loopback address of the same
 * family reaches the same listener everywhere.
 */
export function localUrl(listening: string): string {
  const url = new URL(listening);
  const host = url.hostname.toLowerCase();
  if (host === '0.0.0.0' || host === '[::ffff:0:0]') {
    url.hostname = '127.0.0.1';
  } else if (host === '[::]') {
    url.hostname = '[::1]';
  } else {
    return listening;
  }
  return url.href.replace(/\/$/, '');
}

export async function runServe(opts: ServeOptions, deps: ServeDeps): Promise<void> {
  const { io } = deps;
  // The emulator is loaded only by this command: nothing else pays for it at startup.
  const emulator = await import('../emulator/server.js');
  // A bad spec names its flag; the spec itself is never quoted: it holds the token.
  const apiTokens = opts.apiTokens.map((spec) => {
    try {
      return emulator.parseApiTokenSpec(spec);
    } catch (error) {
      if (!(error instanceof emulator.EmulatorSpecError)) throw error;
      throw new UsageError(`--api-token: ${error.message}`, {
        hint: 'give it as <token>:<Customer|Testing>, with :ro for a read-only token, e.g. --api-token dev-token:Testing:ro',
        cause: error,
      });
    }
  });
  let running: RunningEmulator;
  try {
    const faults: FaultSpec[] = opts.faults.map((spec) => emulator.parseFaultSpec(spec));
    running = await deps.startEmulator({
      host: opts.host,
      port: opts.port,
      apiTokens,
      faults,
      ...(opts.dataFile !== undefined && { dataFile: opts.dataFile }),
      ...(opts.seed !== undefined && { seed: opts.seed }),
      ...(opts.trailingSlash && { trailingSlash: true }),
      ...(opts.dialect !== 'interface' && { dialect: opts.dialect }),
      ...(opts.rateLimit !== undefined && { rateLimit: opts.rateLimit }),
      ...(opts.log && { log: (line: string) => writeLine(io.stderr, line) }),
      // Every embed JWT shown to POST /api/embed/check/ is reported, --debug or not.
      ...(opts.embedSecrets?.length && { embedSecrets: opts.embedSecrets }),
      notice: (line: string) => writeLine(io.stderr, line),
    });
  } catch (error) {
    if (error instanceof emulator.EmulatorStartError) {
      throw new UsageError(`cannot start the emulator: ${error.message}`, { cause: error });
    }
    throw error;
  }
  // Listen for SIGINT/SIGTERM before announcing the URL: a script that reads the banner and
  // signals at once must get a clean stop, not Node's default death by signal.
  const shutdown = deps.system.waitForShutdown();
  const local = localUrl(running.url);
  if (opts.json) {
    // `url` is what a script on this machine passes to --base-url; `listening` tells it that
    // the emulator is reachable from elsewhere too.
    writeLine(
      io.stdout,
      JSON.stringify({
        url: local,
        ...(local !== running.url && { listening: running.url }),
        apiTokens: running.apiTokens,
      }),
    );
  } else {
    const where = local === running.url ? '' : ` (every interface; from this machine: ${local})`;
    writeLine(io.stdout, `ugs emulator listening on ${running.url}${where}`);
    writeLine(io.stdout, 'API tokens:');
    // One per line, so a token is copied with a double click and nothing else; a read-only one
    // says so before it, so that a login with it is not a surprise when `get` is refused.
    for (const t of running.apiTokens) {
      writeLine(io.stdout, `  ${t.environment}  ${t.readOnly ? 'read-only  ' : ''}${t.token}`);
    }
    const dialect = opts.dialect === 'interface' ? '' : ` --dialect ${opts.dialect}`;
    writeLine(
      io.stdout,
      `Next: ugs login${dialect} --base-url ${local}   (paste one of the tokens)`,
    );
  }
  const signal = await shutdown;
  await running.close();
  writeLine(io.stderr, `ugs emulator stopped (${signal})`);
}
