#!/usr/bin/env node
// CommonJS on purpose (see bin/package.json): Node starts a CommonJS entry several milliseconds
// sooner than an ES module, and a CLI pays that on every run.
'use strict';

const args = process.argv.slice(2);

const early = earlyOutput(args);
if (early === undefined || !writeEarly(early)) {
  if (!fastJwt(args)) run();
}

/**
 * A plain local `ugs jwt` into a pipe (CI's case, the secret in UGS_EMBED_SECRET) is minted by
 * dist/jwt-mint.cjs and jose alone: main.cjs and commander cost more than Node's own start
 * (bench/run.mjs holds `ugs jwt` to 1.5x `node -e 0`). It declines anything else, before printing
 * anything, and main.cjs runs the command as always (src/jwt/fast-mint.ts says what it takes).
 */
function fastJwt(argv) {
  if (argv[0] !== 'jwt' || argv[1] === 'inspect') return false;
  let fast;
  try {
    fast = require('../dist/jwt-mint.cjs');
  } catch {
    return false;
  }
  const prepared = fast.prepare(
    argv.slice(1),
    process.env,
    isTerminal(1) || isTerminal(2),
    Date.now(),
  );
  if (prepared === undefined) return false;
  fast.mint(prepared).then(
    (text) => {
      if (!writeEarly(text)) process.exitCode = 1;
    },
    // Nothing was printed: main.cjs mints again, and reports what failed.
    () => run(),
  );
  return true;
}

/**
 * Writes straight to file descriptor 1: making process.stdout costs about 1 ms. False when that
 * failed other than by a reader that went away (a full disk, a non-blocking pipe that is full):
 * the full path then writes again and reports a failure as every command does.
 */
function writeEarly(text) {
  const { writeSync } = require('node:fs');
  let bytes = Buffer.from(text);
  try {
    while (bytes.length > 0) bytes = bytes.subarray(writeSync(1, bytes));
  } catch (error) {
    return error.code === 'EPIPE';
  }
  return true;
}

/**
 * `--version` and `--help` as scripts/build.mjs recorded them from the real program
 * (dist/early.json): commander and the command tree cost about 9 ms, nearly half of a 20 ms
 * Node start. Only where the build found that recording to be exactly what the program prints:
 * `pipe` (the same whatever the colour variables say) and `terminal` (the same at any width).
 */
function earlyOutput(argv) {
  if (argv.length > 1) return undefined;
  let outputs;
  try {
    ({ outputs } = require('../dist/early.json'));
  } catch {
    return undefined;
  }
  const recorded = Object.hasOwn(outputs, argv[0] ?? '') ? outputs[argv[0] ?? ''] : undefined;
  if (recorded === undefined) return undefined;
  const { env } = process;
  const colourSet = ['NO_COLOR', 'FORCE_COLOR', 'CLICOLOR_FORCE'].some((key) => key in env);
  const rightInPipe = recorded.pipe || !colourSet;
  if (recorded.terminal === rightInPipe) return rightInPipe ? recorded.text : undefined;
  return (isTerminal(1) ? recorded.terminal : rightInPipe) ? recorded.text : undefined;
}

/**
 * A pipe or a file is no terminal. Only a character device (a terminal, /dev/null) needs
 * node:tty to tell, which loads node:net: about 2 ms.
 */
function isTerminal(fd) {
  try {
    if (!require('node:fs').fstatSync(fd).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  return require('node:tty').isatty(fd);
}

/**
 * The folder for Node 22.1+'s compile cache: `node-compile-cache` in ugs's folder of the user's
 * cache directory (`$XDG_CACHE_HOME/ugs`, `~/Library/Caches/ugs`, `%LOCALAPPDATA%\ugs\Cache`),
 * made 0700 with any missing parent. Node's default, `os.tmpdir()/node-compile-cache`, is any
 * local user's to make first, and a cache entry planted for dist/main.cjs (V8 checks little more
 * than the source length) runs inside ugs, the API token in reach. So the folder, and ugs's
 * folder around it, must be directories of the user's own that no one else may write to (the
 * folder no link either); otherwise undefined: no cache, silently. Undefined too when the user
 * set NODE_COMPILE_CACHE (Node has enabled the cache there already) or NODE_DISABLE_COMPILE_CACHE.
 * Here and not in a module of dist/: loading one more file would cost about 1 ms of every run.
 * src/platform/compile-cache.ts (`userCacheDir`, `privateDirectory`) checks Node 20's folder alike.
 */
function nodeCompileCacheDir(env, homedir) {
  if (env.NODE_COMPILE_CACHE || env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  // The single executable holds V8's code cache of its whole program (scripts/build-binary.mjs
  // defines this name as true there): it keeps no cache folder.
  if (typeof UGS_SINGLE_EXECUTABLE !== 'undefined') return undefined;
  const { lstatSync, mkdirSync, statSync } = require('node:fs');
  const { join } = require('node:path');
  const { platform } = process;
  const ours = (stats) =>
    stats.isDirectory() &&
    (platform === 'win32' || (stats.uid === process.getuid() && (stats.mode & 0o022) === 0));
  try {
    const home = homedir();
    let base;
    if (platform === 'win32') {
      const local = env.LOCALAPPDATA || (home && join(home, 'AppData', 'Local'));
      base = local && join(local, 'ugs', 'Cache');
    } else if (platform === 'darwin') {
      base = home && join(home, 'Library', 'Caches', 'ugs');
    } else {
      const cache = env.XDG_CACHE_HOME || (home && join(home, '.cache'));
      base = cache && join(cache, 'ugs');
    }
    if (!base) return undefined;
    const dir = join(base, 'node-compile-cache');
    // Usually both exist: two stat calls.
    const baseStats = statSync(base, { throwIfNoEntry: false });
    if (baseStats !== undefined && !ours(baseStats)) return undefined;
    let stats = lstatSync(dir, { throwIfNoEntry: false });
    if (stats === undefined) {
      mkdirSync(dir, { recursive: baseStats === undefined, mode: 0o700 });
      if (baseStats === undefined && !ours(statSync(base))) return undefined;
      stats = lstatSync(dir);
    }
    return ours(stats) ? dir : undefined;
  } catch {
    return undefined;
  }
}

function run() {
  // Write errors are main's to report (main watches stdout and flushes it before deciding the
  // exit code). These listeners only keep an early 'error' event from crashing the process: an
  // EPIPE (`ugs ... | head -1`) must not end it early either, or a failed command piped into a
  // reader that stops early would exit 0. Nothing can be reported about stderr itself.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

  // V8 compiles undici's WebAssembly HTTP parser twice: a baseline (Liftoff), then optimised code
  // on background threads that the process waits for and that nearly doubles its memory. `get` and
  // `rotate` send one request and never need it; `serve` answers many and keeps it. Set before
  // anything is compiled. Measure against a logged-in `ugs serve --port 0`, with and without this
  // call, NODE_EXTRA_CA_CERTS set and unset: `hyperfine -N -w 3 -r 40 'node bin/ugs.js get
  // --id x --name X'` (wall time), `/usr/bin/time -v` (peak RSS). A global option's value is
  // skipped to find the command in `ugs -p work get`; a miss only costs speed.
  const VALUE_OPTION = /^(-p|--profile|--base-url|--api-path|--timeout|--ca-file)$/;
  const command = args.find(
    (arg, i, args) => !arg.startsWith('-') && !VALUE_OPTION.test(args[i - 1] ?? ''),
  );
  // Bulk runs (`--from`) too: measured on 50,000 rows, the optimised parser saved no CPU time and
  // cost 15 MB (35 MB at 200,000 rows) of peak memory.
  const liftoff = command === 'get' || command === 'rotate';
  if (liftoff) require('node:v8').setFlagsFromString('--liftoff-only');

  // Stack traces (printed with --debug only) point at src/*.ts through dist/*.map; Node reads a
  // map when it loads a module, so this comes before main.cjs, and only --debug pays for it.
  const debug = args.includes('--debug');
  if (debug) process.setSourceMapsEnabled(true);
  // V8's compiled code of dist/ is kept between runs: compiling main.cjs and undici's bundle is
  // most of what a single request costs beyond Node's own start. Node 22.1+ does it itself, in
  // the folder nodeCompileCacheDir() gives it (never Node's default in the shared temporary
  // directory); before it, dist/compile-cache.cjs does (src/platform/compile-cache.ts), except under
  // --debug, whose source-mapped stack traces need Node's own loader (Node's own cache keeps them).
  const { homedir } = require('node:os');
  const { enableCompileCache } = require('node:module');
  if (enableCompileCache) {
    const dir = nodeCompileCacheDir(process.env, homedir);
    if (dir !== undefined) enableCompileCache(dir);
  } else if (!debug) {
    require('../dist/compile-cache.cjs').installCompileCache({
      distDir: require('node:path').join(__dirname, '..', 'dist'),
      env: process.env,
      platform: process.platform,
      homedir: homedir(),
      flags: liftoff ? 'liftoff' : 'default',
    });
  }
  // Node reads NODE_TLS_REJECT_UNAUTHORIZED itself at every TLS connection and, at "0", warns
  // that certificates go unchecked. ugs checks them whatever it says (src/transport/http.ts) and says that
  // instead: main still sees the variable, Node no longer does.
  let env = process.env;
  if (env.NODE_TLS_REJECT_UNAUTHORIZED !== undefined) {
    env = { ...env };
    delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  }
  const { main, stopSignalHandlers } = require('../dist/main.cjs');
  const signals = stopSignalHandlers(process, process.platform, (code) => process.exit(code));

  main(
    args,
    {
      // process.stdin is made on first use; most commands never read it.
      get stdin() {
        return process.stdin;
      },
      stdout: process.stdout,
      stderr: process.stderr,
      // Not process.stdin.isTTY: making process.stdin costs about 1.5 ms (a file stream for
      // /dev/null or a file), which a command that never reads it should not pay.
      stdinIsTTY: isTerminal(0),
      stdoutIsTTY: process.stdout.isTTY === true,
      stderrIsTTY: process.stderr.isTTY === true,
      env,
      noInput: false,
      noColor: false,
      // SIGINT and SIGTERM; SIGHUP as SIGTERM; on Windows SIGBREAK (Ctrl+Break) as SIGINT.
      onSignal: signals.onSignal,
    },
    {
      platform: process.platform,
      homedir: homedir(),
      nodeVersion: process.version,
      // main and everything below it read the uid from here, never from process.
      uid: process.getuid?.(),
      waitForShutdown: signals.waitForShutdown,
    },
  ).then((code) => {
    process.exitCode = code;
    // Interrupted or cancelled: a request may still be open and would keep the process alive.
    if (code === 130) process.exit(code);
  });
}
