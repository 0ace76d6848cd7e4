import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests start real servers and child processes on a 2-core machine: keep parallelism modest.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
