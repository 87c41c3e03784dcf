/**
 * The single executable loads the OS credential-store binding (@napi-rs/keyring, a native module
 * that cannot be inside it) from `node_modules` in its own directory only. A require() from there
 * would also search every parent directory's node_modules, NODE_PATH and ~/.node_modules: a
 * module planted in any of them would run inside ugs and be handed the API token. Planted modules
 * here write a marker file when loaded and record any secret they are given.
 */
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BINARY_BUILD_TIMEOUT_MS,
  BINARY_NAME,
  describeRun,
  expectFailure,
  makeSandbox,
  ROOT,
  runUgs,
  singleExecutable,
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
