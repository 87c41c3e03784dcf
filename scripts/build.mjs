// Bundles src/ into dist/ so that starting `ugs` reads a few files instead of hundreds of modules.
// Code splitting keeps the heavy libraries (undici, conf, prompts, cli-table3) in chunks that are
// loaded only by the dynamic imports that need them.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { main: 'src/main.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  // Class names appear in --debug stack traces; minified ones say nothing.
  keepNames: true,
  legalComments: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.js' },
  // Some dependencies `require()` Node built-ins; ESM has no `require` of its own.
  banner: {
    js: "import { createRequire as __ugsCreateRequire } from 'node:module'; const require = __ugsCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
