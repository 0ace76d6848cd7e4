// What each metric means, shown wherever the metric is named (hover or keyboard focus).
import { useId, type ReactNode } from 'react';

export const GLOSSARY = {
  backlog: 'Backlog: jobs waiting in a queue, not yet picked up by a worker.',
  latency: 'Latency: how long the oldest waiting job of a queue has waited, in seconds (0 when the queue is empty).',
  busy: 'Busy: workers running a job right now, summed over all processes.',
  concurrency: 'Concurrency: worker threads available, summed over the processes that take work (a quiet Sidekiq process does not) — the most jobs that can run at once.',
  processed: 'Processed: jobs completed since the counters began (a counter; the rate is its change per second over at least the last 10 s, as Sidekiq adds to it once per 5 s heartbeat).',
  failed: 'Failed: jobs that raised an error (a counter; each retry that fails counts again).',
  enqueued: 'Enqueued: jobs waiting in all queues together (the sum of the backlogs).',
  utilization: 'Utilization: busy ÷ concurrency — how much of the worker capacity is in use. A quiet Sidekiq process takes no new work, so its threads are left out of both.',
  processes: 'Processes: worker processes that reported in the latest sample.',
  retries: 'Retries: failed jobs waiting in Sidekiq’s retry set for their next attempt.',
  scheduled: 'Scheduled: jobs in Sidekiq’s schedule set, to be enqueued at a later time.',
  dead: 'Dead: jobs that ran out of retries, kept in Sidekiq’s dead set (the morgue) until they expire or are deleted.',
  failure_rate: 'Failure rate: failed jobs per second, from the change of the failed counter over at least the last 10 s.',
} as const;

export type Term = keyof typeof GLOSSARY;

export function Glossary({ term, children }: { term: Term; children?: ReactNode }) {
  const id = useId();
  return (
    <span className="term" tabIndex={0} aria-describedby={id} data-testid={`glossary-${term}`}>
      {children ?? term}
      <span className="term-mark" aria-hidden="true">?</span>
      <span className="term-tip" role="tooltip" id={id}>{GLOSSARY[term]}</span>
    </span>
  );
}
