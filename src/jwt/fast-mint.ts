/**
 * The fast path of `ugs jwt` (dist/jwt-mint.cjs, required by bin/ugs.js before main.cjs): the
 * plain local mint that CI runs, `ugs jwt --id X --embed Y [--expires D] [--origin U] [--key-id
 * K] [--json | --field F]` with the secret in UGS_EMBED_SECRET, printed into a pipe. Loading
 * main.cjs (commander and every command) costs more than Node's own start; this path loads only
 * this file and jose, so a mint starts within 1.5x of `node -e 0` (bench/run.mjs).
 *
 * It prints exactly what the command prints (the same functions check and format), and takes
 * nothing that could differ: any other flag or global option, a terminal on stdout or stderr, a
 * CI runner (its masks), a profile or config file in play, or a value that does not pass its
 * check, and it declines before printing anything: main.cjs then runs the command, and reports
 * what is wrong. test/operations/jwt-fast.process.test.ts holds both paths to the same output.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { checkGroupText } from '../input/parse.js';
import { compactJson, prettyJson } from '../text/json-text.js';
import { encryptClaims } from './crypto.js';
import {
  checkKeyId,
  DEFAULT_EXPIRES_SECONDS,
  type EmbedClaims,
  embedKey,
  parseExpires,
  parseOrigin,
  utcTime,
} from './embed.js';

type Env = Readonly<Record<string, string | undefined>>;

interface Prepared {
  claims: EmbedClaims;
  key: Uint8Array;
  kid: string;
  format: { kind: 'plain' } | { kind: 'json' } | { kind: 'field'; name: string };
}

const VALUE_FLAGS = new Set(['--id', '--embed', '--expires', '--origin', '--key-id', '--field']);
const FIELDS = new Set(['jwt', 'header', 'claims', 'expires_at']);

/** The config file as src/config/config.ts finds it (configDir), for `defaultProfile` only. */
function configPath(env: Env): string {
  if (env.UGS_CONFIG_DIR) return join(env.UGS_CONFIG_DIR, 'config.json');
  const home = homedir();
  if (process.platform === 'darwin') {
    return join(home, 'Library', 'Preferences', 'ugs', 'config.json');
  }
  if (process.platform === 'win32') {
    return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'ugs', 'Config', 'config.json');
  }
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'ugs', 'config.json');
}

/**
 * A config file that names a default profile makes main check that profile: declined. A file
 * without one (or none at all) changes nothing for a secret from the environment.
 */
function configInPlay(env: Env): boolean {
  let text: string;
  try {
    text = readFileSync(configPath(env), 'utf8');
  } catch (error) {
    return (error as { code?: unknown }).code !== 'ENOENT';
  }
  try {
    const data = JSON.parse(text) as unknown;
    return typeof data !== 'object' || data === null || 'defaultProfile' in data;
  } catch {
    return true;
  }
}

/** What to mint, or undefined to leave the run to main.cjs. Never throws. */
export function prepare(
  args: readonly string[],
  env: Env,
  terminal: boolean,
  nowMs: number,
): Prepared | undefined {
  try {
    if (terminal) return undefined;
    // A CI runner wants its masks written first; a profile, and the settings main checks
    // before any command (settings.ts: a bad UGS_API_PATH is an error), are main's to read.
    for (const name of [
      'GITHUB_ACTIONS',
      'TF_BUILD',
      'UGS_PROFILE',
      'UGS_DIALECT',
      'UGS_API_PATH',
    ]) {
      if (env[name] !== undefined) return undefined;
    }
    const values = new Map<string, string>();
    let json = false;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] as string;
      if (arg === '--json' && !json) {
        json = true;
        continue;
      }
      const eq = arg.indexOf('=');
      const name = eq > 0 ? arg.slice(0, eq) : arg;
      if (!VALUE_FLAGS.has(name) || values.has(name)) return undefined;
      const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
      // A value that looks like a flag is commander's to read (or refuse).
      if (value === undefined || value.startsWith('-')) return undefined;
      values.set(name, value);
    }
    const id = values.get('--id');
    const embed = values.get('--embed');
    const field = values.get('--field');
    const secret = env.UGS_EMBED_SECRET;
    const kidText = values.get('--key-id') ?? env.UGS_EMBED_KEY_ID;
    if (id === undefined || embed === undefined || !secret || !kidText) return undefined;
    if (json && field !== undefined) return undefined;
    if (field !== undefined && !FIELDS.has(field)) return undefined;
    if (embed.trim() === '' || /\p{Cc}/u.test(embed)) return undefined;
    if (configInPlay(env)) return undefined;
    const expires = values.get('--expires');
    const origin = values.get('--origin');
    const claims: EmbedClaims = {
      cst: checkGroupText(id, '--id', 'id'),
      dsh: embed,
      exp:
        Math.floor(nowMs / 1000) +
        (expires === undefined ? DEFAULT_EXPIRES_SECONDS : parseExpires(expires)),
      ...(origin !== undefined && { iss: parseOrigin(origin) }),
    };
    return {
      claims,
      key: embedKey(secret, 'env UGS_EMBED_SECRET'),
      kid: checkKeyId(kidText, '--key-id'),
      format: json
        ? { kind: 'json' }
        : field === undefined
          ? { kind: 'plain' }
          : { kind: 'field', name: field },
    };
  } catch {
    // Any value that fails its check: main reports it, as the command does.
    return undefined;
  }
}

/** The text the command prints for `prepared` (printMinted's, byte for byte). */
export async function mint(prepared: Prepared): Promise<string> {
  const jwt = await encryptClaims(prepared.claims, prepared.key, prepared.kid);
  const value = {
    jwt,
    header: { alg: 'dir', enc: 'A256GCM', kid: prepared.kid },
    claims: prepared.claims,
    expires_at: utcTime(prepared.claims.exp),
  };
  switch (prepared.format.kind) {
    case 'plain':
      return `${jwt}\n`;
    case 'json':
      return `${prettyJson(value)}\n`;
    case 'field': {
      const shown = value[prepared.format.name as keyof typeof value];
      return `${typeof shown === 'string' ? shown : compactJson(shown)}\n`;
    }
  }
}
