import { defineConfig } from 'vitest/config';

/**
 * The Windows lane (`npm run test:windows`, scripts/test-windows.mjs): ugs for Windows under
 * Wine against `ugs serve` on Linux. Not a project of the main config: it needs Wine and the
 * fetched node.exe, which `npm test` does not have. One worker: every run is a Windows process in
 * one Wine prefix, and the 2-core runner is slower, not faster, with two.
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/windows/**/*.wine.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    maxWorkers: 1,
    fileParallelism: false,
    globalSetup: ['./test/kit/built.ts'],
  },
});
