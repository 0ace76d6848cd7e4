// "Allow changes" on a sidekiq connection: off by default, so nothing Jobscope shows writes to
// someone's production Redis until its user says so here, after a question that says what it
// allows. Turning it off again needs no question.
import type { ConnectionView } from '../../api/client.ts';
import { useClient } from '../../app/client-context.tsx';
import { ConfirmButton } from '../../components/jobs/ConfirmButton.tsx';

export function ChangesBadge({ c }: { c: ConnectionView }) {
  if (c.kind !== 'sidekiq') return null;
  return c.allow_changes ? (
    <span className="badge warn" data-testid="changes-allowed" title="Retry, delete and kill jobs, clear queues, quiet and stop processes from Jobscope">changes allowed</span>
  ) : (
    <span className="badge" data-testid="changes-read-only" title="Jobscope only reads this Redis">read-only</span>
  );
}

export function AllowChangesToggle({ c, onChanged }: { c: ConnectionView; onChanged: () => void }) {
  const client = useClient();
  if (c.kind !== 'sidekiq') return null;
  if (c.allow_changes) {
    return (
      <ConfirmButton
        label="Make read-only"
        title={`Make read-only: ${c.name}`}
        confirmLabel="Make read-only"
        question={`Stop acting on ${c.name} from Jobscope? Its jobs and processes stay listed; retry, delete, kill, clear, quiet and stop are no longer offered.`}
        run={() => client.patchConnection(c.id, { allow_changes: false })}
        onDone={onChanged}
        testId="connection-read-only"
      />
    );
  }
  return (
    <ConfirmButton
      label="Allow changes"
      title={`Allow changes on ${c.name}`}
      danger
      confirmLabel="Allow changes"
      question={
        `Let Jobscope change ${c.name}'s Redis (${c.base_url ?? ''}${c.namespace ? `, namespace ${c.namespace}` : ''})? ` +
        'Anyone with this Jobscope’s admin token can then retry, delete and kill its jobs, clear its queues, and quiet or stop its processes, as Sidekiq Web can. Each action is asked about first and logged.'
      }
      run={() => client.patchConnection(c.id, { allow_changes: true })}
      onDone={onChanged}
      testId="connection-allow-changes"
    />
  );
}
