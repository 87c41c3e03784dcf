import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/kit/built.ts'],
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
  },
});
