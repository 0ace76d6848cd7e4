// `npm run soak`: the model-based test for longer, with a new seed each time unless FC_SEED is set.
// SOAK_MINUTES (default 10) bounds the in-process part; SOAK_STEPS (default 200,000) is its step
// budget (runs of up to 5,000 steps); SOAK_KILL_RUNS (default 3) child-process runs with kill -9 follow.
// SOAK_MODE=redis or pg runs the mode step set instead (faults at SOAK_FAULTS per ~1,000 steps).
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { startRedis, type TestRedis } from '../../helpers/redis.ts';
import { runModel } from './run.ts';
import { MODES } from './seeds.ts';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(`npm run soak: the model-based test (test/reliability/model/) for longer, a new seed each run.
Environment: SOAK_MINUTES (10) bounds the in-process runs, SOAK_STEPS (200000) is their step budget,
SOAK_KILL_RUNS (3) child-process runs with kill -9 follow; FC_SEED=<seed> (and FC_PATH=<path>) replay
a failure, FC_NO_SHRINK=1 stops at the first, MODEL_TRACE=1 prints each step with its wall and CPU time.
SOAK_MODE=sqlite|redis|pg (sqlite): redis runs the job system on a redis-server of its own (append-only,
fsync always), pg two instances on a PostgreSQL cluster of its own, both with faults in the step set
at SOAK_FAULTS (12) per ~1,000 steps (0: none; MODEL_FAULTS=<kind,…> picks the kinds, model/outage.ts).`);
  process.exit(0);
}

const minutes = Number(process.env.SOAK_MINUTES ?? 10);
const steps = Number(process.env.SOAK_STEPS ?? 200_000);
const killRuns = Number(process.env.SOAK_KILL_RUNS ?? 3);
const mode = process.env.SOAK_MODE ?? 'sqlite';
const faultWeight = Number(process.env.SOAK_FAULTS ?? MODES.common.faultWeight);
const maxCommands = 5000;

if (mode === 'redis' || mode === 'pg') {
  let redis: TestRedis | undefined;
  let pg: TestPostgres | undefined;
  try {
    if (mode === 'redis') redis = await startRedis([...MODES.redisArgs]);
    else pg = await startPostgres();
    const totals = await runModel({
      name: `soak-${mode}`,
      kind: mode === 'pg' ? 'child' : 'inproc',
      mode,
      backing: { redis, pg },
      numRuns: Math.max(1, Math.ceil(steps / (1000 * 0.4))),
      maxCommands: 1000,
      steps,
      restartWeight: MODES.common.restartWeight,
      killWeight: mode === 'pg' ? 1 : 0,
      faultWeight,
      timeLimitMs: minutes * 60_000,
    });
    console.log(`soak (${mode}): ${totals.steps} steps, ${totals.faults} faults, ${totals.notApplied} answered 503, ${totals.unknown.length} of unknown outcome, no failure`);
  } finally {
    await redis?.stop();
    await pg?.stop();
  }
} else {
  const inproc = await runModel({
    name: 'soak',
    kind: 'inproc',
    numRuns: Math.max(1, Math.ceil(steps / (maxCommands * 0.4))),
    maxCommands,
    steps,
    restartWeight: 1,
    killWeight: 0,
    timeLimitMs: minutes * 60_000,
  });
  const kills = killRuns > 0 ? await runModel({ name: 'soak-kill9', kind: 'child', numRuns: killRuns, maxCommands: 400, restartWeight: 4, killWeight: 8 }) : undefined;
  console.log(`soak: ${inproc.steps + (kills?.steps ?? 0)} steps, ${inproc.restarts + (kills?.restarts ?? 0)} restarts, ${kills?.kills ?? 0} kill -9, no failure`);
}
