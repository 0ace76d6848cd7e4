// Erases artifacts whose expire_at has passed (GitLab's ExpireBuildArtifactsWorker): the database
// forgets the archive first, then the file goes, so no reader is ever pointed at a missing file.
import type { Store } from '../../store/index.ts';
import type { JobKind } from '../types.ts';

export function artifactExpiryJob(store: Store): JobKind {
  return {
    class: 'ExpireBuildArtifactsWorker',
    queue: 'artifact_expiry',
    retry: false,
    perform() {
      for (const build of store.builds.expiredArtifacts(Date.now())) {
        store.db.tx(() => store.builds.clearArtifacts(build.id));
        store.artifacts.remove(build.artifacts_key);
      }
    },
  };
}
