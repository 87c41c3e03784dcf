import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/kit/built.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Tests spawn the built binary and servers: two cores, so keep parallelism modest.
    maxWorkers: 2,
    reporters: ['default', './test/kit/summary-reporter.ts'],
  },
});
