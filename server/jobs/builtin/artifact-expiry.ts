// Erases artifacts whose expire_at has passed (GitLab's ExpireBuildArtifactsWorker): the database
// forgets the archive first, then the file goes, so no reader is ever pointed at a missing file.
import type { BuildsDomain } from '../../domain/builds.ts';
import type { JobKind } from '../types.ts';

export function artifactExpiryJob(builds: BuildsDomain): JobKind {
  return {
    class: 'ExpireBuildArtifactsWorker',
    queue: 'artifact_expiry',
    retry: false,
    async perform() {
      await builds.expireArtifacts(Date.now());
    },
  };
}
