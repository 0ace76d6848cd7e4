// GET queue_metrics | process_metrics | job_stats | compound_metrics under /api/v3/sidekiq (GitLab
// 8.9+), /api/v3/jobqueue (the seed's name for it) and /api/v4/sidekiq (current GitLab), identical
// answers. Admin only: 401 without a known user token, 403 for a non-admin user. The numbers come
// from a MetricsSource (source.ts): the embedded job system unless the app passes another.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../context.ts';
import { CompoundMetrics, JobStats, ProcessMetrics, QueueMetrics } from '../../contract/metrics.ts';
import { requireAdmin } from '../auth/admin.ts';
import { AnswerMemo } from './answer-memo.ts';
import { compoundBytes, jobStatsJson, processMetricsJson, queueMetricsJson } from './json-writer.ts';
import type { MetricsSource } from '../metrics/source.ts';

export const METRICS_PREFIXES = ['/api/v3/sidekiq', '/api/v3/jobqueue', '/api/v4/sidekiq'];

const ENDPOINTS = [
  { path: 'queue_metrics', schema: QueueMetrics, summary: 'Queues with backlog and latency (whole seconds since the oldest waiting job was enqueued)', answer: queueMetricsJson },
  { path: 'process_metrics', schema: ProcessMetrics, summary: 'Worker processes: hostname, pid, tag, started_at, queues, labels, concurrency, busy', answer: processMetricsJson },
  { path: 'job_stats', schema: JobStats, summary: 'Job counters: processed, failed (cumulative) and enqueued (sum of backlogs)', answer: jobStatsJson },
  { path: 'compound_metrics', schema: CompoundMetrics, summary: 'queue_metrics, process_metrics and job_stats in one answer', answer: compoundBytes },
] as const;

interface MetricsOptions {
  ctx: AppContext;
  source?: MetricsSource;
}

/** One memo per endpoint, shared by its prefixes and suffixes (answer-memo.ts). */
type Memos = Map<(typeof ENDPOINTS)[number]['path'], AnswerMemo>;

async function metricsRoutes(fastify: FastifyInstance, { ctx, source = ctx.jobs, memos }: MetricsOptions & { memos: Memos }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', async (request) => requireAdmin(ctx.store, request));
  for (const e of ENDPOINTS) {
    const schema = {
      tags: ['metrics API'],
      summary: e.summary,
      security: [{ privateToken: [] }],
      response: { 200: e.schema },
    };
    // The schema documents the answer; the bytes are json-writer.ts's text (a Buffer is sent as is).
    const memo = memos.get(e.path)!;
    const handler = async (_request: unknown, reply: FastifyReply) => {
      const view = await source.read();
      return reply.type('application/json').send(memo.answer(view, source.now()));
    };
    app.get(`/${e.path}`, { schema }, handler);
    // Grape routes took an optional format suffix; GitLab answered `.json` the same.
    app.get(`/${e.path}.json`, { schema: { ...schema, hide: true } }, handler);
  }
}

export async function metricsApi(app: FastifyInstance, { ctx, source }: MetricsOptions) {
  const memos: Memos = new Map(ENDPOINTS.map((e) => [e.path, new AnswerMemo(e.answer)]));
  for (const prefix of METRICS_PREFIXES) await app.register(metricsRoutes, { prefix, ctx, source, memos });
}
