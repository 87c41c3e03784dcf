/**
 * V8's compiled code of dist/*.cjs kept between runs, for Node versions without
 * `module.enableCompileCache()` (Node 20; 22.1+ has its own and bin/ugs.js uses that instead, in
 * a folder beside this one, never Node's default in the shared temporary directory).
 * Compiling undici's bundle and main.cjs is most of what a single `ugs get` spends beyond Node's
 * own start: with V8's code cache (made after a run, so it holds every function that run
 * compiled) requiring undici's bundle takes about 6 ms of CPU instead of 17.
 *
 * Only files under `distDir` go through it; everything else is compiled by Node as usual. The
 * cache lives in the user's cache directory (`$XDG_CACHE_HOME/ugs`, `~/Library/Caches/ugs`,
 * `%LOCALAPPDATA%\ugs\Cache`), in a `v8-<node version>-<arch>` folder made 0700. A cache file is
 * named after the source file's size, modification time and inode and after the V8 flags that
 * change code (`--liftoff-only` for `get` and `rotate`), so an updated ugs never runs code compiled
 * for the old one; V8 itself refuses data made by another V8 or for another source length, and
 * then the file is compiled as usual and the cache replaced. A directory that is a link, is not
 * the user's own or is writable by others (or in an `ugs` folder that is either of the last two)
 * is not used: whoever can write a cache file there runs code inside ugs.
 * NODE_DISABLE_COMPILE_CACHE=1 (the variable Node's own cache obeys) turns it off.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs';
import Module from 'node:module';
import { dirname, join, sep } from 'node:path';
import { Script, constants as vmConstants } from 'node:vm';

export interface CompileCacheOptions {
  /** Files under this directory are compiled through the cache. */
  distDir: string;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  homedir: string;
  /** A word for the V8 flags set before compiling (they change the code V8 makes). */
  flags: string;
}

interface Entry {
  script: Script;
  cacheFile: string;
  /** The cache was missing or refused: write it when the run ends. */
  stale: boolean;
}

interface InternalModule {
  _compile(content: string, filename: string): unknown;
  require(id: string): unknown;
  paths: string[];
}

/** Where the user's caches go on this platform, or undefined when that cannot be told. */
export function userCacheDir(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
  homedir: string,
): string | undefined {
  if (platform === 'win32') {
    const base = env.LOCALAPPDATA || (homedir ? join(homedir, 'AppData', 'Local') : '');
    return base ? join(base, 'ugs', 'Cache') : undefined;
  }
  if (platform === 'darwin') return homedir ? join(homedir, 'Library', 'Caches', 'ugs') : undefined;
  const base = env.XDG_CACHE_HOME || (homedir ? join(homedir, '.cache') : '');
  return base ? join(base, 'ugs') : undefined;
}

/**
 * Installs the cache for files under `distDir`. Returns false (and changes nothing) when it is
 * turned off or no private cache directory can be had. Never throws: a cache is an optimisation.
 */
export function installCompileCache(options: CompileCacheOptions): boolean {
  try {
    if (options.env.NODE_DISABLE_COMPILE_CACHE) return false;
    const base = userCacheDir(options.env, options.platform, options.homedir);
    if (base === undefined) return false;
    const dir = join(base, `v8-${process.version}-${process.arch}`);
    if (!privateDirectory(base, dir, options.platform)) return false;
    hookCompile(options.distDir + sep, dir, options.flags);
    return true;
  } catch {
    return false;
  }
}

/**
 * True when `dir` (in `base`, ugs's cache folder) is a private directory of this user's, made
 * 0700 (with `base` and its missing parents) when missing. `base` is checked too: whoever can
 * write there could swap `dir` for a folder of their own. `base` may be a link (the user's
 * choice of where caches go); `dir` may not. Nothing is made inside a `base` that fails. Node
 * 22+'s folder gets the same check in bin/ugs.js (`nodeCompileCacheDir`): keep the two alike.
 */
function privateDirectory(base: string, dir: string, platform: NodeJS.Platform): boolean {
  try {
    // The usual case, both made by an earlier run, costs two stat calls.
    const baseStats = statSync(base, { throwIfNoEntry: false });
    if (baseStats !== undefined && !ours(baseStats, platform)) return false;
    let stats = lstatSync(dir, { throwIfNoEntry: false });
    if (stats === undefined) {
      mkdirSync(dir, { recursive: baseStats === undefined, mode: 0o700 });
      if (baseStats === undefined && !ours(statSync(base), platform)) return false;
      stats = lstatSync(dir);
    }
    return ours(stats, platform);
  } catch {
    return false;
  }
}

/**
 * A directory (a link is none, for lstat's answer) this user owns that no one else may write to;
 * on Windows, a directory.
 */
function ours(stats: Stats, platform: NodeJS.Platform): boolean {
  if (!stats.isDirectory()) return false;
  if (platform === 'win32') return true;
  return stats.uid === process.getuid?.() && (stats.mode & 0o022) === 0;
}

function hookCompile(distPrefix: string, cacheDir: string, flags: string): void {
  const proto = Module.prototype as unknown as InternalModule;
  const compile = proto._compile;
  const entries: Entry[] = [];
  proto._compile = function (this: InternalModule, content: string, filename: string) {
    if (!filename.startsWith(distPrefix) || !filename.endsWith('.cjs')) {
      return compile.call(this, content, filename);
    }
    const cacheFile = join(cacheDir, cacheName(filename, flags));
    const cachedData = readCache(cacheFile);
    const script = new Script(Module.wrap(content), {
      filename,
      ...(cachedData === undefined ? {} : { cachedData }),
      // `import()` in the bundle (of the ES-module vendor bundles) as Node's own loader does it,
      // relative to `filename`.
      importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    entries.push({
      script,
      cacheFile,
      stale: cachedData === undefined || script.cachedDataRejected === true,
    });
    const wrapper = script.runInThisContext({ displayErrors: true }) as (
      ...args: unknown[]
    ) => unknown;
    const require = Object.assign((id: string) => this.require(id), {
      resolve: (request: string) =>
        (Module as unknown as { _resolveFilename(r: string, p: unknown): string })._resolveFilename(
          request,
          this,
        ),
      cache: (Module as unknown as { _cache: unknown })._cache,
    });
    return wrapper.call(
      (this as unknown as { exports: unknown }).exports,
      (this as unknown as { exports: unknown }).exports,
      require,
      this,
      filename,
      dirname(filename),
    );
  };
  // At the end of the run, so the data holds every function this run compiled.
  process.once('exit', () => {
    for (const entry of entries) if (entry.stale) writeCache(entry.cacheFile, entry.script);
  });
}

/** The source file's identity: an updated file gets another cache file. */
function cacheName(filename: string, flags: string): string {
  const stats = statSync(filename);
  const name = filename.slice(filename.lastIndexOf(sep) + 1);
  return `${name}-${stats.size}-${Math.trunc(stats.mtimeMs)}-${stats.ino}-${flags}.v8`;
}

function readCache(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Written whole under a temporary name, then renamed: a reader never sees half a file. The files
 * of earlier builds of the same bundle (same name and flags) go: an update leaves no garbage.
 */
function writeCache(file: string, script: Script): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, script.createCachedData(), { mode: 0o600, flag: 'wx' });
    renameSync(temporary, file);
    const dir = dirname(file);
    const name = file.slice(dir.length + 1);
    const [bundle] = name.split('-', 1);
    const flags = name.slice(name.lastIndexOf('-'));
    for (const other of readdirSync(dir)) {
      if (other !== name && other.startsWith(`${bundle}-`) && other.endsWith(flags)) {
        rmSync(join(dir, other), { force: true });
      }
    }
  } catch {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Nothing more to do: the next run tries again.
    }
  }
}
