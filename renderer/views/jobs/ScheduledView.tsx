// #/scheduled: a Sidekiq's scheduled set (Sidekiq Web's Scheduled page), read-only. This server's
// own job system schedules nothing for later, so for it the page says so.
import { JobsNav, JobsUnavailable, useSelectedConnectionView } from './job-source.tsx';
import { SidekiqSet } from './SidekiqJobs.tsx';
import './jobs.css';

export default function ScheduledView() {
  const { conn } = useSelectedConnectionView();
  return (
    <section className="view" data-testid="view-scheduled">
      <div className="toolbar">
        <h2>Scheduled</h2>
        <span className="spacer" />
        <JobsNav current="scheduled" scheduled />
      </div>
      {conn?.kind === 'gitlab' ? (
        <JobsUnavailable conn={conn} what="Scheduled jobs" />
      ) : conn?.kind === 'sidekiq' ? (
        <SidekiqSet key={conn.id} conn={conn} set="scheduled" />
      ) : (
        <p className="card muted" data-testid="no-scheduled-set">This server’s job system schedules no jobs for later: it has no scheduled set.</p>
      )}
    </section>
  );
}
