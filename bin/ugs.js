#!/usr/bin/env node
// CommonJS on purpose (see bin/package.json): Node starts a CommonJS entry several milliseconds
// sooner than an ES module, and a CLI pays that on every run.
'use strict';

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
