// The README's first command: start the bundled emulator on a free port, then walk through what
// support staff and scripts do with ugs, printing each command before its output. Uses a
// temporary config directory and removes it afterwards; nothing but loopback is contacted.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'ugs.js');
const configDir = mkdtempSync(join(tmpdir(), 'ugs-demo-'));
const env = { ...process.env, UGS_CONFIG_DIR: configDir };
for (const name of ['UGS_API_TOKEN', 'UGS_BASE_URL', 'UGS_PROFILE', 'UGS_CA_FILE'])
  delete env[name];
const bold = (text) =>
  process.stdout.isTTY && !process.env.NO_COLOR ? `\x1b[1m${text}\x1b[22m` : text;

const emulator = spawn(process.execPath, [bin, 'serve', '--port', '0', '--json'], {
  env,
  stdio: ['ignore', 'pipe', 'inherit'],
});
let failed = false;
try {
  const { url, apiTokens } = await firstJsonLine(emulator);
  const apiToken = apiTokens.find((t) => t.environment === 'Customer').token;
  say(`The emulator is listening on ${url} (state in memory, config in ${configDir}).`);

  await show(['login', '--base-url', url, '--with-token'], {
    stdin: apiToken,
    shown: 'printenv API_TOKEN | ugs login --base-url URL --with-token',
  });
  await show(['status']);
  await show([
    'get',
    '--id',
    'acme',
    '--name',
    'Acme Corp',
    '--mapping',
    'sales=acme_sales_db',
    '--property',
    'plan=pro',
  ]);
  await show(['get', '--id', 'acme', '--name', 'Acme Corp']);
  await show(['get', '--id', 'acme', '--name', 'Acme Corp', '--json']);
  const oldToken = (
    await run(['get', '--id', 'acme', '--name', 'Acme Corp', '--field', 'token'])
  ).stdout.trim();
  say(
    `Scripts take one field: ugs get --id acme --name "Acme Corp" --field token -> ${oldToken.slice(0, 12)}...`,
  );
  await show(['rotate', '--current-token-stdin', '--yes'], {
    stdin: oldToken,
    shown: 'printenv OLD_TOKEN | ugs rotate --current-token-stdin --yes',
  });
  say('The previous token is now refused:');
  const refused = await show(['rotate', '--current-token-stdin', '--yes'], {
    stdin: oldToken,
    shown: 'printenv OLD_TOKEN | ugs rotate --current-token-stdin --yes',
    expectCode: 1,
  });
  if (refused !== 1) throw new Error(`expected exit code 1 for the old token, got ${refused}`);
  await customerApi();
  say('Done: every command above ran against the local emulator.');
} catch (error) {
  failed = true;
  console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  emulator.kill('SIGTERM');
  await new Promise((resolve) => emulator.once('exit', resolve));
  rmSync(configDir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;

/**
 * The vendor's Customer API (`ugs serve --dialect customer`, a second emulator): what only it
 * offers, listing, reading without creating, changing and deleting groups, under a profile of
 * its own.
 */
async function customerApi() {
  const vendor = spawn(
    process.execPath,
    [bin, 'serve', '--port', '0', '--json', '--dialect', 'customer'],
    { env, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const { url, apiTokens } = await firstJsonLine(vendor);
    const apiToken = apiTokens.find((t) => t.environment === 'Customer').token;
    say(
      `A second emulator speaks the vendor's Customer API on ${url}: list, show, update, delete.`,
    );
    await show(
      ['login', '-p', 'vendor', '--dialect', 'customer', '--base-url', url, '--with-token'],
      {
        stdin: apiToken,
        shown: `printenv API_TOKEN | ugs login -p vendor --dialect customer --base-url ${url} --with-token`,
      },
    );
    for (const [id, name] of [
      ['acme', 'Acme Corp'],
      ['globex', 'Globex'],
      ['initech', 'Initech'],
    ]) {
      await run(['get', '-p', 'vendor', '--id', id, '--name', name]);
    }
    say('Three groups were created with `ugs get -p vendor --id ... --name ...`.');
    await show(['list', '-p', 'vendor']);
    await show([
      'update',
      '-p',
      'vendor',
      '--id',
      'acme',
      '--name',
      'Acme Corporation',
      '--tag',
      'eu',
    ]);
    await show(['show', '-p', 'vendor', '--id', 'acme']);
    await show(['delete', '-p', 'vendor', '--id', 'initech', '--yes']);
    await show(['list', '-p', 'vendor', '--json']);
    say('A group that was deleted is gone: show is exit 1, and nothing is created.');
    await show(['show', '-p', 'vendor', '--id', 'initech'], { expectCode: 1 });
  } finally {
    vendor.kill('SIGTERM');
    await new Promise((resolve) => vendor.once('exit', resolve));
  }
}

function say(text) {
  console.log(`\n${text}`);
}

function firstJsonLine(child) {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      lines.close();
      resolve(JSON.parse(line));
    });
    child.once('exit', (code) => reject(new Error(`the emulator exited early (code ${code})`)));
  });
}

/** Runs ugs with its output shown as it comes; returns the exit code. */
async function show(args, options = {}) {
  console.log(`\n${bold(`$ ${options.shown ?? `ugs ${args.map(quote).join(' ')}`}`)}`);
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env,
      stdio: ['pipe', 'inherit', 'inherit'],
    });
    child.stdin.end(options.stdin ?? '');
    child.once('exit', resolve);
  });
  if (code !== (options.expectCode ?? 0)) throw new Error(`ugs ${args[0]} exited with ${code}`);
  if (code !== 0) console.log(`(exit code ${code})`);
  return code;
}

async function run(args) {
  const child = spawn(process.execPath, [bin, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`ugs ${args[0]} exited with ${code}`);
  return { stdout };
}

function quote(arg) {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `"${arg}"`;
}
