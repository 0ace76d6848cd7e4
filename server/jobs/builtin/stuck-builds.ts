// Fails builds still `running` past their timeout (the build's, else the project's), as GitLab's
// StuckCiBuildsWorker dropped stuck builds; their runner then sees `Build-Status: failed`.
import type { AppEvents } from '../../context.ts';
import type { Store } from '../../store/index.ts';
import type { JobKind } from '../types.ts';

export function stuckBuildsJob(store: Store, events: AppEvents): JobKind {
  return {
    class: 'StuckCiBuildsWorker',
    queue: 'stuck_builds',
    retry: false, // periodic: the next run does the work again
    perform() {
      for (const build of store.builds.stuck(Date.now())) {
        if (!store.db.tx(() => store.builds.finish(build.id, 'failed'))) continue;
        const done = store.builds.byId(build.id);
        if (done) events.emit('build:finished', done);
      }
    },
  };
}
