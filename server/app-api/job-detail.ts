// Job pages: one job of a queue by its jid, or one entry of the retry, scheduled or dead set by its
// key, on any connection that has jobs (this server's own job system, a sidekiq connection), with
// the same routes and answer. Read-only: opening a job changes nothing.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { JobDetail, JobDetailQueueParams, JobDetailSetParams, type JobDetailSet } from '../../contract/job-detail.ts';
import type { AppContext } from '../context.ts';
import type { MonitorApi } from '../monitor/api.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { parseEntryKey } from '../jobs/entry-key.ts';
import { jobDetail } from '../job-detail/record.ts';
import { NoSuchSet, type JobDetailSource } from '../job-detail/source.ts';
import { SidekiqJobDetails } from '../job-detail/sidekiq-source.ts';
import { EmbeddedJobDetails } from '../job-detail/embedded-source.ts';
import { connectionOr404 } from './connections.ts';
import { sidekiqRead } from './sidekiq-peek.ts';

const tags = ['app API'];
const SET_NAME: Record<JobDetailSet, string> = { retry: 'retry set', schedule: 'scheduled set', dead: 'dead set' };
const GONE: Record<JobDetailSet, string> = {
  retry: 'it was retried, deleted or killed since the list was read',
  schedule: 'it was enqueued (its time came), deleted or killed since the list was read',
  dead: 'it was retried or deleted since the list was read, or trimmed as one of the oldest deaths',
};

const notThere = (message: string) => new ApiError(404, message);

export async function jobDetailRoutes(fastify: FastifyInstance, { ctx, monitor }: { ctx: AppContext; monitor: MonitorApi }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  async function sourceOf(id: string): Promise<JobDetailSource> {
    const c = await connectionOr404(monitor, id);
    if (c.kind === 'sidekiq') return new SidekiqJobDetails((fn) => sidekiqRead(monitor, c, fn), ctx.config.jobSearchMax, () => Date.now());
    if (c.kind === 'embedded') return new EmbeddedJobDetails(ctx.jobs, ctx.config.jobSearchMax);
    throw badRequest(`connection "${c.name}" is a GitLab read over HTTP: its metrics API reports queue sizes, not jobs, so no job of it can be opened`);
  }

  app.get(
    '/connections/:id/jobs/sets/:set/:key',
    {
      schema: {
        tags,
        summary: 'One entry of the retry, scheduled or dead set by its key (`<score>-<jid>`, as Sidekiq Web names it): every field of the job, its backtrace decoded; 404 once it left the set',
        params: JobDetailSetParams,
        response: { 200: JobDetail },
      },
    },
    async (request) => {
      const { id, set, key } = request.params;
      const k = parseEntryKey(key);
      if (!k || 'id' in k) throw badRequest(`"${key.slice(0, 80)}" is no entry key: give "<score>-<jid>" (the entry's \`key\` in the ${SET_NAME[set]}'s list, as Sidekiq Web names it)`);
      const source = await sourceOf(id);
      try {
        const found = await source.entry(set, key, k.score, k.jid);
        if (!found) throw notThere(`job ${k.jid || '(no jid)'} is no longer in the ${SET_NAME[set]}: ${GONE[set]}`);
        return jobDetail(found);
      } catch (err) {
        if (err instanceof NoSuchSet) throw notThere(err.message);
        throw err;
      }
    },
  );

  app.get(
    '/connections/:id/jobs/queues/:queue/:jid',
    {
      schema: {
        tags,
        summary: "A queued job by its jid (this server's own jobs: also by id), with its latency; the queue is read a page at a time and the search stops at --job-search-max jobs",
        params: JobDetailQueueParams,
        response: { 200: JobDetail },
      },
    },
    async (request) => {
      const { id, queue, jid } = request.params;
      const found = await (await sourceOf(id)).queued(queue, jid);
      if (!found) throw notThere(`job ${jid} is not in queue "${queue}": it ran, or was deleted, since the list was read`);
      if ('gaveUpAfter' in found) {
        throw notThere(`job ${jid} is not among the first ${found.gaveUpAfter} jobs of queue "${queue}", which is longer: the search stops there (--job-search-max) so that a long queue does not load its Redis`);
      }
      return jobDetail(found);
    },
  );
}
