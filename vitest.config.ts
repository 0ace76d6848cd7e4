import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/helpers/longest-first.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests start real servers and child processes on a 2-core machine: keep parallelism modest.
    maxWorkers: 2,
    fileParallelism: true,
    // One module graph per worker process instead of one per test file: the server's modules (Fastify,
    // TypeBox, SQLite's WebAssembly) are loaded and compiled once per worker, not 60 times. The suite is
    // CPU-bound on two cores, and re-importing them cost ~2 s of CPU per file plus ~1.5 s for each
    // file's first server start (JIT warm-up). Measured on the 23 files of test/{api,settings,monitor,
    // app-api}: 137 s of CPU isolated, 40 s not. Safe because the engine keeps no state in module
    // scope (each test builds its own server through buildServer), tests restore what they change in
    // the process (file-modes' umask) and nothing uses vi.mock. A test that needs a fresh module graph
    // can still import with a query string (launcher.test.ts's importFresh).
    isolate: false,
    sequence: { sequencer: LongestFirst },
    // One PostgreSQL cluster per worker instead of one per file (test/helpers/postgres.ts says how).
    globalSetup: ['test/helpers/pg-global.ts'],
    // JOBSCOPE_FILE_CPU=<file>: the CPU each file spends, its children's included; JOBSCOPE_CPU_PROF=<dir>:
    // a CPU profile of each file (the helpers say how).
    setupFiles: ['test/helpers/file-cpu.ts', 'test/helpers/file-prof.ts'],
  },
});
