// The stateful model-based test: random sequences of
// runner, control and app API requests, restarts and kill -9, checked against a small model after
// every step (test/reliability/model/). Seeds are printed; replay with FC_SEED=<seed>, and
// FC_PATH=<path> from a failure report to rerun just the shrunk case. Longer: `npm run soak`.
//
// 10,000 in-process steps in all: two seeds, each run until 5,000 steps, and the kill -9 runs in
// model-kill9.test.ts. Each seed's 5,000 are spread over two files of ~2,500 (this one and -a2,
// -b and -b2) because vitest's run ends with its longest file: one file of 10,000 steps was 67 s
// alone and 283 s beside the browser tests; two of 5,000 took ~160 s each niced in CI, while the other
// workers had run out of files. They are the same steps: the first seed's 5,000 were its run 0 (962
// steps), run 1 (2,651) and the first 1,387 of run 2. Here runs 0 and 2 (runModel's firstRun starts
// at a later run of the seed: fast-check generates the same sequence there), in -a2 run 1. A run's
// step count depends only on its sequence (a step is skipped by counts the model keeps, never by
// timing), so the cut in run 2 falls where it fell in one file.
// The cost: a run in a process that has not served yet is slower until V8 has compiled the server's
// hot paths (run 1 of the first seed: 10.5 s of CPU after run 0 in the same process, 16.2 s alone).
// Back to back at load ~3, two at a time: the two halves 27.4 s wall, 50.0 s CPU; the four files
// 20.9 + 26.2 s wall, 78.4 s CPU. In a full run the workers are warm from other files for some of them.
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';
import { INPROC, replaying, SEED_A, SEED_A_RUN1_STEPS, STEPS_PER_SEED } from './model/seeds.ts';

const opts = { ...INPROC, seed: SEED_A };

test('5,000 model-checked steps of the first seed against an in-process server, with restarts: runs 0 and 2', { timeout: 600_000 }, async () => {
  const first = await runModel({ ...opts, name: 'inproc-a run 0', numRuns: 1 });
  const budget = STEPS_PER_SEED - SEED_A_RUN1_STEPS - first.steps;
  const rest = await runModel({ ...opts, name: 'inproc-a run 2', numRuns: 8, firstRun: 2, steps: budget });
  if (!replaying) expect(rest.steps).toBeGreaterThanOrEqual(budget);
});
