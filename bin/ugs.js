#!/usr/bin/env node
// CommonJS on purpose (see bin/package.json): Node starts a CommonJS entry several milliseconds
// sooner than an ES module, and a CLI pays that on every run.
'use strict';

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
