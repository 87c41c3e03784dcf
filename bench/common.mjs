// Helpers shared by the benchmarks (run.mjs: start-up and single requests; bulk.mjs: --from runs).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The environment for a timed command: no undefined values, no profile, CA file or CI switch. */
export function cleanEnv(env) {
  const result = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) result[key] = value;
  for (const key of ['UGS_PROFILE', 'UGS_CA_FILE', 'CI']) delete result[key];
  return result;
}

/**
 * `ugs serve` on a free port with one Customer API token of its own, its state under `work`.
 * Returns the child (to kill at the end) and the token; `firstJsonLine(emulator)` gives the URL.
 * `extra`: more `serve` arguments; with `pipeStderr` its stderr (the access log with --debug) is
 * the caller's to read.
 */
export function startEmulator(root, work, extra = [], pipeStderr = false) {
  const apiToken = randomBytes(24).toString('hex');
  const emulator = spawn(
    process.execPath,
    [
      join(root, 'bin', 'ugs.js'),
      'serve',
      '--port',
      '0',
      '--json',
      '--api-token',
      `${apiToken}:Customer`,
      ...extra,
    ],
    {
      stdio: ['ignore', 'pipe', pipeStderr ? 'pipe' : 'inherit'],
      env: { ...process.env, UGS_CONFIG_DIR: work },
    },
  );
  started.add(emulator);
  emulator.once('exit', () => started.delete(emulator));
  return { emulator, apiToken };
}

/** The first stdout line of `ugs serve --json`, parsed. */
export function firstJsonLine(child) {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => resolve(JSON.parse(line)));
    child.once('exit', (code) => reject(new Error(`the emulator exited early (code ${code})`)));
  });
}

export function median(values) {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function printTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    cells
      .map((cell, i) => String(cell).padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
}

/** `--flag N` from `args`: a whole number of at least 1, or `fallback` when absent. */
export function numberArg(args, flag, fallback) {
  const at = args.indexOf(flag);
  if (at === -1) return fallback;
  const value = Number(args[at + 1]);
  if (!Number.isInteger(value) || value < 1) fail(`${flag} needs a whole number`);
  return value;
}

/** Emulators started by startEmulator, stopped by fail() too: none is left running behind. */
const started = new Set();

export function fail(message) {
  console.error(`bench: ${message}`);
  for (const child of started) child.kill('SIGTERM');
  process.exit(2);
}
