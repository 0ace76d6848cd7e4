// Jobscope's own background work, as jobs in plain-named queues: periodic ones scheduled like
// sidekiq-cron (intervals in server/config.ts), the archive listing triggered by each upload.
import type { Config } from '../../config.ts';
import type { AppEvents } from '../../events.ts';
import type { Domain } from '../../domain/index.ts';
import type { JobSystem } from '../job-system.ts';
import { SYNTHETIC, syntheticJob } from './synthetic.ts';
import { stuckBuildsJob } from './stuck-builds.ts';
import { artifactExpiryJob } from './artifact-expiry.ts';
import { runnerContactJob } from './runner-contact.ts';
import { archiveListingJob } from './archive-listing.ts';

export function registerBuiltins(jobs: JobSystem, deps: { config: Config; domain: Domain }): void {
  const { config } = deps;
  const { builds, runners } = deps.domain;
  jobs.register(SYNTHETIC, syntheticJob);
  jobs.register('stuck_builds', stuckBuildsJob(builds));
  jobs.register('artifact_expiry', artifactExpiryJob(builds));
  jobs.register('runner_contact', runnerContactJob(runners, config.runnerOfflineAfterMs));
  jobs.register('archive_listing', archiveListingJob(builds, { maxEntries: config.artifactListingMaxEntries, maxNameBytes: config.artifactListingMaxNameBytes }));
}

/** Starts the periodic schedule and the upload trigger; call after `jobs.start()`. */
export function scheduleBuiltins(jobs: JobSystem, deps: { config: Config; events: AppEvents; domain: Domain }): void {
  const { config, events, domain } = deps;
  const periodic: [string, number][] = [
    ['stuck_builds', config.stuckBuildsEveryMs],
    ['artifact_expiry', config.artifactExpiryEveryMs],
    ['runner_contact', config.runnerContactEveryMs],
  ];
  for (const [kind, ms] of periodic) if (ms > 0) jobs.every(ms, () => jobs.enqueueOnce(kind));
  // Archives stored without a listing: their job was lost, or an older version kept listings in the
  // builds row (migration 5 dropped those). Every instance looks at its start; one listing job per
  // archive between them (one waiting or running is not pushed again: a restart, or N instances on
  // one database, would otherwise list each archive N times).
  jobs.track(
    quiet(
      (async () => {
        const unlisted = await domain.builds.unlistedArchives();
        await jobs.enqueueEachUnlessPending(
          'archive_listing',
          unlisted.map(({ id, key }) => ({ build_id: id, key })),
        );
      })(),
    ),
  );
  events.on('artifacts:stored', ({ buildId, key }) => {
    // The upload is already answered 201; a store error here must not turn into its failure.
    try {
      jobs.track(quiet(jobs.enqueue('archive_listing', { build_id: buildId, key })));
    } catch {
      /* the listing stays empty; the next upload of this build tries again */
    }
  });
}

/** An enqueue nobody waits for: a failure of an asynchronous backend is dropped as a synchronous one is. */
function quiet(v: unknown): unknown {
  return v instanceof Promise ? v.catch(() => undefined) : v;
}
