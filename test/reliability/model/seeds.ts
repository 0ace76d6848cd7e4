// The in-process model test's two seeds, each run until 5,000 steps, and where their steps are cut
// into files (model-inproc-a.test.ts says why). A run's step count depends only on its sequence, so
// these counts hold until a command or the arbitrary changes; then a file's "at least" fails and
// names the new count (the run's log line, "[model:…] run <n>: <steps> steps", gives it too).
export const SEED_A = 20260601;
/** Run 1 of the first seed, in model-inproc-a2.test.ts; runs 0 and 2 make up the rest in -a. */
export const SEED_A_RUN1_STEPS = 2_651;
export const SEED_B = 20260603;
/** Run 2 of the second seed, in model-inproc-b2.test.ts; runs 0, 1 and 3 make up the rest in -b. */
export const SEED_B_RUN2_STEPS = 1_630;
/** Each seed's steps (before the split, one file each: runs from 0 until this many). */
export const STEPS_PER_SEED = 5_000;
/** What every in-process file runs with: the same options in all four, or a later run would not be
 *  the sequence the split counted on. */
export const INPROC = { kind: 'inproc', maxCommands: 3000, restartWeight: 1, killWeight: 0 } as const;
/** FC_SEED replays one seed's failure: the step counts above then say nothing. */
export const replaying = process.env.FC_SEED !== undefined;

/**
 * The mode suites (model-redis, model-pg): each runs its seed until its steps, with faults at this
 * weight (per ~1,000 of other steps) and restarts; Redis persists every write (appendfsync always),
 * so a kill -9 of it loses nothing acknowledged. Measured with JOBSCOPE_FILE_CPU, load ~3: Redis
 * 1,500 steps 8.4 s of CPU (in-process server) in 67 s; PostgreSQL 1,500 steps 52.5 s of CPU (two
 * child servers, restarted 18 times) in 90 s, so it stays at 1,500 and Redis takes more.
 */
export const MODES = {
  redis: { seed: 20261101, steps: 2_500 },
  pg: { seed: 20261102, steps: 1_500 },
  redisArgs: ['--appendonly', 'yes', '--appendfsync', 'always'],
  common: { numRuns: 30, maxCommands: 600, restartWeight: 2, killWeight: 0, faultWeight: 12 },
} as const;
