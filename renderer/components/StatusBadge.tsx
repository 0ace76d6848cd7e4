// A build's status as a coloured badge; the list and a build's page both show it.
import type { BuildView } from '../api/client.ts';

export function StatusBadge({ status }: { status: BuildView['status'] }) {
  return <span className={`badge status-${status}`} data-testid="build-status">{status}</span>;
}
