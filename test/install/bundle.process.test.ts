// Start-up speed comes from the shape of dist/, which these checks pin down (timings
// themselves are measured by `npm run bench`, never in tests: machines are noisy).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIST_MAIN, ROOT, runUgs } from '../kit/index.js';

describe('the bundled build', () => {
  // --debug maps a stack trace back to src/ through these.
  it('the build ships a source map beside every bundle', () => {
    const bundles = [
      join(ROOT, 'dist', 'main.cjs'),
      ...readdirSync(join(ROOT, 'dist', 'vendor'))
        .filter((name) => name.endsWith('.js'))
        .map((name) => join(ROOT, 'dist', 'vendor', name)),
    ];
    const files = new Set([
      ...readdirSync(join(ROOT, 'dist')).map((name) => join(ROOT, 'dist', name)),
      ...readdirSync(join(ROOT, 'dist', 'vendor')).map((name) =>
        join(ROOT, 'dist', 'vendor', name),
      ),
    ]);
    for (const bundle of bundles) expect(files.has(`${bundle}.map`), bundle).toBe(true);
  });

  it('runs: `ugs --version` prints the package version', async () => {
    const result = await runUgs(['--version']);
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${version}\n`);
  });

  it('loads no other file of ours or of node_modules until a command needs it', () => {
    const script = `require(${JSON.stringify(DIST_MAIN)}); console.log(JSON.stringify(Object.keys(require.cache)));`;
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([DIST_MAIN]);
  });

  it('keeps each heavy library out of the main bundle', () => {
    const main = readFileSync(DIST_MAIN, 'utf8');
    // Each a CommonJS bundle, required where it is used: Node's ES-module loader stays unloaded.
    for (const lazy of ['undici', 'prompts', 'table', 'chalk', 'conf', 'emulator']) {
      expect(main).toContain(`require("./vendor/${lazy}.cjs")`);
    }
    // No file of dist/ calls import(): V8's code cache (src/platform/compile-cache.ts) loses its support.
    expect(main).not.toMatch(/\bimport\(/);
    // undici's HTTP parser and conf's schema validator are the two costliest to load.
    expect(main).not.toContain('llhttp');
    // (Conf's `ajvOptions` key, passed from the config module, is the one mention allowed.)
    expect(main.replaceAll('ajvOptions', '')).not.toContain('ajv');
    expect(main).not.toContain('json-schema.org');
  });
});
