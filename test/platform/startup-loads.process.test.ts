// What one `ugs get --json` loads: only dist/main.cjs and undici's bundle, no code of a command
// it does not run (bulk, doctor, completion, the emulator), no prompts, tables, colours or Conf,
// and none of the Node built-ins that only HTTPS, HTTP/2 or ES modules need. Timings are for
// `npm run bench` (its "ugs get --json vs node:http script" rows); this pins down the shape.
//
// The built binary runs with a `--require` probe that records, at exit, the files loaded through
// require() and Node's list of loaded built-ins; each dist file's source map names the modules
// bundled into it.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  makeSandbox,
  ROOT,
  runUgs,
  type Sandbox,
  useService,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-startup-loads-5150aabb';
const DIST = join(ROOT, 'dist');

const PROBE = `'use strict';
process.on('exit', () => {
  require('node:fs').writeFileSync(process.env.UGS_TEST_LOADS, JSON.stringify({
    files: Object.keys(require.cache),
    builtins: process.moduleLoadList,
  }));
});
`;

/** Modules a single-row get must not load (source paths as the source maps name them). */
const NOT_LOADED: readonly RegExp[] = [
  /^src\/bulk\//,
  /^src\/doctor\//,
  /^src\/emulator\//,
  /^src\/cli\/completion-engine\.ts$/,
  // Doctor's network probes (DNS, TCP, TLS one by one).
  /^src\/transport\/network\.ts$/,
  // The history's reader: a get only appends (log.ts); reading is for history, whois, the typo guard.
  /^src\/history\/read\.ts$/,
  /node_modules\/(@inquirer|cli-table3|conf|ajv|chalk|csv-parse|csv-stringify|yocto-spinner)\//,
];

const NODE_ITSELF = builtinsOfNodeItself();

/**
 * Built-ins that only HTTPS, HTTP/2, crypto or an ES module would load, and node:assert (undici
 * loads it when one of its assertions fails).
 */
const BUILTINS_NOT_LOADED = [
  'NativeModule assert',
  'NativeModule http2',
  'NativeModule tls',
  'NativeModule crypto',
  'NativeModule internal/modules/esm/module_job',
].filter((builtin) => !NODE_ITSELF.includes(builtin));

/**
 * The built-ins this Node loads before any script's code runs: not ugs's doing. (Node 24.22
 * loads the ES module job at start for every script; 20 and 22 do not.)
 */
function builtinsOfNodeItself(): string[] {
  const loaded = execFileSync(process.execPath, [], {
    input: 'process.stdout.write(JSON.stringify(process.moduleLoadList))',
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return JSON.parse(loaded) as string[];
}

/** The modules bundled into a dist file, relative to the repository, from its source map. */
function bundledSources(file: string): string[] {
  const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((source) =>
    relative(ROOT, resolve(dirname(file), source)).replaceAll('\\', '/'),
  );
}

const service = useService([API_TOKEN]);

interface Loads {
  files: string[];
  builtins: string[];
}

const GET = ['get', '--id', 'acme', '--name', 'Acme Corp', '--json'];

async function loadsOf(
  sb: Sandbox,
  env: Record<string, string>,
  args: readonly string[] = GET,
  stdin = '',
  expectOutput: (stdout: string) => void = (stdout) =>
    expect(JSON.parse(stdout)).toMatchObject({ user_group: { provided_id: 'acme' } }),
): Promise<Loads> {
  const probe = join(sb.root, 'loads-probe.cjs');
  const out = join(sb.root, 'loads.json');
  writeFileSync(probe, PROBE);
  const result = await runUgs(args, {
    sandbox: sb,
    stdin,
    env: { NODE_OPTIONS: `--require ${probe}`, UGS_TEST_LOADS: out, ...env },
  });
  expect(result.code, describeRun(result)).toBe(0);
  expectOutput(result.stdout);
  return JSON.parse(readFileSync(out, 'utf8')) as Loads;
}

/**
 * The token history's fingerprints are HMAC-SHA-256 (node:crypto, ~1 ms of built-ins): loaded
 * only when the history is written, never with `--no-history`/UGS_NO_HISTORY=1.
 */
function expectSingleRequestLoads(loads: Loads, history = true): void {
  const distFiles = loads.files
    .filter((file) => file.startsWith(`${DIST}/`))
    .map((file) => relative(DIST, file))
    .sort();
  // Where Node has no compile cache of its own, bin/ugs.js loads ugs's (src/platform/compile-cache.ts).
  const nodeCompileCache = 'enableCompileCache' in Module;
  expect(distFiles).toEqual([
    ...(nodeCompileCache ? [] : ['compile-cache.cjs']),
    'main.cjs',
    'vendor/undici.cjs',
  ]);
  const sources = distFiles.flatMap((file) => bundledSources(join(DIST, file)));
  const unwanted = sources.filter((source) => NOT_LOADED.some((pattern) => pattern.test(source)));
  expect(unwanted, 'modules a single get does not run').toEqual([]);
  for (const builtin of BUILTINS_NOT_LOADED) {
    if (history && builtin === 'NativeModule crypto') continue;
    expect(loads.builtins).not.toContain(builtin);
  }
}

describe('a single-row `ugs get --json` over http://', () => {
  it('with the token from UGS_API_TOKEN, loads main.cjs and undici only', async () => {
    const sb = makeSandbox();
    const env = { UGS_API_TOKEN: API_TOKEN, UGS_BASE_URL: service.url };
    expectSingleRequestLoads(await loadsOf(sb, env));
    // Again, with the compiled code cached by the first run.
    expectSingleRequestLoads(await loadsOf(sb, env));
  });

  it('without the token history (UGS_NO_HISTORY=1), loads no node:crypto either', async () => {
    const sb = makeSandbox();
    const env = { UGS_API_TOKEN: API_TOKEN, UGS_BASE_URL: service.url, UGS_NO_HISTORY: '1' };
    expectSingleRequestLoads(await loadsOf(sb, env), false);
  });

  it('with the token from a saved profile, loads main.cjs and undici only (no Conf)', async () => {
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
    const loads = await loadsOf(sb, {});
    expectSingleRequestLoads(loads);
  });
});

describe('a single `ugs rotate --yes --json` over http://', () => {
  it('loads main.cjs and undici only', async () => {
    const sb = makeSandbox();
    const env = { UGS_API_TOKEN: API_TOKEN, UGS_BASE_URL: service.url };
    const created = await runUgs(GET, { sandbox: sb, env });
    const token = (JSON.parse(created.stdout) as { user_group: { token: string } }).user_group
      .token;
    const args = ['rotate', '--current-token-stdin', '--yes', '--json'];
    expectSingleRequestLoads(await loadsOf(sb, env, args, token));
  });
});

describe('a local `ugs jwt` (minted with the embed secret)', () => {
  const env = {
    UGS_EMBED_SECRET: 'embed-secret-0123456789abcdefXYZ',
    UGS_EMBED_KEY_ID: 'k1',
    UGS_NO_HISTORY: '1',
  };
  const jwtOutput = (stdout: string) =>
    expect(stdout).toMatch(/^[\w-]+\.\.[\w-]+\.[\w-]+\.[\w-]+\n$/);

  it('loads its fast path and jose only: not main.cjs, no undici, no other command', async () => {
    const sb = makeSandbox();
    const loads = await loadsOf(
      sb,
      env,
      ['jwt', '--id', 'acme', '--embed', 'sales'],
      '',
      jwtOutput,
    );
    const distFiles = loads.files
      .filter((file) => file.startsWith(`${DIST}/`))
      .map((file) => relative(DIST, file))
      .filter((file) => file !== 'compile-cache.cjs')
      .sort();
    expect(distFiles).toEqual(['jwt-mint.cjs', 'vendor/jose.cjs']);
    const sources = distFiles.flatMap((file) => bundledSources(join(DIST, file)));
    expect(sources.filter((source) => NOT_LOADED.some((pattern) => pattern.test(source)))).toEqual(
      [],
    );
    for (const builtin of ['NativeModule http2', 'NativeModule tls', 'NativeModule assert']) {
      expect(loads.builtins).not.toContain(builtin);
    }
  });

  it('jose is bundled into vendor/jose.cjs alone: a get or a rotate never loads it', () => {
    const main = bundledSources(join(DIST, 'main.cjs'));
    expect(main.filter((source) => source.includes('node_modules/jose/'))).toEqual([]);
    const jose = bundledSources(join(DIST, 'vendor', 'jose.cjs'));
    expect(jose.some((source) => source.includes('node_modules/jose/'))).toBe(true);
    expect(
      jose.filter((source) => source.startsWith('src/') && source !== 'src/vendor/jose.ts'),
    ).toEqual([]);
  });
});

describe('the lazy chunks of dist/', () => {
  // jwt-mint.cjs is no chunk: the fast path of `ugs jwt` (src/jwt/fast-mint.ts) runs alone and
  // declines before main.cjs is loaded, so its copies of our modules never meet main's.
  const chunkFiles = readdirSync(DIST).filter(
    (name) => name.endsWith('.cjs') && name !== 'jwt-mint.cjs',
  );

  it('hold the bulk engine, doctor and the completion engine, out of main.cjs', () => {
    expect(chunkFiles).toEqual(
      expect.arrayContaining(['main.cjs', 'bulk-run.cjs', 'doctor-index.cjs']),
    );
    const main = bundledSources(join(DIST, 'main.cjs'));
    for (const module of ['src/bulk/run.ts', 'src/doctor/checks.ts', 'src/transport/network.ts']) {
      expect(main).not.toContain(module);
    }
    expect(main).not.toContain('src/cli/completion-engine.ts');
  });

  it('bundle each module of ours once, so every class exists once per process', () => {
    const owner = new Map<string, string>();
    for (const file of chunkFiles) {
      for (const source of bundledSources(join(DIST, file))) {
        if (!source.startsWith('src/')) continue;
        expect(owner.get(source), `${source} is in ${owner.get(source)} and ${file}`).toBe(
          undefined,
        );
        owner.set(source, file);
      }
    }
  });

  it('throw the errors main.cjs knows: a usage error from the bulk engine exits 2 with its hint', async () => {
    const sb = makeSandbox();
    const input = join(sb.root, 'rows.csv');
    writeFileSync(input, 'user_group_id,name\n,Acme Corp\n');
    const result = await runUgs(['get', '--from', input], {
      sandbox: sb,
      env: { UGS_API_TOKEN: API_TOKEN, UGS_BASE_URL: service.url },
    });
    // A second copy of the error classes would make it an "unexpected failure" (exit 1).
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('user_group_id is missing');
    expect(result.stderr).toMatch(/^hint: /m);
    expect(result.stderr).not.toContain('unexpected failure');
  });
});
