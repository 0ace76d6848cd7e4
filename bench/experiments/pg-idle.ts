// Probe, not a benchmark: what two idle `jobscope serve --database` instances cost a PostgreSQL
// cluster and themselves (their samplers, job system and notifications), in 4 s windows. The PG
// benches charge the cluster's CPU to the work they drive; this says how much of it is background.
//   node --import tsx bench/experiments/pg-idle.ts
import path from 'node:path';
import { startPostgres } from '../../test/helpers/postgres.ts';
import { cpuMeter, startPgPair } from '../lib/pg-bench.ts';

const cluster = await startPostgres({ database: 'idle' });
try {
  const pair = await startPgPair('idle', await cluster.createDatabase('idle_ours'));
  try {
    await new Promise((r) => setTimeout(r, 3000));
    for (let i = 0; i < 3; i++) {
      const meter = cpuMeter(pair.pids, path.join(cluster.dir, 'data'));
      await new Promise((r) => setTimeout(r, 4000));
      const c = meter();
      console.log(`idle 4 s: the two servers ${c.servers.toFixed(0)} ms of CPU, the cluster ${c.cluster.toFixed(0)} ms`);
    }
  } finally {
    await pair.stop();
  }
} finally {
  await cluster.stop();
}
