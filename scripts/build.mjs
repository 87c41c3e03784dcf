// Builds dist/ so that starting `ugs` reads two small files and no library it does not use.
//
// - dist/main.cjs: commander, the commands and the core, bundled as CommonJS. Node starts a
//   CommonJS entry several milliseconds sooner than an ES module, and every run pays that.
// - dist/vendor/*.js: each heavy library (src/vendor/*.ts: undici, conf, the prompts,
//   chalk, csv-parse with csv-stringify) and the emulator as ES module bundles, loaded by dynamic
//   import() only on the code path that needs them. They hold third-party or emulator code only,
//   never the core, so no class exists twice.
import { rmSync } from 'node:fs';
import { basename } from 'node:path';
import { build } from 'esbuild';

const LAZY = {
  undici: 'src/vendor/undici.ts',
  prompts: 'src/vendor/prompts.ts',
  chalk: 'src/vendor/chalk.ts',
  conf: 'src/vendor/conf.ts',
  csv: 'src/vendor/csv.ts',
  spinner: 'src/vendor/spinner.ts',
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
  // and only for a profile whose token is in the OS credential store (src/secure-store.ts).
  external: ['@napi-rs/keyring'],
};

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });

await build({
  ...common,
  entryPoints: LAZY,
  outdir: 'dist/vendor',
  format: 'esm',
  splitting: true,
  chunkNames: 'chunk-[hash]',
  // Some libraries `require()` Node built-ins, and an ES module has no `require` of its own.
  banner: {
    js: "import { createRequire as __ugsCreateRequire } from 'node:module'; const require = __ugsCreateRequire(import.meta.url);",
  },
});

await build({
  ...common,
  entryPoints: { main: 'src/main.ts' },
  outfile: 'dist/main.cjs',
  format: 'cjs',
  plugins: [lazyModules(), lazyChildProcess()],
});

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
        return { path: `./vendor/${name}.js`, external: true };
      });
    },
  };
}
