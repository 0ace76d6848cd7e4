// /api/v3/sim/jobs…: what Sidekiq Web shows of the job system, page by page. A queue's next jobs,
// the retry set (retry now, delete) and the dead set (retry, delete), each list paged the way
// GitLab's API pages (`page`, `per_page`, X-Total… headers) so that the arrays stay what they were
// for callers that know no pages. Everything is read from the job system (its memory mirror or
// its backend; on a shared backend a queue's views are the backend's, jobs/shared-queue-views.ts), never with SQL here.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.ts';
import {
  ActedOn, Count, FailedJobView, JobIds, ListQuery, PageQuery, QueueParams, QueuedJobView, QueueView, RetryDead, SomeJobIds,
  type FailedJobView as FailedJobViewT, type QueuedJobView as QueuedJobViewT, type QueueView as QueueViewT,
} from '../../contract/jobs.ts';
import { badRequest, conflict, notFound } from '../http/errors.ts';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../util/json-depth.ts';
import { pageHeaders, paging } from '../http/paging.ts';
import { keyOf, type FailedSet } from '../jobs/entry-key.ts';
import { sidekiqRetryCount } from '../jobs/types.ts';
import { EntryKeyError, NotAJobError, type GivenKey } from '../jobs/failed-entries.ts';
import { jsonMemberText } from '../util/json-members.ts';
import type { Acted } from '../jobs/failed-set-actions.ts';
import type { FailedJob, Job } from '../jobs/types.ts';
import { deleteRefusal, type QueueState } from '../jobs/queue-views.ts';
import { isoTime, isoTimeOr0 } from '../util/times.ts';

const tags = ['control API: jobs'];
const DEFAULT_PER_PAGE = 25;

/** "RuntimeError: boom" → class and message, as Sidekiq keeps them apart; text of another shape is all message. */
export function splitError(error: string | null): { error_class: string | null; error_message: string | null } {
  if (error === null) return { error_class: null, error_message: null };
  const m = /^([A-Za-z_$][\w$.:]*): ([\s\S]*)$/.exec(error);
  return m ? { error_class: m[1]!, error_message: m[2]! } : { error_class: null, error_message: error };
}

/**
 * Args as the answer can carry them: nested past MAX_JSON_DEPTH (an app may push a payload that deep
 * into Redis) they would overflow the serializer's stack, so they are answered as their stored text.
 */
function argsOf(j: Job): { args: Record<string, unknown>; args_raw: string | null } {
  if (!nestedDeeperThan(j.args, MAX_JSON_DEPTH)) return { args: j.args, args_raw: null };
  return { args: {}, args_raw: (j.raw && jsonMemberText(j.raw, 'args')) ?? j.raw ?? '' };
}

// Never new Date(x).toISOString(): it throws on a time past Date's range.
export function failedView(j: FailedJob, set: FailedSet): FailedJobViewT {
  const { args, args_raw } = argsOf(j);
  return {
    key: keyOf(j, set),
    id: j.id,
    queue: j.queue,
    class: j.class,
    args,
    retry: j.retry,
    retry_count: sidekiqRetryCount(j.retry_count, set),
    error: j.error,
    ...splitError(j.error),
    created_at: isoTimeOr0(j.created_at),
    enqueued_at: isoTimeOr0(j.enqueued_at),
    failed_at: isoTime(j.failed_at),
    first_failed_at: isoTime(j.first_failed_at ?? null),
    run_at: isoTime(j.run_at),
    args_raw: j.unreadable ? (j.raw ?? '') : args_raw,
    unreadable: j.unreadable === true,
  };
}

const queuedView = (j: Job): QueuedJobViewT => ({
  id: j.id,
  queue: j.queue,
  class: j.class,
  ...argsOf(j),
  retry: j.retry,
  retry_count: sidekiqRetryCount(j.retry_count, 'queue'),
  created_at: isoTimeOr0(j.created_at),
  enqueued_at: isoTimeOr0(j.enqueued_at),
});

export const queueView = (q: QueueState): QueueViewT => ({
  name: q.name,
  origin: q.origin,
  durable: q.durable,
  backlog: q.backlog,
  latency: q.latency,
  oldest_enqueued_at: isoTime(q.oldestEnqueuedAt),
  processes: q.processes,
  builtin: q.builtin,
  ...deletion(q),
});

function deletion(q: QueueState): Pick<QueueViewT, 'deletable' | 'delete_refusal'> {
  const refusal = deleteRefusal(q);
  return { deletable: refusal === null, delete_refusal: refusal };
}

/** Keys given and none of them in the set: nothing was done, say so (some missing is a partial success). */
function foundSome(acted: Acted, ids: GivenKey[] | undefined, set: string): Acted {
  if (ids && acted.count === 0) throw notFound(`Job ${acted.missing.slice(0, 20).join(', ')} in the ${set}`);
  return acted;
}

/** A key that names no entry by its form (or several) is the caller's 400; asking to retry what is no job, a 409. */
async function keyed<T>(act: () => T | Promise<T>): Promise<T> {
  try {
    return await act();
  } catch (err) {
    if (err instanceof EntryKeyError) throw badRequest(err.message);
    if (err instanceof NotAJobError) throw conflict(err.message);
    throw err;
  }
}

/** `curl -X POST …/retry` with no body means "all", not a 400. */
async function emptyBodyIsEmptyObject(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null || request.body === '') request.body = {};
}

export async function jobSetsRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const { jobs } = ctx;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const or404 = <T>(v: T | undefined): T => v ?? (() => { throw notFound('Queue'); })();

  app.get(
    '/jobs/queues/:name',
    { schema: { tags, summary: 'One queue: size, latency, its origin (Jobscope’s or a Sidekiq app’s), whether it is built in or the demo’s, whether DELETE accepts it', params: QueueParams, response: { 200: QueueView } } },
    async (request) => queueView(or404(await jobs.views.one(request.params.name))),
  );

  app.get(
    '/jobs/queues/:name/jobs',
    {
      schema: {
        tags,
        summary: 'A queue’s waiting jobs in the order workers take them, paged (`page`, `per_page`; X-Total… headers); running jobs are not listed',
        params: QueueParams,
        querystring: PageQuery,
        response: { 200: Type.Array(QueuedJobView) },
      },
    },
    async (request, reply) => {
      const p = paging(request.query, DEFAULT_PER_PAGE);
      const page = or404(await jobs.views.jobs(request.params.name, p.offset, p.perPage));
      pageHeaders(reply, p, page.total);
      return page.jobs.map(queuedView);
    },
  );

  app.get(
    '/jobs/retries',
    {
      schema: {
        tags,
        summary: 'The retry set: failed jobs waiting for their next attempt, soonest first; paged with `page` and `per_page` (default 100 = `limit`), X-Total… headers',
        querystring: ListQuery,
        response: { 200: Type.Array(FailedJobView) },
      },
    },
    async (request, reply) => {
      const all = await jobs.retries();
      const p = paging(request.query, 100);
      pageHeaders(reply, p, all.length);
      return all.slice(p.offset, p.offset + p.perPage).map((j) => failedView(j, 'retry'));
    },
  );

  app.post(
    '/jobs/retries/retry',
    {
      schema: { tags, summary: 'Retry now: jobs of the retry set (`ids`: keys, or all) go back into their queues at once; 404 when none of the keys is there; 409 when one names an entry that is no job', body: SomeJobIds, response: { 200: ActedOn } },
      preValidation: emptyBodyIsEmptyObject,
    },
    async (request) => foundSome(await keyed(() => jobs.retryNow(request.body?.ids)), request.body?.ids, 'retry set'),
  );

  app.post(
    '/jobs/retries/delete',
    { schema: { tags, summary: 'Delete jobs from the retry set by key (`<score>-<jid>`, or the old numeric id): they never run again; 404 when none of the ids is there', body: JobIds, response: { 200: ActedOn } } },
    async (request) => foundSome(await keyed(() => jobs.deleteRetries(request.body.ids)), request.body.ids, 'retry set'),
  );

  app.delete('/jobs/retries', { schema: { tags, summary: 'Empty the retry set', response: { 200: Count } } }, async () => ({ count: await jobs.clearRetries() }));

  app.get(
    '/jobs/dead',
    {
      schema: {
        tags,
        summary: 'The dead set: jobs that failed all their retries, newest first; paged with `page` and `per_page` (default 100 = `limit`), X-Total… headers',
        querystring: ListQuery,
        response: { 200: Type.Array(FailedJobView) },
      },
    },
    async (request, reply) => {
      const p = paging(request.query, 100);
      pageHeaders(reply, p, await jobs.deadSize());
      return (await jobs.dead(p.perPage, p.offset)).map((j) => failedView(j, 'dead'));
    },
  );

  app.post(
    '/jobs/dead/retry',
    { schema: { tags, summary: 'Put dead jobs (all, or `ids`: keys) back into their queues; keys naming no dead job are skipped; 409 when one names an entry that is no job (entries that are no job are skipped by “all”)', body: RetryDead, response: { 200: Count } }, preValidation: emptyBodyIsEmptyObject },
    async (request) => ({ count: await keyed(() => jobs.retryDead(request.body?.ids)) }),
  );

  app.post(
    '/jobs/dead/delete',
    { schema: { tags, summary: 'Delete jobs from the dead set by key (`<score>-<jid>`, or the old numeric id); 404 when none of the ids is there', body: JobIds, response: { 200: ActedOn } } },
    async (request) => foundSome(await keyed(() => jobs.deleteDead(request.body.ids)), request.body.ids, 'dead set'),
  );

  app.delete('/jobs/dead', { schema: { tags, summary: 'Empty the dead set', response: { 200: Count } } }, async () => ({
    count: await jobs.clearDead(),
  }));
}
