#!/usr/bin/env node
// CommonJS on purpose (see bin/package.json): Node starts a CommonJS entry several milliseconds
// sooner than an ES module, and a CLI pays that on every run.
'use strict';

// V8 compiles undici's WebAssembly HTTP parser twice: a baseline (Liftoff), then optimised code
// on background threads that the process waits for and that nearly doubles its memory. `get` and
// `rotate` send one request and never need it; `serve` answers many and keeps it. Set before
// anything is compiled. Measure against a logged-in `ugs serve --port 0`, with and without this
// call, NODE_EXTRA_CA_CERTS set and unset: `hyperfine -N -w 3 -r 40 'node bin/ugs.js get
// --id x --name X'` (wall time), `/usr/bin/time -v` (peak RSS). A global option's value is
// skipped to find the command in `ugs -p work get`; a miss only costs speed.
const VALUE_OPTION = /^(-p|--profile|--base-url|--api-path|--timeout|--ca-file)$/;
const command = process.argv
  .slice(2)
  .find((arg, i, args) => !arg.startsWith('-') && !VALUE_OPTION.test(args[i - 1] ?? ''));
if (command === 'get' || command === 'rotate') {
  require('node:v8').setFlagsFromString('--liftoff-only');
}

const { homedir } = require('node:os');
const { main } = require('../dist/main.cjs');

// `ugs --help | head -3` closes the pipe early: stop quietly, as other command-line tools do,
// instead of dying on an unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

main(
  process.argv.slice(2),
  {
    // process.stdin is made on first use; most commands never read it.
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    stdinIsTTY: process.stdin.isTTY === true,
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
    env: process.env,
    noInput: false,
    noColor: false,
  },
  {
    platform: process.platform,
    homedir: homedir(),
    nodeVersion: process.version,
    waitForShutdown: () =>
      new Promise((resolve) => {
        for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => resolve(signal));
      }),
  },
).then((code) => {
  process.exitCode = code;
});
