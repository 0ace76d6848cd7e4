// What can be done to one job, wherever it is shown (a set's row, a queue's row, the job's own
// page): retry now, add to queue, kill, delete, each asked about first. The same buttons and calls
// for this server's job system and a sidekiq connection; on a connection that does not allow
// changes they are offered as unavailable, saying how to allow them.
import type { ConnectionView } from '../../api/client.ts';
import { jobActionsApi, type ActionSet } from '../../api/job-actions.ts';
import { useClient } from '../../app/client-context.tsx';
import { ConfirmButton } from './ConfirmButton.tsx';

/** A set entry (named by its `<score>-<jid>` key) or a job waiting in a queue (by jid). */
export type JobTarget = { kind: 'entry'; set: ActionSet; key: string; label: string } | { kind: 'queued'; queue: string; jid: string; label: string };

const SET_NAME: Record<ActionSet, string> = { retry: 'retry set', schedule: 'scheduled set', dead: 'dead set' };

/** Why changes are not offered on this connection, or undefined when they are. */
export function changesRefusal(conn: ConnectionView): string | undefined {
  if (conn.allow_changes) return undefined;
  if (conn.kind === 'gitlab') return `${conn.name} is read over GitLab's metrics API: its jobs cannot be acted on`;
  return `Read-only: turn on “Allow changes” for ${conn.name} in Connections to act on its jobs`;
}

export function JobActions({ conn, target, onDone }: { conn: ConnectionView; target: JobTarget; onDone?: () => void }) {
  const client = useClient();
  const off = changesRefusal(conn);
  const embedded = conn.kind === 'embedded';
  const common = { disabledReason: off, onDone };
  if (target.kind === 'queued') {
    if (embedded) return null; // this server deletes whole queues only
    return (
      <div className="row gap" data-testid="job-actions">
        <ConfirmButton
          {...common}
          label="Delete"
          title={`Delete ${target.label} from ${target.queue}`}
          danger
          confirmLabel="Delete job"
          question={`Delete ${target.label} (${target.jid}) from queue ${target.queue} of ${conn.name}? It will never run.`}
          run={() => jobActionsApi.deleteQueued(client, conn.id, target.queue, target.jid)}
          testId="job-delete"
        />
      </div>
    );
  }
  const { set, key, label } = target;
  const where = `${SET_NAME[set]} of ${conn.name}`;
  return (
    <div className="row gap" data-testid="job-actions">
      {set !== 'schedule' && (
        <ConfirmButton
          {...common}
          label="Retry now"
          title={`Retry now: ${label}`}
          confirmLabel="Retry now"
          question={`Put ${label} back into its queue now, out of the ${where}?`}
          run={() => jobActionsApi.entry(client, conn.id, set, key, 'retry')}
          testId="job-retry"
        />
      )}
      {set === 'schedule' && (
        <ConfirmButton
          {...common}
          label="Add to queue"
          title={`Add to queue: ${label}`}
          confirmLabel="Add to queue"
          question={`Run ${label} now instead of at its time: it goes into its queue, out of the ${where}.`}
          run={() => jobActionsApi.entry(client, conn.id, set, key, 'enqueue')}
          testId="job-enqueue"
        />
      )}
      {set !== 'dead' && !embedded && (
        <ConfirmButton
          {...common}
          label="Kill"
          title={`Kill ${label}`}
          danger
          confirmLabel="Kill job"
          question={`Move ${label} to the dead set of ${conn.name}? It will not run again unless retried from there.`}
          run={() => jobActionsApi.entry(client, conn.id, set, key, 'kill')}
          testId="job-kill"
        />
      )}
      <ConfirmButton
        {...common}
        label="Delete"
        title={`Delete ${label}`}
        danger
        confirmLabel="Delete job"
        question={`Delete ${label} from the ${where}? It will never run.`}
        run={() => jobActionsApi.deleteEntry(client, conn.id, set, key)}
        testId="job-delete"
      />
    </div>
  );
}
