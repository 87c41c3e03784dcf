/**
 * The single executable loads the OS credential-store binding (@napi-rs/keyring, a native module
 * that cannot be inside it) from `node_modules` in its own directory only. A require() from there
 * would also search every parent directory's node_modules, NODE_PATH and ~/.node_modules: a
 * module planted in any of them would run inside ugs and be handed the API token. Planted modules
 * here write a marker file when loaded and record any secret they are given.
 *
 * Compiled code is planted too: a compile cache entry for dist/main.cjs (V8 checks little more
 * than the source length) runs inside the next `ugs get`, UGS_API_TOKEN in reach. Node 22+'s
 * default cache folder, `os.tmpdir()/node-compile-cache`, is any local user's to make first.
 */
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  acmeBody,
  BINARY_BUILD_TIMEOUT_MS,
  BINARY_NAME,
  describeRun,
  expectFailure,
  IS_ROOT,
  json,
  makeSandbox,
  NOBODY,
  ROOT,
  runUgs,
  type Sandbox,
  singleExecutable,
  skipOutsideCi,
  startServer,
  tempDir,
} from '../kit/index.js';

const NAME = BINARY_NAME;
let BUILT: string;
const API_TOKEN = 'api-token-planted-modules-7d3e';
const PLATFORM = '@napi-rs/keyring-ugs-test-platform';

beforeAll(async () => {
  BUILT = await singleExecutable();
}, BINARY_BUILD_TIMEOUT_MS);

/** A module at `<nodeModules>/<name>` that records its loading (and any secret) under `markers`. */
function plant(nodeModules: string, name: string, markers: string, label: string, body = ''): void {
  const dir = join(nodeModules, ...name.split('/'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, main: 'index.js' }));
  const marker = JSON.stringify(join(markers, label));
  writeFileSync(
    join(dir, 'index.js'),
    `const fs = require('node:fs');
fs.appendFileSync(${marker}, 'loaded\\n');
${body}
class AsyncEntry {
  constructor(service, account) { this.account = account; }
  async setPassword(secret) { fs.appendFileSync(${marker}, 'secret ' + secret + '\\n'); }
  async getPassword() { return undefined; }
  async deleteCredential() { return false; }
}
module.exports = { AsyncEntry };
`,
  );
}

/**
 * The binary in `<root>/outer/apps/bin/`, with planted modules two levels up
 * (`<root>/outer/node_modules`), in NODE_PATH and in the sandbox HOME's `.node_modules`.
 */
type Place = 'ancestor' | 'node-path' | 'home';
const PLACES: readonly Place[] = ['ancestor', 'node-path', 'home'];

function layout(places: readonly Place[] = PLACES) {
  const root = tempDir('planting');
  const markers = join(root, 'markers');
  mkdirSync(markers);
  const binDir = join(root, 'outer', 'apps', 'bin');
  mkdirSync(binDir, { recursive: true });
  const binary = join(binDir, NAME);
  copyFileSync(BUILT, binary);
  const sandbox = makeSandbox();
  const nodePath = join(root, 'node-path');
  const planted = [
    [join(root, 'outer', 'node_modules'), 'ancestor'],
    [nodePath, 'node-path'],
    [join(sandbox.home, '.node_modules'), 'home'],
  ] as const;
  for (const [dir, label] of planted.filter(([, label]) => places.includes(label))) {
    plant(dir, '@napi-rs/keyring', markers, `${label}-keyring`);
    plant(dir, PLATFORM, markers, `${label}-platform`);
  }
  const login = () =>
    runUgs(
      [
        'login',
        '--no-verify',
        '--secure-storage',
        '--with-token',
        '--base-url',
        'https://ugs.example.com',
      ],
      {
        executable: binary,
        sandbox,
        stdin: API_TOKEN,
        env: { NODE_PATH: nodePath, PATH: tempDir('empty-path') },
      },
    );
  const marked = () => readdirSync(markers).sort();
  const markerText = (label: string) => readFileSync(join(markers, label), 'utf8');
  return { binDir, markers, login, marked, markerText };
}

describe('the single executable loads @napi-rs/keyring only from node_modules beside it', () => {
  it.each([...PLACES.map((place) => [place, [place]] as const), ['all three', PLACES] as const])(
    'planted in %s, none beside it: exit 2, nothing planted loaded, the token nowhere',
    async (_label, places) => {
      const { login, marked } = layout(places);
      const result = await login();
      const { error } = expectFailure(result, 2);
      expect(error).toMatch(
        /could not be loaded: the single-file ugs binary has no OS credential store binding/,
      );
      expect(marked()).toEqual([]);
    },
  );

  it('the one beside it is loaded and given the token; its dependencies resolve beside it only', async () => {
    const { binDir, markers, login, marked, markerText } = layout();
    // Like the real package: it asks for its platform binding by name, and copes without it.
    plant(
      join(binDir, 'node_modules'),
      '@napi-rs/keyring',
      markers,
      'beside-keyring',
      `try { require('${PLATFORM}'); } catch (error) { fs.appendFileSync(${JSON.stringify(join(markers, 'beside-keyring'))}, 'no platform: ' + error.code + '\\n'); }`,
    );
    const first = await login();
    expect(first.code, describeRun(first)).toBe(0);
    expect(marked()).toEqual(['beside-keyring']);
    expect(markerText('beside-keyring')).toBe(
      `loaded\nno platform: MODULE_NOT_FOUND\nsecret ${API_TOKEN}\n`,
    );

    // With the platform package beside it as well, that one is what loads.
    plant(join(binDir, 'node_modules'), PLATFORM, markers, 'beside-platform');
    const second = await login();
    expect(second.code, describeRun(second)).toBe(0);
    expect(marked()).toEqual(['beside-keyring', 'beside-platform']);
  });

  it.runIf(process.platform === 'linux')(
    'the real package beside it loads, native binding and all, and planted ones stay unloaded',
    async () => {
      const { binDir, login, marked } = layout();
      for (const name of readdirSync(join(ROOT, 'node_modules', '@napi-rs'))) {
        if (!name.startsWith('keyring')) continue;
        cpSync(
          join(ROOT, 'node_modules', '@napi-rs', name),
          join(binDir, 'node_modules', '@napi-rs', name),
          { recursive: true },
        );
      }
      // No D-Bus session here: the binding loaded, then the Secret Service was out of reach.
      const result = await login();
      const { error } = expectFailure(result, 2);
      expect(error).toMatch(
        /^cannot save the API token in the Secret Service: (?!.*could not be loaded)/,
      );
      expect(marked()).toEqual([]);
    },
  );

  it.runIf(process.platform === 'linux')(
    'the real package beside it without its platform binding: a planted binding is not loaded',
    async () => {
      const { binDir, markers, login, marked } = layout([]);
      cpSync(
        join(ROOT, 'node_modules', '@napi-rs', 'keyring'),
        join(binDir, 'node_modules', '@napi-rs', 'keyring'),
        { recursive: true },
      );
      // The names the real package asks for on this machine, planted two levels up.
      for (const libc of ['gnu', 'musl']) {
        const name = `@napi-rs/keyring-linux-${process.arch}-${libc}`;
        plant(join(binDir, '..', '..', 'node_modules'), name, markers, `ancestor-${libc}`);
      }
      const result = await login();
      const { error } = expectFailure(result, 2);
      expect(error).toMatch(/could not be loaded/);
      expect(marked()).toEqual([]);
    },
  );
});

/** How another local user leaves a cache folder for ugs to find. */
type Planter = 'owned by nobody' | 'writable by others';

/**
 * A cache folder as an attacker leaves it at `dir`: a folder per Node version with an entry in
 * it, and a file named as ugs's Node 20 cache names them. Owned by `nobody` (0755: root, which
 * runs these tests, can still write there) or writable by others (0757).
 */
function plantCacheFolder(dir: string, how: Planter): void {
  const version = join(dir, `${process.version}-${process.arch}-planted`);
  mkdirSync(version, { recursive: true });
  writeFileSync(join(version, 'entry'), 'planted compiled code');
  writeFileSync(join(dir, 'main.cjs-planted.v8'), 'planted compiled code');
  for (const path of [dir, version]) {
    if (how === 'owned by nobody') {
      chmodSync(path, 0o755);
      chownSync(path, NOBODY, NOBODY);
    } else {
      chmodSync(path, 0o757);
    }
  }
}

/** Every entry under `dir` with its size, mode, owner and modification time: any write shows. */
function snapshot(dir: string): string[] {
  return ['', ...readdirSync(dir, { recursive: true, encoding: 'utf8' })].sort().map((name) => {
    const stats = lstatSync(join(dir, name));
    return `${name} ${stats.size} ${stats.mode.toString(8)} ${stats.uid} ${stats.mtimeMs}`;
  });
}

/** `ugs get` (twice: a cache written by the first run is read by the second) of `executable`. */
async function getTwice(sandbox: Sandbox, tmp: string, executable?: string): Promise<void> {
  const server = await startServer(json(200, acmeBody()));
  try {
    for (let run = 0; run < 2; run++) {
      const result = await runUgs(['get', '--id', 'acme', '--name', 'Acme Corp', '--json'], {
        sandbox,
        ...(executable === undefined ? {} : { executable }),
        env: { UGS_API_TOKEN: API_TOKEN, UGS_BASE_URL: server.url, TMPDIR: tmp },
      });
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stdout).toContain('Acme Corp');
      // Off silently: not a word about the cache.
      expect(result.stderr).toBe('');
    }
  } finally {
    await server.close();
  }
}

describe('compiled code planted in a cache folder by another local user never runs', () => {
  /** The sandbox and the folders planted: Node's default (in TMPDIR) and every ugs cache path. */
  function plantedSandbox(
    how: Planter,
    where: 'the folders ugs uses' | "ugs's cache folder itself",
  ) {
    const sandbox = makeSandbox();
    const tmp = join(sandbox.root, 'tmp');
    mkdirSync(tmp);
    const ugsCache = join(sandbox.home, '.cache', 'ugs');
    const planted = [join(tmp, 'node-compile-cache')];
    if (where === 'the folders ugs uses') {
      // The exact folders ugs would use: Node 22+'s cache, and ugs's own on Node 20.
      mkdirSync(ugsCache, { recursive: true, mode: 0o700 });
      planted.push(
        join(ugsCache, 'node-compile-cache'),
        join(ugsCache, `v8-${process.version}-${process.arch}`),
      );
    } else {
      // ugs's cache folder itself, no folder of ugs's in it yet: whoever owns it or may write to
      // it can swap any folder made there for one of their own.
      planted.push(ugsCache);
    }
    for (const dir of planted) plantCacheFolder(dir, how);
    return { sandbox, tmp, planted };
  }

  it.for([
    ['owned by nobody', 'the folders ugs uses'],
    ['writable by others', 'the folders ugs uses'],
    ['owned by nobody', "ugs's cache folder itself"],
    ['writable by others', "ugs's cache folder itself"],
  ] as const)(
    "%s, planted at Node's default and %s: neither read nor written, and ugs works",
    async ([how, where], context) => {
      if (how === 'owned by nobody' && !IS_ROOT) {
        skipOutsideCi(context, 'making a folder owned by another user needs root');
      }
      const { sandbox, tmp, planted } = plantedSandbox(how, where);
      const before = planted.map(snapshot);
      await getTwice(sandbox, tmp);
      expect(planted.map(snapshot)).toEqual(before);
    },
  );

  it('the single executable keeps no compile cache: nothing in the temporary folder or its own', async () => {
    const sandbox = makeSandbox();
    const tmp = join(sandbox.root, 'tmp');
    mkdirSync(tmp);
    const planted = join(tmp, 'node-compile-cache');
    plantCacheFolder(planted, 'writable by others');
    const before = snapshot(planted);
    await getTwice(sandbox, tmp, BUILT);
    expect(snapshot(planted)).toEqual(before);
    expect(readdirSync(sandbox.home)).not.toContain('.cache');
  });
});
