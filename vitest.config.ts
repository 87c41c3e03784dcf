import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two projects. `fast`: the tests that run in this process (the kit's `runMain`, a command's `run`
 * with fakes, the in-process emulator), `npm run test:fast`, for before every commit; they run
 * src/ as it is, so they need no build. `process`:
 * the tests that start processes (the built binary, a pseudo-terminal, signals, Django, the OS
 * keyring, the npm package and the single executable), named `*.process.test.ts` beside the fast
 * tests of the same feature. `npm test` runs both.
 */
const PROCESS_TESTS = 'test/**/*.process.test.ts';

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Four workers on two cores: much of the suite waits (child processes, servers, timers), and
    // with two workers the cores sat idle (102 s, against 77 s with four; three gave 81 s). The
    // timing checks are ratios against a baseline measured beside them, so contention cannot
    // fail them.
    maxWorkers: 4,
    // One module graph per worker, not per file: re-importing the kit and src for each of ~120
    // files was a third of the run (126 s -> 91 s here). So a test file must leave no global
    // behind: env, timers, mocks and process listeners are restored in its afterEach/afterAll.
    isolate: false,
    reporters: ['default', './test/kit/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, PROCESS_TESTS],
        },
      },
      {
        extends: true,
        // Only these run the built binary or read dist/: a missing build fails them at once.
        test: { name: 'process', include: [PROCESS_TESTS], globalSetup: ['./test/kit/built.ts'] },
      },
    ],
  },
});
