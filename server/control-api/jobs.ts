// /api/v3/sim/jobs…: enqueue synthetic jobs into durable queues, list and delete queues, and
// /api/v3/sim/load: start, change, stop the demo load. A queue's jobs and the retry and dead sets
// are job-sets.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.ts';
import { DeletedQueue, EnqueuedJobs, LoadPatch, LoadStatus, NewJobs, QueueParams, QueueView, type LoadStatus as LoadStatusT } from '../../contract/jobs.ts';
import { conflict, notFound } from '../http/errors.ts';
import { QueueKindError, QueueLimitError } from '../jobs/queue-errors.ts';
import { SYNTHETIC } from '../jobs/builtin/synthetic.ts';
import { deleteQueueByRule } from '../jobs/delete-queue.ts';
import type { LoadStatus as DemoStatus } from '../jobs/demo-load.ts';
import { isoTime } from '../util/times.ts';
import { queueView } from './job-sets.ts';

const tags = ['control API: jobs'];
// Never new Date(x).toISOString(): it throws on a time past Date's range.
const iso = isoTime;

/** `curl -X PUT …/load` with no body means "no changes", not a 400. */
async function emptyBodyIsEmptyObject(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null || request.body === '') request.body = {};
}

const loadView = (s: DemoStatus): LoadStatusT => ({ ...s, started_at: iso(s.started_at) });

export async function jobsRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const { jobs, demo } = ctx;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/jobs',
    {
      schema: {
        tags,
        summary: 'Enqueue synthetic jobs (202); they wait in the queue’s backlog until a worker of the server’s pool takes them',
        body: NewJobs,
        response: { 202: EnqueuedJobs },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const args: Record<string, unknown> = { duration_ms: b.duration_ms ?? 0 };
      if (b.fail) args.fail = true;
      try {
        const pushed = jobs.enqueue(SYNTHETIC, args, { queue: b.queue, count: b.count ?? 1, class: b.class, retry: b.retry });
        const created = pushed instanceof Promise ? await pushed : pushed;
        // The jobs are made from here on: any answer but 202 would be read as "not enqueued" and the
        // request sent again (its jobs would run twice). The backlog is read after the push, from a
        // database that may have gone away since: left out of the answer when it cannot be read.
        const backlog = await Promise.resolve(jobs.views.backlog(b.queue)).catch((err: unknown) => {
          request.log.warn({ err }, 'jobs enqueued; their queue’s backlog could not be read after the push');
          return undefined;
        });
        return reply.code(202).send({ queue: b.queue, enqueued: created.length, ...(backlog === undefined ? {} : { backlog }) });
      } catch (err) {
        if (err instanceof QueueKindError || err instanceof QueueLimitError) throw conflict(err.message);
        throw err;
      }
    },
  );

  app.get(
    '/jobs/queues',
    {
      schema: {
        tags,
        summary:
          'Every queue with its backlog, latency, how many processes serve it, its origin (Jobscope’s or a Sidekiq app’s) and whether DELETE accepts it; with --redis, Sidekiq’s Queue.all (at most --sidekiq-max-queues) and the demo’s queues',
        response: { 200: Type.Array(QueueView) },
      },
    },
    async () => (await jobs.views.list()).map(queueView),
  );

  app.delete(
    '/jobs/queues/:name',
    {
      schema: {
        tags,
        summary:
          'Delete a queue of synthetic jobs: its waiting and retrying jobs are dropped, dead ones stay; built-in and demo queues answer 409, and with --redis so does a Sidekiq app’s queue (origin sidekiq_app) that holds jobs. The queue views say beforehand: `deletable`, and `delete_refusal` is this 409’s message',
        params: QueueParams,
        response: { 200: DeletedQueue },
      },
    },
    async (request) => {
      const { name } = request.params;
      try {
        const done = await deleteQueueByRule(jobs, name);
        if (!done) throw notFound('Queue');
        return { name, dropped: done.dropped };
      } catch (err) {
        if (err instanceof QueueKindError) throw conflict(err.message);
        throw err;
      }
    },
  );

  app.get('/load', { schema: { tags, summary: 'The demo load generator: running or not, its settings', response: { 200: LoadStatus } } }, async () =>
    loadView(demo.status()),
  );

  app.put(
    '/load',
    {
      schema: {
        tags,
        summary: 'Start the demo load, or change it while it runs (only the given settings change)',
        body: LoadPatch,
        response: { 200: LoadStatus },
      },
      preValidation: emptyBodyIsEmptyObject,
    },
    async (request) => loadView(demo.apply(request.body ?? {})),
  );

  app.delete('/load', { schema: { tags, summary: 'Stop the demo load: simulated processes and demo queues go, real ones stay', response: { 200: LoadStatus } } }, async () =>
    loadView(demo.stopLoad()),
  );
}
