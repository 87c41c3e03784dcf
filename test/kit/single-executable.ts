/**
 * The single executable (dist/bin/ugs-<platform>-<arch>), built on first use by the test files
 * that run it, while the rest of the suite runs: `npm run build:binary`'s SEA steps (a 100 MB copy
 * of Node, postject) are mostly I/O, and ahead of vitest they were the longest step of `npm test`.
 * `scripts/build-binary.mjs` skips them when its stamp says the binary is current, so a second
 * file (or worker) asking costs one bundling. Two workers never build at once: a lock directory
 * beside the binary (taken over when older than the slowest build, from a killed run).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from './binary.js';

/** Named as scripts/build-binary.mjs names it: Node's platform names (`win`, not `win32`). */
export const BINARY_NAME = `ugs-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}${process.platform === 'win32' ? '.exe' : ''}`;
export const BUILT_BINARY = join(ROOT, 'dist', 'bin', BINARY_NAME);
/** For the hooks that wait for a build: copying Node and postject on a loaded 2-core runner. */
export const BINARY_BUILD_TIMEOUT_MS = 240_000;
const STALE_LOCK_MS = BINARY_BUILD_TIMEOUT_MS;

let built: Promise<string> | undefined;

/** The path of a single executable made from the current dist/ (npm run build comes first). */
export function singleExecutable(): Promise<string> {
  built ??= build();
  return built;
}

async function build(): Promise<string> {
  const lock = join(ROOT, 'dist', '.build-binary.lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      else await sleep(250);
    }
  }
  try {
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'build-binary.mjs')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    const [code] = (await once(child, 'close')) as [number | null];
    if (code !== 0) {
      throw new Error(`scripts/build-binary.mjs failed (exit ${code}):\n${Buffer.concat(output)}`);
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  return BUILT_BINARY;
}
