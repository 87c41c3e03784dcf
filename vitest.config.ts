import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/kit/built.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Tests spawn the built binary and servers: two cores, so keep parallelism modest.
    maxWorkers: 2,
    // execa is about 100 modules: every test file loads the kit afresh, and execa pre-bundled
    // into one file loads in about 25 ms instead of 85 ms.
    deps: { optimizer: { ssr: { enabled: true, include: ['execa'] } } },
    reporters: ['default', './test/kit/summary-reporter.ts'],
  },
});
