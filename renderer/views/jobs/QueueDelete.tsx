// Delete for one queue and its origin badge, both from the server's queue view: whether Delete is
// offered is the view's `deletable` (the rule DELETE itself applies), never decided here, so the
// page never offers a Delete the server would refuse (a Sidekiq app's queue with jobs, a built-in
// or a demo queue). A refused queue keeps a focusable button marked aria-disabled with the
// server's reason as tooltip and accessible description: keyboard and screen-reader users can
// reach it and learn why, which a `disabled` button (skipped by Tab) would not allow.
import type { QueueView } from '../../api/jobs.ts';

export const ORIGIN_LABEL: Record<QueueView['origin'], string> = { jobscope: 'Jobscope', sidekiq_app: 'Sidekiq app' };
const ORIGIN_HINT: Record<QueueView['origin'], string> = {
  jobscope: 'made by Jobscope: a built-in job kind’s queue, a queue of synthetic jobs or the demo load’s',
  sidekiq_app: 'a Sidekiq app’s queue found in Redis; Jobscope did not create it and does not take its jobs',
};

export function OriginBadge({ q }: { q: QueueView }) {
  return <span className={`badge origin-${q.origin}`} title={ORIGIN_HINT[q.origin]} data-testid="queue-origin" data-origin={q.origin}>{ORIGIN_LABEL[q.origin]}</span>;
}

/** The question asked before deleting: what goes with the queue. */
export function deleteQuestion(q: QueueView): string {
  if (q.origin === 'sidekiq_app') return `Forget the empty queue ${q.name} of a Sidekiq app? The app’s next push lists it again.`;
  if (q.backlog > 0) return `Delete queue ${q.name}? Its ${q.backlog} waiting job${q.backlog === 1 ? '' : 's'} and its retrying jobs are dropped; dead jobs stay in the dead set.`;
  return `Delete the empty queue ${q.name}?`;
}

export function QueueDeleteButton({ q, text, busy, onDelete, testId }: { q: QueueView; text: string; busy: boolean; onDelete: () => void; testId: string }) {
  const refused = !q.deletable;
  return (
    <button
      className="ghost danger queue-delete"
      aria-label={`Delete queue ${q.name}`}
      aria-disabled={refused || busy}
      title={refused ? (q.delete_refusal ?? undefined) : undefined}
      onClick={() => {
        if (!refused && !busy && confirm(deleteQuestion(q))) onDelete();
      }}
      data-testid={testId}
      data-deletable={String(q.deletable)}
    >
      {text}
    </button>
  );
}
