// What a connection is running now (Sidekiq Web's Busy page), one route for every kind that has
// workers: a sidekiq connection's from its Redis (sidekiq/busy.ts, read-only), the embedded
// connection's from this server's worker pools. A GitLab connection's API says no more than a count.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { BusyPage, BusyQuery, type BusyJob } from '../../contract/busy.ts';
import type { MonitorApi } from '../monitor/api.ts';
import type { AppContext } from '../context.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { connectionOr404 } from './connections.ts';
import { IdParams } from './schemas.ts';
import { busyRow, byStart, readBusy } from '../sidekiq/busy.ts';
import type { WorkerPool } from '../jobs/worker-pool.ts';

const tags = ['app API'];

/** The embedded job system's running jobs: each pool's slots, as its heartbeat would write them. */
function embeddedBusy(pools: readonly WorkerPool[], nowMs: number, limit: number): BusyPage {
  const jobs: BusyJob[] = [];
  let total = 0;
  for (const pool of pools) {
    const { hostname, pid, tag } = pool.identity;
    const process = `${hostname}:${pid}${tag ? ` (${tag})` : ''}`;
    for (const r of pool.work.running()) {
      total++;
      const j = r.job;
      // A Redis job's payload as stored; a row job's is what Sidekiq's would hold.
      const payload = j.raw ?? JSON.stringify({ class: j.class, args: j.args, queue: j.queue, jid: j.jid ?? null });
      jobs.push(busyRow({ process, quiet: false, stopping: false, thread: r.tid }, j.queue, payload, r.runAt / 1000, nowMs));
    }
  }
  jobs.sort(byStart);
  return { at: new Date(nowMs).toISOString(), total, processes_read: pools.length, processes_total: pools.length, jobs: jobs.slice(0, limit) };
}

export async function busyRoutes(fastify: FastifyInstance, { monitor, ctx }: { monitor: MonitorApi; ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/connections/:id/busy',
    {
      schema: {
        tags,
        summary: "The jobs a connection's workers run now (Sidekiq Web's Busy page), oldest start first, at most `limit` (`total`: all of them); a sidekiq connection's read-only from its processes' workers hashes",
        params: IdParams,
        querystring: BusyQuery,
        response: { 200: BusyPage },
      },
    },
    async (request) => {
      const c = await connectionOr404(monitor, request.params.id);
      const limit = request.query.limit ?? 500;
      if (c.kind === 'embedded') return embeddedBusy(ctx.jobs.processes(), ctx.jobs.now(), limit);
      if (c.kind !== 'sidekiq') throw badRequest(`connection ${c.id} reads a GitLab's metrics API, which counts busy workers but does not list their jobs; the Busy view needs a sidekiq connection or the embedded one`);
      const source = monitor.sidekiq.of(c);
      const limits = { maxProcesses: ctx.config.sidekiqMaxProcesses, maxNameBytes: ctx.config.sampleMaxNameBytes, limit };
      return source.forRequest(
        (r) => readBusy(r, source.target.namespace, limits, () => source.now()),
        (sentence) => new ApiError(502, `502 Bad Gateway - ${sentence}`),
      );
    },
  );
}
