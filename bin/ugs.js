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
// Bulk runs (`--from`) too: measured on 50,000 rows, the optimised parser saved no CPU time and
// cost 15 MB (35 MB at 200,000 rows) of peak memory.
if (command === 'get' || command === 'rotate') {
  require('node:v8').setFlagsFromString('--liftoff-only');
}

const { homedir } = require('node:os');
const { main } = require('../dist/main.cjs');

// Write errors are main's to report (main watches stdout and flushes it before deciding the exit
// code). These listeners only keep an early 'error' event from crashing the process: an EPIPE
// (`ugs ... | head -1`) must not end it early either, or a failed command piped into a reader
// that stops early would exit 0. Nothing can be reported about stderr itself.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

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
    onSignal: (listener) => {
      const signals = ['SIGINT', 'SIGTERM'];
      for (const signal of signals) process.on(signal, listener);
      return () => {
        for (const signal of signals) process.off(signal, listener);
      };
    },
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
  // Interrupted or cancelled: a request may still be open and would keep the process alive.
  if (code === 130) process.exit(code);
});
