// Builds dist/ so that starting `ugs` reads two small files and no library it does not use.
//
// - dist/main.cjs: commander, the commands and the core, bundled as CommonJS. Node starts a
//   CommonJS entry several milliseconds sooner than an ES module, and every run pays that.
// - dist/vendor/*.cjs: each heavy library (src/vendor/*.ts: undici, conf, the prompts, cli-table3,
//   chalk, csv-parse with csv-stringify, jose) and the emulator as CommonJS bundles of their own,
//   required only on the code path that needs them (an `import()` in src/). They hold
//   third-party or emulator code only, never the core, so no class exists twice. CommonJS, not
//   ES modules: `require()` skips Node's ES-module loader (about 7 ms of a `ugs get` on Node 20),
//   and no file of dist/ then calls `import()`, which the compile cache of Node 20
//   (src/platform/compile-cache.ts: V8's code cache loses a script's `import()` support) could not run.
// - dist/<path>.cjs: the lazy chunks of the core (see buildCore).
// - dist/early.json: what `--version` and `--help` print, recorded from the real program, for
//   bin/ugs.js to answer them without loading dist/main.cjs (see writeEarlyOutputs below).
// - dist/THIRD-PARTY-NOTICES: the licence files of every library bundled above, collected from
//   esbuild's metafile (scripts/notices.mjs). The tarball carries it with LICENSE.
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, relative } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { build } from 'esbuild';
import { bundledPackages, noticesText } from './notices.mjs';

const LAZY = {
  undici: 'src/vendor/undici.ts',
  prompts: 'src/vendor/prompts.ts',
  chalk: 'src/vendor/chalk.ts',
  table: 'src/vendor/table.ts',
  conf: 'src/vendor/conf.ts',
  csv: 'src/vendor/csv.ts',
  spinner: 'src/vendor/spinner.ts',
  jose: 'src/vendor/jose.ts',
  emulator: 'src/emulator/server.ts',
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  minify: true,
  // Class names appear in --debug stack traces; minified ones say nothing.
  keepNames: true,
  legalComments: 'linked',
  // `--debug` stack traces point at src/*.ts: bin/ugs.js turns source maps on only with --debug,
  // so every other run never reads the .map files. Mappings only; the sources stay in src/.
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'warning',
  // A native addon (a .node binary per platform) cannot be bundled; it loads from node_modules,
  // and only for a profile whose token is in the OS credential store (src/config/secure-store.ts).
  external: ['@napi-rs/keyring'],
  // Which files went into the bundles: the list of libraries whose notices must ship.
  metafile: true,
  // `import()` of a built-in or a native addon becomes `require()`: see dist/vendor above.
  supported: { 'dynamic-import': false },
};

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });

const vendor = await build({
  ...common,
  entryPoints: LAZY,
  outdir: 'dist/vendor',
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  plugins: [lazyHttp2(), lazyAssert()],
});

const { core, chunks } = await buildCore();

// The fast path of a plain local `ugs jwt` (src/jwt/fast-mint.ts), which bin/ugs.js tries before
// main.cjs: it loads jose from its own bundle, as main.cjs would, and hands every other run to
// main.cjs before it has printed or shared anything.
const jwtMint = await build({
  ...common,
  entryPoints: { 'jwt-mint': 'src/jwt/fast-mint.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  plugins: [lazyModules()],
});

// bin/ugs.js installs it before main.cjs on Node versions without module.enableCompileCache().
await build({
  ...common,
  entryPoints: { 'compile-cache': 'src/platform/compile-cache.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
});

/**
 * dist/main.cjs and its lazy chunks. A project module that the code loads with `import()` (the
 * bulk engine, doctor's checks and network probe, ...) is not bundled into main.cjs but into a
 * CommonJS chunk of its own, `dist/<path-with-dashes>.cjs`, required when that `import()` runs: a
 * single request never parses or runs it. A chunk does not bundle what main.cjs already holds: it
 * takes those modules from main.cjs (`__core`, one namespace object per module it imports), so
 * every class and every module-level state exists once per process (`instanceof` holds across
 * chunks). A project module bundled into two chunks would exist twice: the build refuses that.
 */
async function buildCore() {
  const cwd = process.cwd();
  const core = { format: 'cjs', ...common };
  const lazy = new Set();
  let coreInputs = new Set();
  // main.cjs's modules decide what a chunk takes from it, and an import() of one of them is no
  // chunk: repeat until neither changes.
  for (;;) {
    const before = [...coreInputs].join();
    lazy.clear();
    const pass = await build({
      ...core,
      entryPoints: { main: 'src/main.ts' },
      outfile: 'dist/main.cjs',
      write: false,
      plugins: [lazyModules(), lazyChunks(lazy, coreInputs), lazyChildProcess()],
    });
    coreInputs = new Set(Object.keys(pass.metafile.inputs));
    if ([...coreInputs].join() === before) break;
  }
  const fromCore = new Set();
  // A project module that two chunks import statically (the bulk engine and an operation's bulk
  // spec both use the record helpers) becomes a chunk of its own that both require: bundled into
  // each, it would exist twice. Repeat until every module is in one chunk.
  const shared = new Set();
  for (;;) {
    for (;;) {
      const before = lazy.size;
      await buildChunks(core, lazy, coreInputs, fromCore, false, shared);
      if (lazy.size === before) break;
    }
    const twice = inTwoChunks(await buildChunks(core, lazy, coreInputs, fromCore, false, shared));
    if (twice.length === 0) break;
    for (const input of twice) {
      if (shared.has(input)) throw new Error(`${input} is still bundled into two chunks`);
      shared.add(input);
      lazy.add(input);
    }
  }
  const names = [...fromCore].sort();
  const entry = [
    "export * from './src/main.ts';",
    ...names.map((input, i) => `import * as m${i} from './${input}';`),
    `export const __core = { ${names.map((input, i) => `${JSON.stringify(input)}: m${i}`).join(', ')} };`,
  ].join('\n');
  const main = await build({
    ...core,
    stdin: { contents: entry, resolveDir: cwd, sourcefile: 'main-entry.ts', loader: 'ts' },
    outfile: 'dist/main.cjs',
    plugins: [lazyModules(), lazyChunks(new Set(), coreInputs), lazyChildProcess()],
  });
  const chunks = await buildChunks(core, lazy, coreInputs, new Set(), true, shared);
  return { core: main, chunks };
}

/** The project modules that more than one chunk of `chunkBuild` bundles. */
function inTwoChunks(chunkBuild) {
  const owners = new Map();
  const twice = new Set();
  for (const [output, { inputs }] of Object.entries(chunkBuild.metafile.outputs)) {
    for (const input of Object.keys(inputs)) {
      if (!input.startsWith('src/')) continue;
      if (owners.has(input) && owners.get(input) !== output) twice.add(input);
      owners.set(input, output);
    }
  }
  return [...twice];
}

/**
 * The chunks of `lazy` (src paths), each taking what main.cjs holds (`coreInputs`) from it, and
 * the modules in `shared` from their own chunks.
 */
function buildChunks(core, lazy, coreInputs, fromCore, write, shared) {
  return build({
    ...core,
    entryPoints: Object.fromEntries([...lazy].map((input) => [chunkName(input), input])),
    outdir: 'dist',
    outExtension: { '.js': '.cjs' },
    write,
    plugins: [
      lazyModules(),
      takeFromCore(coreInputs, fromCore),
      lazyChunks(lazy, coreInputs, shared),
      lazyChildProcess(),
    ],
  });
}

/** `src/bulk/run.ts` -> `bulk-run`: the chunk's file name in dist/. */
function chunkName(input) {
  return input
    .replace(/^src\//, '')
    .replace(/\.ts$/, '')
    .replaceAll('/', '-');
}

/** Resolves an import as esbuild would, to a path relative to the working directory. */
async function resolvedInput(esbuild, args) {
  const result = await esbuild.resolve(args.path, {
    kind: args.kind,
    importer: args.importer,
    resolveDir: args.resolveDir,
    pluginData: { resolving: true },
  });
  if (result.errors.length > 0 || result.external || result.namespace !== 'file') return undefined;
  return relative(process.cwd(), result.path).replaceAll('\\', '/');
}

/**
 * An `import()` of a project module that main.cjs does not hold: a chunk, required when run. A
 * static import of a module in `shared` (a chunk of its own) is that chunk's `require()` too.
 */
function lazyChunks(lazy, coreInputs, shared = new Set()) {
  return {
    name: 'lazy-chunks',
    setup(esbuild) {
      esbuild.onResolve({ filter: /^\./ }, async (args) => {
        if (args.kind === 'entry-point' || args.pluginData?.resolving) return undefined;
        const dynamic = args.kind === 'dynamic-import';
        if (!dynamic && shared.size === 0) return undefined;
        const input = await resolvedInput(esbuild, args);
        if (input === undefined || !input.startsWith('src/') || coreInputs.has(input)) return;
        if (!dynamic && !shared.has(input)) return undefined;
        lazy.add(input);
        return { path: `./${chunkName(input)}.cjs`, namespace: 'ugs-require' };
      });
    },
  };
}

/** In a chunk, a module that main.cjs holds is main.cjs's own instance of it. */
function takeFromCore(coreInputs, fromCore) {
  return {
    name: 'take-from-core',
    setup(esbuild) {
      esbuild.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point' || args.pluginData?.resolving) return undefined;
        if (args.namespace !== 'file') return undefined;
        const input = await resolvedInput(esbuild, args);
        if (input === undefined || !coreInputs.has(input)) return undefined;
        fromCore.add(input);
        return { path: input, namespace: 'ugs-core' };
      });
      esbuild.onLoad({ filter: /.*/, namespace: 'ugs-core' }, (args) => ({
        contents: `module.exports = require('./main.cjs').__core[${JSON.stringify(args.path)}];`,
        loader: 'js',
      }));
      esbuild.onResolve({ filter: /^\.\/main\.cjs$/, namespace: 'ugs-core' }, (args) => ({
        path: args.path,
        external: true,
      }));
    },
  };
}

/**
 * commander requires child_process at load time for executable subcommands, which ugs does not
 * have; loading it costs about 2 ms of every start. Hand commander a stand-in that loads the real
 * module on first use.
 */
function lazyChildProcess() {
  return {
    name: 'lazy-child-process',
    setup(esbuild) {
      esbuild.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
        args.importer.includes('/node_modules/commander/')
          ? { path: 'lazy-child-process', namespace: 'ugs-lazy' }
          : undefined,
      );
      esbuild.onLoad({ filter: /.*/, namespace: 'ugs-lazy' }, () => ({
        contents:
          "module.exports = new Proxy({}, { get: (_, key) => require('node:child_process')[key] });",
        loader: 'js',
      }));
    },
  };
}

/**
 * undici's Client requires its HTTP/2 half at load time, and that half requires `node:http2`,
 * which loads `node:tls` and `node:crypto`: about 10 ms of every request over plain http://, and
 * ugs never asks undici for HTTP/2 (`allowH2` stays off, so `connectH2` is never called). Hand
 * the Client a stand-in that loads the real module on first call.
 */
function lazyHttp2() {
  return {
    name: 'lazy-http2',
    setup(esbuild) {
      esbuild.onResolve({ filter: /^\.\/client-h2\.js$/ }, (args) =>
        args.importer.includes('/node_modules/undici/lib/dispatcher/client.js')
          ? { path: 'client-h2', namespace: 'ugs-lazy', pluginData: dirname(args.importer) }
          : undefined,
      );
      esbuild.onLoad({ filter: /^client-h2$/, namespace: 'ugs-lazy' }, (args) => ({
        contents:
          "module.exports = function connectH2(...args) { return require('./client-h2.js')(...args); };",
        loader: 'js',
        resolveDir: args.pluginData,
      }));
    },
  };
}

/**
 * undici checks its invariants with `assert(value)` and nothing else, and requires node:assert at
 * load time: about 1.2 ms of every request. Its files get a function that loads the real module
 * only when an assertion fails (and forwards any other member to it).
 */
function lazyAssert() {
  return {
    name: 'lazy-assert',
    setup(esbuild) {
      esbuild.onResolve({ filter: /^(node:)?assert$/ }, (args) =>
        args.importer.includes('/node_modules/undici/')
          ? { path: 'assert', namespace: 'ugs-lazy' }
          : undefined,
      );
      esbuild.onLoad({ filter: /^assert$/, namespace: 'ugs-lazy' }, () => ({
        contents: `const real = () => require('node:assert');
function assert(value, message) {
  if (!value) real()(value, message);
}
module.exports = new Proxy(assert, { get: (target, key) => (key in target ? target[key] : real()[key]) });`,
        loader: 'js',
      }));
    },
  };
}

/** Points the core's dynamic imports of src/vendor/* and the emulator at their own bundles. */
function lazyModules() {
  const byFile = new Map(Object.entries(LAZY).map(([name, file]) => [basename(file, '.ts'), name]));
  return {
    name: 'lazy-modules',
    setup(esbuild) {
      esbuild.onResolve({ filter: /(^|\/)(vendor\/\w+|emulator\/server)\.js$/ }, (args) => {
        if (args.kind !== 'dynamic-import') {
          throw new Error(
            `${args.importer} must import ${args.path} with import(), not statically`,
          );
        }
        const file = basename(args.path, '.js');
        const name = args.path.includes('emulator/') ? 'emulator' : byFile.get(file);
        if (name === undefined) throw new Error(`no bundle for ${args.path}`);
        // import() of a bundle becomes its require() (through a stand-in module that esbuild
        // wraps as `Promise.resolve().then(...)`).
        return { path: `./vendor/${name}.cjs`, namespace: 'ugs-require' };
      });
      esbuild.onLoad({ filter: /.*/, namespace: 'ugs-require' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(args.path)});`,
        loader: 'js',
      }));
      esbuild.onResolve({ filter: /\.cjs$/, namespace: 'ugs-require' }, (args) => ({
        path: args.path,
        external: true,
      }));
    },
  };
}

writeFileSync(
  'dist/THIRD-PARTY-NOTICES',
  noticesText(
    bundledPackages(
      [vendor.metafile, core.metafile, chunks.metafile, jwtMint.metafile],
      process.cwd(),
    ),
    process.cwd(),
  ),
);

await writeEarlyOutputs();

/**
 * `ugs --version` and `ugs --help` are answered by bin/ugs.js without loading dist/main.cjs:
 * commander and the command tree cost about 9 ms, which on a 20 ms Node start is 45% of the run.
 * The texts come from the real program, run here for each argv, so they cannot drift from what
 * the full path prints. `pipe`: the text is the same into a pipe or file whatever the colour
 * variables say; `terminal`: the same at a terminal of any width, colour variables or not.
 * Where a flag is false, bin/ugs.js takes the full path (and, for `pipe`, only when a colour
 * variable is set).
 */
async function writeEarlyOutputs() {
  const { main } = createRequire(import.meta.url)('../dist/main.cjs');
  const colourEnvs = [{}, { NO_COLOR: '1' }, { FORCE_COLOR: '1' }, { FORCE_COLOR: '0' }];
  colourEnvs.push({ CLICOLOR_FORCE: '1' });
  const outputs = {};
  for (const argv of [[], ['--help'], ['-h'], ['--version'], ['-V']]) {
    const text = await printed(main, argv, undefined, {});
    const same = async (columnsList) => {
      for (const columns of columnsList) {
        for (const env of colourEnvs)
          if ((await printed(main, argv, columns, env)) !== text) return false;
      }
      return true;
    };
    outputs[argv.join(' ')] = {
      text,
      pipe: await same([undefined]),
      terminal: await same([40, 200]),
    };
  }
  writeFileSync('dist/early.json', `${JSON.stringify({ outputs })}\n`);
}

/** What `ugs ...argv` prints on stdout with only `env` set, at a terminal `columns` wide. */
async function printed(main, argv, columns, env) {
  const terminal = columns !== undefined;
  const saved = ['isTTY', 'columns', 'hasColors'].map((key) => [
    key,
    Object.getOwnPropertyDescriptor(process.stdout, key),
  ]);
  const savedEnv = { ...process.env };
  // commander reads these itself (help width, colour), not through the IO ugs hands it.
  for (const key of ['NO_COLOR', 'FORCE_COLOR', 'CLICOLOR_FORCE']) delete process.env[key];
  Object.assign(process.env, env);
  const define = (key, value) =>
    Object.defineProperty(process.stdout, key, { value, configurable: true, writable: true });
  define('isTTY', terminal);
  define('columns', columns);
  define('hasColors', () => terminal);
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  });
  try {
    const code = await main(
      argv,
      {
        stdin: Readable.from([]),
        stdout: sink,
        stderr: sink,
        stdinIsTTY: terminal,
        stdoutIsTTY: terminal,
        stderrIsTTY: terminal,
        env,
      },
      {
        platform: process.platform,
        homedir: homedir(),
        nodeVersion: process.version,
        uid: process.getuid?.(),
        waitForShutdown: () => new Promise(() => {}),
      },
    );
    if (code !== 0) throw new Error(`ugs ${argv.join(' ')} exited ${code}: ${text}`);
    return text;
  } finally {
    for (const [key, descriptor] of saved) {
      if (descriptor === undefined) delete process.stdout[key];
      else Object.defineProperty(process.stdout, key, descriptor);
    }
    for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
    Object.assign(process.env, savedEnv);
  }
}
