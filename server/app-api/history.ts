// Reading a connection's samples: the latest one, a downsampled range, and that range as CSV.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { CurrentSample, History, HistoryQuery } from '../../contract/app.ts';
import type { MonitorApi } from '../monitor/api.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { IdParams } from './schemas.ts';
import { MAX_DATE_MS } from '../util/times.ts';
import { connectionOr404 } from './connections.ts';
import { historyCsv } from './csv.ts';
import { historyCsvName } from '../../common/file-name.ts';

const tags = ['app API'];
/** Retention is days; a year bounds the bucket arithmetic of a silly range. */
const MAX_RANGE_MS = 366 * 24 * 3_600_000;

/** Epoch ms into what a Date holds (no sample is older than 1970): the CSV formats every bucket time. */
const clampTime = (ms: number) => Math.min(Math.max(ms, 0), MAX_DATE_MS);

/** The one reading of a range that history and its CSV export share, so both answer alike. */
function rangeOf(q: HistoryQuery) {
  const from = clampTime(q.from);
  const to = clampTime(q.to);
  if (to < from) throw badRequest('to is before from; both are epoch milliseconds');
  if (to - from > MAX_RANGE_MS) throw badRequest('the range is longer than a year; ask for a shorter one');
  const queues = q.queues
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (queues && queues.length > 500) throw badRequest('queues: at most 500 names');
  return { from, to, points: q.points ?? 1000, top: q.top ?? 8, queues };
}

export async function historyRoutes(fastify: FastifyInstance, { monitor }: { monitor: MonitorApi }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/connections/:id/current',
    { schema: { tags, summary: 'The latest good sample of a connection (compound_metrics and its time)', params: IdParams, response: { 200: CurrentSample } } },
    async (request) => {
      const c = await connectionOr404(monitor, request.params.id);
      const latest = await monitor.current(c.id);
      if (!latest) {
        throw new ApiError(404, c.lastError ? `404 No sample yet - the last attempt failed: ${c.lastError}` : `404 No sample yet - the first one arrives within ${c.intervalS} s`);
      }
      return { at: new Date(latest.at).toISOString(), ...latest.metrics };
    },
  );

  app.get(
    '/connections/:id/history',
    {
      schema: {
        tags,
        summary: 'A time range of sampled history, downsampled to at most `points` buckets per series; top queues by peak backlog unless `queues` is given',
        params: IdParams,
        querystring: HistoryQuery,
        response: { 200: History },
      },
    },
    async (request, reply) => {
      const c = await connectionOr404(monitor, request.params.id);
      const h = await monitor.history(c, rangeOf(request.query));
      // JSON.stringify, not the schema's serializer: its number-or-null arrays make it test every
      // element against both types, several times slower on ~100k values.
      return reply.type('application/json').serializer(JSON.stringify).send(h);
    },
  );

  app.get(
    '/connections/:id/export.csv',
    {
      schema: {
        tags,
        summary: 'The downsampled range as CSV: one row per bucket, totals, rates, then backlog and latency per queue',
        params: IdParams,
        querystring: HistoryQuery,
        produces: ['text/csv'],
      },
    },
    async (request, reply) => {
      const c = await connectionOr404(monitor, request.params.id);
      const h = await monitor.history(c, rangeOf(request.query));
      const name = historyCsvName(c.name, c.id, h.from);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}"`)
        .send(historyCsv(h));
    },
  );
}
