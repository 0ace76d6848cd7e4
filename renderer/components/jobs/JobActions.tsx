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

interface ButtonSpec {
  label: string;
  /** The accessible name: the label, then which job. */
  name: string;
  confirmLabel: string;
  question: string;
  danger?: boolean;
  run(): Promise<unknown>;
  testId: string;
}

export function JobActions({ conn, target, onDone }: { conn: ConnectionView; target: JobTarget; onDone?: () => void }) {
  const client = useClient();
  const embedded = conn.kind === 'embedded';
  const buttons: ButtonSpec[] = [];
  if (target.kind === 'queued') {
    // This server's job system deletes whole queues only.
    if (!embedded) {
      buttons.push({
        label: 'Delete',
        name: `Delete ${target.label} from ${target.queue}`,
        danger: true,
        confirmLabel: 'Delete job',
        question: `Delete ${target.label} (${target.jid}) from queue ${target.queue} of ${conn.name}? It will never run.`,
        run: () => jobActionsApi.deleteQueued(client, conn.id, target.queue, target.jid),
        testId: 'job-delete',
      });
    }
  } else {
    const { set, key, label } = target;
    const where = `${SET_NAME[set]} of ${conn.name}`;
    if (set === 'schedule') {
      buttons.push({ label: 'Add to queue', name: `Add to queue: ${label}`, confirmLabel: 'Add to queue', question: `Run ${label} now instead of at its time: it goes into its queue, out of the ${where}.`, run: () => jobActionsApi.entry(client, conn.id, set, key, 'enqueue'), testId: 'job-enqueue' });
    } else {
      buttons.push({ label: 'Retry now', name: `Retry now: ${label}`, confirmLabel: 'Retry now', question: `Put ${label} back into its queue now, out of the ${where}?`, run: () => jobActionsApi.entry(client, conn.id, set, key, 'retry'), testId: 'job-retry' });
    }
    if (set !== 'dead') {
      buttons.push({ label: 'Kill', name: `Kill ${label}`, danger: true, confirmLabel: 'Kill job', question: `Move ${label} to the dead set of ${conn.name}? It will not run again unless retried from there.`, run: () => jobActionsApi.entry(client, conn.id, set, key, 'kill'), testId: 'job-kill' });
    }
    buttons.push({ label: 'Delete', name: `Delete ${label}`, danger: true, confirmLabel: 'Delete job', question: `Delete ${label} from the ${where}? It will never run.`, run: () => jobActionsApi.deleteEntry(client, conn.id, set, key), testId: 'job-delete' });
  }
  if (!buttons.length) return null;
  const off = changesRefusal(conn);
  return (
    <div className="row gap" data-testid="job-actions">
      {buttons.map((b) => (
        <ConfirmButton key={b.testId} label={b.label} title={b.name} danger={b.danger} confirmLabel={b.confirmLabel} question={b.question} run={b.run} onDone={onDone} disabledReason={off} testId={b.testId} />
      ))}
    </div>
  );
}
