// Quiet and stop for one process of a sidekiq connection that allows changes, as Sidekiq Web's Busy
// page offers them: each a signal the process reads at its next heartbeat (within ~5 s), asked
// about first. A quiet process is offered stop only.
import type { ConnectionView } from '../../api/client.ts';
import { jobActionsApi } from '../../api/job-actions.ts';
import { useClient } from '../../app/client-context.tsx';
import { ConfirmButton } from '../../components/jobs/ConfirmButton.tsx';

export function ProcessActions({ conn, identity, quiet, onDone }: { conn: ConnectionView; identity: string; quiet: boolean; onDone: () => void }) {
  const client = useClient();
  return (
    <div className="row gap" data-testid="process-actions">
      {!quiet && (
        <ConfirmButton
          label="Quiet"
          title={`Quiet ${identity}`}
          confirmLabel="Quiet process"
          question={`Quiet ${identity} on ${conn.name}? It finishes the jobs it runs and takes no new ones (TSTP), until it is restarted.`}
          run={() => jobActionsApi.process(client, conn.id, identity, 'quiet')}
          onDone={onDone}
          testId="process-quiet-button"
        />
      )}
      <ConfirmButton
        label="Stop"
        title={`Stop ${identity}`}
        danger
        confirmLabel="Stop process"
        question={`Stop ${identity} on ${conn.name}? It finishes what it can within its timeout and exits (TERM).`}
        run={() => jobActionsApi.process(client, conn.id, identity, 'stop')}
        onDone={onDone}
        testId="process-stop-button"
      />
    </div>
  );
}
