// Fails builds still `running` past their timeout (the build's, else the project's), as GitLab's
// StuckCiBuildsWorker dropped stuck builds; their runner then sees `Build-Status: failed`.
import type { BuildsDomain } from '../../domain/builds.ts';
import type { JobKind } from '../types.ts';

export function stuckBuildsJob(builds: BuildsDomain): JobKind {
  return {
    class: 'StuckCiBuildsWorker',
    queue: 'stuck_builds',
    retry: false, // periodic: the next run does the work again
    async perform() {
      await builds.failStuck(Date.now());
    },
  };
}
