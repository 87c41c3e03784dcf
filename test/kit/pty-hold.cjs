// Runs `node <bin> <args...>` on the pty it was started on, and keeps that terminal open a moment
// after the program exits, then exits as it did (the same code, or the same signal). On Linux a
// pty whose last writer closes may drop the output still in the kernel's buffer before node-pty
// reads it (microsoft/node-pty#72): a help text was seen cut short under load. Holding the
// terminal open lets the test read everything first. The terminal's signals (Ctrl+C) reach the
// program itself, which is in the same process group: this process only waits.
'use strict';
const { spawn } = require('node:child_process');

const HOLD_MS = 200;
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
for (const signal of SIGNALS) process.on(signal, () => {});

const [bin, ...args] = process.argv.slice(2);
const child = spawn(process.execPath, [bin, ...args], { stdio: 'inherit' });
child.on('exit', (code, signal) => {
  setTimeout(() => {
    if (signal === null) process.exit(code ?? 1);
    for (const name of SIGNALS) process.removeAllListeners(name);
    process.kill(process.pid, signal);
  }, HOLD_MS);
});
