// Actions on a connection's jobs and processes: retry, kill, add to queue, delete (one or all),
// delete a queued job, clear a queue, quiet or stop a process. One set of routes for every job
// system Jobscope can act on, each answered by an adapter that only hands the call on (as
// bull-board's one adapter per queue library): this server's job system (job-actions-embedded.ts)
// and a watched Sidekiq's Redis (job-actions-sidekiq.ts). A sidekiq connection is read-only until
// its user turns on "allow changes"; every action is logged with who asked and on what.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  ActionDone, EntryActionParams, EntryParams, ProcessActionParams, QueueActionParams, QueuedJobParams, SetActionParams, SetParams,
  type ActionDone as ActionDoneT,
} from '../../contract/job-actions.ts';
import type { MonitorApi } from '../monitor/api.ts';
import type { AppContext } from '../context.ts';
import type { Connection } from '../store/ports/monitor-ports.ts';
import { ApiError, badRequest, conflict, forbidden } from '../http/errors.ts';
import { changesAllowed } from '../monitor/connections.ts';
import { connectionOr404 } from './connections.ts';
import { CannotAct, NotOffered, NotThere } from '../jobs/action-errors.ts';
import { EntryKeyError, NotAJobError } from '../jobs/failed-entries.ts';
import { QueueKindError } from '../jobs/queue-errors.ts';
import type { JobActionsAdapter } from './job-actions-adapter.ts';
import { embeddedActions } from './job-actions-embedded.ts';
import { sidekiqActions } from './job-actions-sidekiq.ts';

const tags = ['app API: actions'];

export async function jobActionRoutes(fastify: FastifyInstance, { monitor, ctx }: { monitor: MonitorApi; ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  /** The adapter for a connection that allows changes; 403 saying how to allow them otherwise. */
  async function adapterFor(id: string): Promise<{ c: Connection; adapter: JobActionsAdapter }> {
    const c = await connectionOr404(monitor, id);
    if (c.kind === 'gitlab') throw badRequest(`${c.name} is a GitLab connection: Jobscope reads its metrics API only and cannot act on its jobs`);
    if (!changesAllowed(c)) {
      throw forbidden(`${c.name} is read-only: turn on 'allow changes' for ${c.name} in Connections to retry, delete or kill its jobs and quiet or stop its processes`);
    }
    return { c, adapter: c.kind === 'embedded' ? embeddedActions(ctx.jobs) : sidekiqActions(monitor.sidekiq.of(c)) };
  }

  /** Runs the action, logs it, answers what was done; the adapters' refusals as 4xx with a sentence. */
  async function act(request: FastifyRequest, id: string, what: string, run: (a: JobActionsAdapter) => Promise<{ count: number; left: number }>): Promise<ActionDoneT> {
    const { c, adapter } = await adapterFor(id);
    let done: { count: number; left: number };
    try {
      done = await run(adapter);
    } catch (err) {
      throw refusal(err);
    }
    const message = `${what} on ${c.name}: ${done.count} done${done.left ? `, ${done.left} left` : ''}`;
    request.log.info({ connection: c.id, connectionName: c.name, action: what, count: done.count, left: done.left, from: request.ip }, message);
    return { ...done, message };
  }

  const one = async (p: Promise<void>) => {
    await p;
    return { count: 1, left: 0 };
  };
  const response = { 200: ActionDone };

  app.post(
    '/connections/:id/jobs/sets/:set/:key/:action',
    { schema: { tags, summary: 'Retry now (retry or dead set), kill (retry or scheduled set → dead) or add a scheduled job to its queue now; 404 when the entry is gone', params: EntryActionParams, response } },
    async (request) => {
      const { id, set, key, action } = request.params;
      return act(request, id, `${action} ${set} entry ${key}`, (a) => one(a.entry(set, key, action)));
    },
  );

  app.delete(
    '/connections/:id/jobs/sets/:set/:key',
    { schema: { tags, summary: 'Delete one entry of the retry, scheduled or dead set; 404 when it is gone', params: EntryParams, response } },
    async (request) => {
      const { id, set, key } = request.params;
      return act(request, id, `delete ${set} entry ${key}`, (a) => one(a.entry(set, key, 'delete')));
    },
  );

  app.post(
    '/connections/:id/jobs/sets/:set/all/:action',
    { schema: { tags, summary: 'Retry (or add to queue) or kill every entry of a set, one at a time as Sidekiq does; `left` says what stayed', params: SetActionParams, response } },
    async (request) => {
      const { id, set, action } = request.params;
      return act(request, id, `${action} all of ${set}`, (a) => a.all(set, action));
    },
  );

  app.delete(
    '/connections/:id/jobs/sets/:set',
    { schema: { tags, summary: 'Delete every entry of the retry, scheduled or dead set', params: SetParams, response } },
    async (request) => {
      const { id, set } = request.params;
      return act(request, id, `delete all of ${set}`, (a) => a.all(set, 'delete'));
    },
  );

  app.delete(
    '/connections/:id/jobs/queues/:queue/:jid',
    { schema: { tags, summary: 'Delete one waiting job from a queue, by jid; 404 when it is not waiting there any more', params: QueuedJobParams, response } },
    async (request) => {
      const { id, queue, jid } = request.params;
      return act(request, id, `delete job ${jid} from queue ${queue}`, (a) => one(a.deleteQueued(queue, jid)));
    },
  );

  app.delete(
    '/connections/:id/jobs/queues/:queue',
    { schema: { tags, summary: 'Clear a queue: its waiting jobs are deleted and the queue forgotten (Sidekiq Web’s Delete on the queue page)', params: QueueActionParams, response } },
    async (request) => {
      const { id, queue } = request.params;
      return act(request, id, `clear queue ${queue}`, async (a) => ({ count: await a.clearQueue(queue), left: 0 }));
    },
  );

  app.post(
    '/connections/:id/processes/:identity/:action',
    { schema: { tags, summary: 'Quiet (take no new jobs) or stop a process, through the signal its next heartbeat reads (within ~5 s)', params: ProcessActionParams, response } },
    async (request) => {
      const { id, identity, action } = request.params;
      return act(request, id, `${action} process ${identity}`, (a) => one(a.signal(identity, action)));
    },
  );
}

function refusal(err: unknown): unknown {
  if (err instanceof NotThere) return new ApiError(404, err.message);
  if (err instanceof CannotAct || err instanceof NotAJobError || err instanceof QueueKindError) return conflict(err.message);
  if (err instanceof EntryKeyError || err instanceof NotOffered) return badRequest(err.message);
  return err;
}
