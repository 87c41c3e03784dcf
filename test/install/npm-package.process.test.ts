// The npm package as a user gets it: `npm pack`, then `npm install -g` of the tarball into a
// temporary prefix. It must install without warnings or build steps (dist/ is in the tarball,
// every library bundled in it); its one dependency is the native credential-store binding, which
// cannot be bundled and ships prebuilt per platform. The installed `ugs` must work.
import { readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeRun,
  hasNoticeFor,
  type InProcessEmulator,
  librariesInSourceMaps,
  PACKAGE_VERSION,
  ROOT,
  runShell,
  runUgs,
  startEmulator,
  tempDir,
} from '../kit/index.js';

const NPM_TIMEOUT_MS = 120_000;

let packedFiles: string[] = [];
let install = { code: null as number | null, output: '' };
let prefix = '';
let emulator: InProcessEmulator;

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

beforeAll(async () => {
  const packDir = tempDir('pack');
  prefix = tempDir('prefix');
  // --ignore-scripts: dist/ was built by `npm test` (prepack would build it again, under the
  // other tests' feet).
  const pack = await runShell(
    `npm pack --ignore-scripts --json --pack-destination ${quote(packDir)}`,
    { cwd: ROOT, timeoutMs: NPM_TIMEOUT_MS },
  );
  expect(pack.code, pack.stderr).toBe(0);
  const [packed] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  if (packed === undefined) throw new Error(`npm pack listed nothing: ${pack.stdout}`);
  packedFiles = packed.files.map((file) => file.path);
  // The project's npm cache (npm ci filled it): the registry is asked only for what it lacks.
  const cache = process.env.npm_config_cache ?? join(homedir(), '.npm');
  const installed = await runShell(
    `npm install -g --prefer-offline --no-audit --no-fund --cache ${quote(cache)} --prefix ${quote(prefix)} ${quote(join(packDir, packed.filename))} 2>&1`,
    { timeoutMs: NPM_TIMEOUT_MS },
  );
  install = { code: installed.code, output: installed.stdout };
  emulator = await startEmulator();
}, NPM_TIMEOUT_MS * 2);

afterAll(async () => {
  await emulator?.close();
});

const installedUgs = () => join(prefix, 'bin', 'ugs');
const installedPackage = () => join(prefix, 'lib', 'node_modules', 'ugs');

describe('npm pack, then npm install -g of the tarball', () => {
  it('the tarball holds bin/ and dist/, nothing from test/, bench/, src/ or the binary', () => {
    for (const needed of ['bin/ugs.js', 'bin/package.json', 'dist/main.cjs', 'dist/early.json']) {
      expect(packedFiles).toContain(needed);
    }
    expect(packedFiles).toContain('dist/vendor/undici.cjs');
    for (const path of packedFiles) {
      expect(path).toMatch(/^(bin\/|dist\/|package\.json$|README\.md$|LICEN[CS]E)/);
      expect(path).not.toMatch(/^dist\/bin\//);
    }
  });

  it('carries LICENSE and the licence notice of every library bundled in dist/', () => {
    expect(packedFiles).toContain('LICENSE');
    expect(packedFiles).toContain('dist/THIRD-PARTY-NOTICES');
    const licence = readFileSync(join(installedPackage(), 'LICENSE'), 'utf8');
    expect(licence).toMatch(/^MIT License\n\nCopyright \(c\) /);
    const notices = readFileSync(join(installedPackage(), 'dist', 'THIRD-PARTY-NOTICES'), 'utf8');
    const libraries = librariesInSourceMaps(join(installedPackage(), 'dist'));
    // The libraries ugs is made of, at least: the list is not trivially empty.
    expect(libraries).toEqual(
      expect.arrayContaining([
        'commander',
        'undici',
        'conf',
        'chalk',
        'cli-table3',
        'csv-parse',
        'jose',
      ]),
    );
    for (const library of libraries) expect(hasNoticeFor(notices, library), library).toBe(true);
    // The licence texts themselves, not just the names.
    expect(notices).toContain('Copyright (c) 2011 TJ Holowaychuk');
    expect(notices.match(/Permission is hereby granted/g)?.length).toBeGreaterThan(40);
  });

  it('installs with no warning, no install script, and only the credential-store binding', () => {
    expect(install.code, install.output).toBe(0);
    expect(install.output).not.toMatch(/npm warn|npm error/i);
    expect(readdirSync(join(installedPackage(), 'node_modules'))).toEqual(['@napi-rs']);
    const manifest = JSON.parse(readFileSync(join(installedPackage(), 'package.json'), 'utf8'));
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(['@napi-rs/keyring']);
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) {
      expect(manifest.scripts?.[script], script).toBeUndefined();
    }
    // engines: what the bundles target (esbuild's node20) and undici 7 needs.
    expect(manifest.engines).toEqual({ node: '>=20.18.1' });
  });

  it('the installed ugs prints its version', async () => {
    const result = await runUgs(['--version'], { executable: installedUgs() });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe(`${PACKAGE_VERSION}\n`);
  });

  it('the installed ugs gets a user group from the emulator', async () => {
    const result = await runUgs(
      ['get', '--id', 'acme', '--name', 'Acme', '--base-url', emulator.url, '--json'],
      { executable: installedUgs(), env: { UGS_API_TOKEN: emulator.tokenFor('Customer') } },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      success: 1,
      user_group: { provided_id: 'acme' },
    });
  });

  it('the installed ugs loads the credential-store binding: no Secret Service is said as such', async () => {
    // The token is not one the emulator knows: saved unchecked, so the store is what fails.
    const result = await runUgs(['login', '--no-verify', '--secure-storage', '--with-token'], {
      executable: installedUgs(),
      stdin: 'api-token-0123456789\n',
      env: { UGS_BASE_URL: emulator.url, DBUS_SESSION_BUS_ADDRESS: undefined },
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toMatch(/^error: .*no D-Bus session bus/m);
  });
});
