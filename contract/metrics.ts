// The job-queue metrics API's answers, exactly as GitLab's /api/v3/sidekiq/* gave them.
// Used by the metrics routes, by the sampler (which reads the same shapes from remote GitLabs)
// and, as types only, by the renderer.
import { Type, type Static } from '@sinclair/typebox';

export const QueueEntry = Type.Object({
  backlog: Type.Integer({ description: 'jobs waiting in the queue' }),
  latency: Type.Integer({ description: 'seconds since the oldest waiting job was enqueued (truncated; 0 when empty)' }),
});

export const QueueMetrics = Type.Object({ queues: Type.Record(Type.String(), QueueEntry) });
export type QueueMetrics = Static<typeof QueueMetrics>;

export const ProcessEntry = Type.Object({
  hostname: Type.String(),
  pid: Type.Integer(),
  tag: Type.String(),
  started_at: Type.String({ description: 'ISO 8601 with milliseconds and UTC offset, e.g. 2016-06-14T10:45:07.159-05:00' }),
  queues: Type.Array(Type.String()),
  labels: Type.Array(Type.String()),
  concurrency: Type.Integer(),
  busy: Type.Integer(),
});
export type ProcessEntry = Static<typeof ProcessEntry>;

export const ProcessMetrics = Type.Object({ processes: Type.Array(ProcessEntry) });
export type ProcessMetrics = Static<typeof ProcessMetrics>;

export const JobStats = Type.Object({
  jobs: Type.Object({ processed: Type.Integer(), failed: Type.Integer(), enqueued: Type.Integer() }),
});
export type JobStats = Static<typeof JobStats>;

export const CompoundMetrics = Type.Object({
  queues: QueueMetrics.properties.queues,
  processes: ProcessMetrics.properties.processes,
  jobs: JobStats.properties.jobs,
});
export type CompoundMetrics = Static<typeof CompoundMetrics>;
