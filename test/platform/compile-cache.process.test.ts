// The compile cache of src/platform/compile-cache.ts (bin/ugs.js installs it where Node has no
// module.enableCompileCache(), i.e. Node 20). The mechanism is driven here directly in a child
// Node process, whatever this Node's version, on a small bundle of its own in a dist directory of
// the test. The built binary is run on whichever Node runs the tests: Node 20 takes that path,
// 22.1+ Node's own cache in the folder bin/ugs.js checks. Cache folders planted by another user
// are in test/platform/module-planting.process.test.ts.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { userCacheDir } from '../../src/platform/compile-cache.js';
import {
  describeRun,
  json,
  makeSandbox,
  ROOT,
  runUgs,
  type Sandbox,
  startServer,
  tempDir,
} from '../kit/index.js';

const COMPILE_CACHE = join(ROOT, 'dist', 'compile-cache.cjs');
const CACHE_DIR = `v8-${process.version}-${process.arch}`;

interface Fixture {
  dist: string;
  cacheHome: string;
  /** Where the cache files go. */
  cacheDir: string;
}

/** A dist directory with a bundle that requires another file of it, and a cache home. */
function fixture(): Fixture {
  const root = tempDir('compile-cache');
  const dist = join(root, 'dist');
  mkdirSync(dist);
  writeFileSync(
    join(dist, 'main.cjs'),
    `const { Shared } = require('./shared.cjs');
module.exports = { answer: () => new Shared().value * 2, Shared };\n`,
  );
  writeFileSync(
    join(dist, 'shared.cjs'),
    'class Shared { value = 21 }\nmodule.exports = { Shared };\n',
  );
  const cacheHome = join(root, 'cache');
  return { dist, cacheHome, cacheDir: join(cacheHome, 'ugs', CACHE_DIR) };
}

/** Runs Node with the cache installed for `f.dist`, then requires its main.cjs. */
function runWithCache(f: Fixture, env: Record<string, string> = {}) {
  const script = `
const installed = require(${JSON.stringify(COMPILE_CACHE)}).installCompileCache({
  distDir: ${JSON.stringify(f.dist)}, env: process.env, platform: process.platform,
  homedir: '', flags: 'test',
});
const main = require(${JSON.stringify(join(f.dist, 'main.cjs'))});
const again = require(${JSON.stringify(join(f.dist, 'shared.cjs'))});
console.log(JSON.stringify({ installed, answer: main.answer(), same: main.Shared === again.Shared }));
`;
  const result = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', XDG_CACHE_HOME: f.cacheHome, ...env },
  });
  expect(result.status, result.stderr).toBe(0);
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout) as { installed: boolean; answer: number; same: boolean };
}

const cacheFiles = (f: Fixture) => (existsSync(f.cacheDir) ? readdirSync(f.cacheDir).sort() : []);

describe('the compile cache for dist/*.cjs', () => {
  it('writes one private file per bundle after a run, and the next run reads it unchanged', () => {
    const f = fixture();
    expect(runWithCache(f)).toEqual({ installed: true, answer: 42, same: true });
    const files = cacheFiles(f);
    expect(files).toHaveLength(2);
    expect(files.map((name) => name.replace(/-\d+-\d+-\d+-/, '-N-'))).toEqual([
      'main.cjs-N-test.v8',
      'shared.cjs-N-test.v8',
    ]);
    if (process.platform !== 'win32') {
      expect(statSync(f.cacheDir).mode & 0o777).toBe(0o700);
      for (const name of files) expect(statSync(join(f.cacheDir, name)).mode & 0o777).toBe(0o600);
    }
    const written = files.map((name) => statSync(join(f.cacheDir, name)).mtimeMs);
    expect(runWithCache(f)).toEqual({ installed: true, answer: 42, same: true });
    expect(files.map((name) => statSync(join(f.cacheDir, name)).mtimeMs)).toEqual(written);
  });

  it('never runs code cached for an older file: a changed bundle gets a cache file of its own', () => {
    const f = fixture();
    runWithCache(f);
    const before = cacheFiles(f).filter((name) => name.startsWith('shared.cjs'));
    // Same length, other code: V8 alone (it checks the length) would accept the old data.
    writeFileSync(
      join(f.dist, 'shared.cjs'),
      'class Shared { value = 12 }\nmodule.exports = { Shared };\n',
    );
    expect(runWithCache(f).answer).toBe(24);
    // ... which replaces the old one: an update leaves no garbage behind.
    const shared = cacheFiles(f).filter((name) => name.startsWith('shared.cjs'));
    expect(shared).toHaveLength(1);
    expect(shared).not.toEqual(before);
  });

  it('compiles as usual and replaces a cache file V8 refuses (corrupt, or from another V8)', () => {
    const f = fixture();
    runWithCache(f);
    for (const name of cacheFiles(f)) writeFileSync(join(f.cacheDir, name), 'not V8 data');
    expect(runWithCache(f)).toEqual({ installed: true, answer: 42, same: true });
    for (const name of cacheFiles(f)) {
      expect(statSync(join(f.cacheDir, name)).size).toBeGreaterThan('not V8 data'.length);
    }
  });

  it('is off with NODE_DISABLE_COMPILE_CACHE=1, as Node its own', () => {
    const f = fixture();
    expect(runWithCache(f, { NODE_DISABLE_COMPILE_CACHE: '1' })).toEqual({
      installed: false,
      answer: 42,
      same: true,
    });
    expect(existsSync(f.cacheHome)).toBe(false);
  });

  it.skipIf(process.platform === 'win32')(
    'does not use a cache directory others can write to, or a link',
    () => {
      const shared = fixture();
      mkdirSync(shared.cacheDir, { recursive: true });
      chmodSync(shared.cacheDir, 0o777);
      expect(runWithCache(shared).installed).toBe(false);
      expect(cacheFiles(shared)).toEqual([]);

      const linked = fixture();
      const elsewhere = tempDir('elsewhere');
      mkdirSync(join(linked.cacheHome, 'ugs'), { recursive: true });
      symlinkSync(elsewhere, linked.cacheDir);
      expect(runWithCache(linked).installed).toBe(false);
      expect(readdirSync(elsewhere)).toEqual([]);
    },
  );

  it('lives in the platform cache directory', () => {
    expect(userCacheDir({ XDG_CACHE_HOME: '/x' }, 'linux', '/home/u')).toBe('/x/ugs');
    expect(userCacheDir({}, 'linux', '/home/u')).toBe('/home/u/.cache/ugs');
    expect(userCacheDir({}, 'darwin', '/Users/u')).toBe('/Users/u/Library/Caches/ugs');
    expect(userCacheDir({ LOCALAPPDATA: 'C:\\L' }, 'win32', 'C:\\U')).toMatch(/ugs.Cache$/);
    expect(userCacheDir({}, 'linux', '')).toBe(undefined);
  });
});

/** Node 22.1+ keeps the cache itself, in the folder bin/ugs.js hands it; Node 20 has ugs's. */
const NODE_CACHE = 'enableCompileCache' in Module;

/** Where ugs keeps compiled code on this Node, in a sandbox (XDG_CACHE_HOME is `~/.cache`). */
function cacheFolder(sb: Sandbox): string {
  return join(sb.home, '.cache', 'ugs', NODE_CACHE ? 'node-compile-cache' : CACHE_DIR);
}

/** Every file under `dir` (Node's cache puts them in a folder per Node version), sorted. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => statSync(join(dir, name)).isFile())
    .sort();
}

/**
 * A TMPDIR of the sandbox's own: Node's default cache folder, `os.tmpdir()/node-compile-cache`,
 * is then where the test can see it (and not the machine's shared one).
 */
function sandboxTmp(sb: Sandbox): { dir: string; nodeDefault: string } {
  const dir = join(sb.root, 'tmp');
  mkdirSync(dir, { recursive: true });
  return { dir, nodeDefault: join(dir, 'node-compile-cache') };
}

/** A directory at `dir` with exactly `mode` (mkdir's mode passes through the umask). */
function madeWithMode(dir: string, mode: number): string {
  mkdirSync(dir);
  chmodSync(dir, mode);
  return dir;
}

const LOGIN = ['login', '--no-verify', '--with-token', '--base-url', 'http://127.0.0.1:9'];

describe("ugs keeps its compiled code in the user's own cache folder, on every Node", () => {
  it('makes the folder 0700 (its parents too), runs a command loaded on demand, then again from it', async () => {
    const sb = makeSandbox();
    const tmp = sandboxTmp(sb);
    for (let run = 0; run < 2; run++) {
      const result = await runUgs(LOGIN, {
        sandbox: sb,
        stdin: 'apitoken-compile-cache-1234abcd',
        env: { TMPDIR: tmp.dir },
      });
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stderr).not.toMatch(/Warning|import/);
    }
    const files = filesUnder(cacheFolder(sb));
    if (NODE_CACHE) {
      // Node's own format: a folder per Node version, a file per module.
      expect(files.length).toBeGreaterThanOrEqual(2);
    } else {
      expect(files.some((name) => name.startsWith('main.cjs-'))).toBe(true);
      // Conf, which login writes through, is a bundle of its own, loaded on demand.
      expect(files.some((name) => name.startsWith('conf.cjs-'))).toBe(true);
    }
    if (process.platform !== 'win32') {
      for (const dir of [
        join(sb.home, '.cache'),
        join(sb.home, '.cache', 'ugs'),
        cacheFolder(sb),
      ]) {
        expect(statSync(dir).mode & 0o777, dir).toBe(0o700);
      }
    }
    // Never Node's default, the temporary folder every local user shares.
    expect(existsSync(tmp.nodeDefault)).toBe(false);
  });

  it.skipIf(!NODE_CACHE)(
    'leaves the cache where NODE_COMPILE_CACHE puts it, making no folder of its own',
    async () => {
      const sb = makeSandbox();
      const tmp = sandboxTmp(sb);
      const chosen = join(sb.root, 'chosen-cache');
      const result = await runUgs(LOGIN, {
        sandbox: sb,
        stdin: 'apitoken-compile-cache-1234abcd',
        env: { TMPDIR: tmp.dir, NODE_COMPILE_CACHE: chosen },
      });
      expect(result.code, describeRun(result)).toBe(0);
      expect(filesUnder(chosen).length).toBeGreaterThanOrEqual(2);
      expect(existsSync(cacheFolder(sb))).toBe(false);
      expect(existsSync(tmp.nodeDefault)).toBe(false);
    },
  );

  it('keeps no cache anywhere with NODE_DISABLE_COMPILE_CACHE=1', async () => {
    const sb = makeSandbox();
    const tmp = sandboxTmp(sb);
    const result = await runUgs(LOGIN, {
      sandbox: sb,
      stdin: 'apitoken-compile-cache-1234abcd',
      env: { TMPDIR: tmp.dir, NODE_DISABLE_COMPILE_CACHE: '1' },
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(existsSync(join(sb.home, '.cache'))).toBe(false);
    expect(existsSync(tmp.nodeDefault)).toBe(false);
  });

  /** Makes the cache folder at `dir` as the case says; returns the folder a cache would fill. */
  const folderCases: readonly (readonly [string, (dir: string) => string])[] = [
    [
      'a link to a folder of the user',
      (dir) => {
        const target = tempDir('elsewhere');
        symlinkSync(target, dir);
        return target;
      },
    ],
    [
      'a file',
      (dir) => {
        writeFileSync(dir, '');
        return join(dir, '..');
      },
    ],
    ['writable by the group (0775)', (dir) => madeWithMode(dir, 0o775)],
    ['writable by others (0757)', (dir) => madeWithMode(dir, 0o757)],
  ];

  it.skipIf(process.platform === 'win32').for(folderCases)(
    'keeps no cache when its folder is %s, and says nothing of it',
    async ([, make]) => {
      const sb = makeSandbox();
      const tmp = sandboxTmp(sb);
      const dir = cacheFolder(sb);
      mkdirSync(join(dir, '..'), { recursive: true, mode: 0o700 });
      const watched = make(dir);
      const before = filesUnder(watched);
      const result = await runUgs(LOGIN, {
        sandbox: sb,
        stdin: 'apitoken-compile-cache-1234abcd',
        env: { TMPDIR: tmp.dir },
      });
      expect(result.code, describeRun(result)).toBe(0);
      // Off silently: login's own messages only.
      expect(result.stderr).toMatch(/^Logged in to /);
      expect(result.stderr).not.toMatch(/cache|warning/i);
      expect(filesUnder(watched)).toEqual(before);
      expect(existsSync(tmp.nodeDefault)).toBe(false);
    },
  );

  it.skipIf(NODE_CACHE)(
    'keeps no cache under --debug on Node 20 (its stack traces need Node to read the source maps)',
    async () => {
      const sb = makeSandbox();
      const result = await runUgs(['--debug', 'status'], { sandbox: sb });
      expect(result.code, describeRun(result)).not.toBe(undefined);
      expect(filesUnder(cacheFolder(sb))).toEqual([]);
    },
  );

  it.skipIf(!NODE_CACHE)(
    'uses the cache under --debug on Node 22+, whose stack traces still point at src/*.ts',
    async () => {
      const server = await startServer(json(500, { success: 0, detail: 'boom' }));
      try {
        const sb = makeSandbox();
        const args = ['get', '--id', 'acme', '--name', 'Acme Corp', '--base-url', server.url];
        for (let run = 0; run < 2; run++) {
          const result = await runUgs([...args, '--debug'], {
            sandbox: sb,
            env: { UGS_API_TOKEN: 'api-token-compile-cache-debug-5e6f' },
          });
          expect(result.code, describeRun(result)).toBe(1);
          expect(result.stderr).toMatch(/^\s+at .*[/\\]src[/\\][\w/\\-]+\.ts:\d+:\d+\)?$/m);
          expect(result.stderr).not.toMatch(/dist[/\\]main\.cjs:\d+/);
          // The second run compiles main.cjs from what the first one cached.
          expect(filesUnder(cacheFolder(sb)).length).toBeGreaterThan(0);
        }
      } finally {
        await server.close();
      }
    },
  );
});
