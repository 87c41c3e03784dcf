#!/usr/bin/env node
import { homedir } from 'node:os';
import { main } from '../dist/main.js';

const code = await main(
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
);
process.exitCode = code;
