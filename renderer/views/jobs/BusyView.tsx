// #/busy: what the selected connection's workers run now (Sidekiq Web's Busy page): process,
// thread, queue, class, arguments (short, the whole value on demand), when it started and for how
// long. Refreshed at the app's pace; Pause holds the list still (no asking) until resumed.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import type { BusyJob, ConnectionView } from '../../api/client.ts';
import { clock, humanDuration, num } from '../../components/format.ts';
import { stamp } from '../../components/jobs/job-row.ts';
import { usePace } from '../../app/pace.tsx';
import { usePauses } from '../dashboard/usePauses.ts';
import { QuietBadge } from '../dashboard/ProcessesTable.tsx';
import { JobsNav, JobsUnavailable, useSelectedConnectionView } from './job-source.tsx';
import './jobs.css';

export default function BusyView() {
  const { conn } = useSelectedConnectionView();
  return (
    <section className="view" data-testid="view-busy">
      <div className="toolbar">
        <h2>Busy</h2>
        <span className="spacer" />
        <JobsNav current="busy" />
      </div>
      {conn?.kind === 'gitlab' ? <JobsUnavailable conn={conn} what="Running jobs" /> : conn ? <BusyList key={conn.id} conn={conn} /> : null}
    </section>
  );
}

function Args({ job }: { job: BusyJob }) {
  if (!job.args_truncated) return <code>{job.args}</code>;
  return (
    <details className="busy-args">
      <summary><code>{job.args}</code></summary>
      <pre tabIndex={0} aria-label={`Whole arguments of ${job.class}`}>{job.args_full ?? job.args}</pre>
    </details>
  );
}

function BusyList({ conn }: { conn: ConnectionView }) {
  const client = useClient();
  const { pausedAt, toggle } = usePauses();
  const live = pausedAt === null;
  const pace = usePace(3000);
  const busy = useQuery({
    queryKey: ['busy', conn.id],
    queryFn: () => client.busy(conn.id),
    refetchInterval: live ? pace : false,
    enabled: live,
    placeholderData: keepPreviousData,
  });
  const page = busy.data;
  return (
    <div className="card table-wrap">
      <div className="toolbar">
        <button onClick={toggle} aria-pressed={!live} data-testid="busy-live-toggle">{live ? '❚❚ Pause' : '▶ Resume live'}</button>
        <button className="ghost" disabled={!live} title={live ? undefined : 'Paused: the list holds still; resume live to see what runs now'} onClick={() => void busy.refetch()} data-testid="busy-refresh">↻ Refresh</button>
        <span className="muted small" data-testid="busy-state">
          {live ? `Live, every ${Math.round(pace / 1000)} s` : `Paused since ${clock(pausedAt, 0)}: the list holds still`}
          {page && ` · read ${stamp(page.at)}`}
        </span>
      </div>
      {busy.error && <p className="error" role="alert">{(busy.error as Error).message}</p>}
      {page && (
        <p className="small" data-testid="busy-summary">
          {num(page.total)} job{page.total === 1 ? '' : 's'} running · {num(page.processes_read)} process{page.processes_read === 1 ? '' : 'es'} read
          {page.jobs.length < page.total && ` (the ${num(page.jobs.length)} that started first are listed)`}
          {page.processes_read < page.processes_total && conn.kind === 'sidekiq' && ` · ${num(page.processes_total)} in the processes set (dead ones and those past --sidekiq-max-processes are not read)`}
        </p>
      )}
      <table aria-label={`Jobs running now on ${conn.name}`} data-testid="busy-table">
        <thead>
          <tr>
            <th scope="col">Process</th>
            <th scope="col">Thread</th>
            <th scope="col">Queue</th>
            <th scope="col">Class</th>
            <th scope="col">Arguments</th>
            <th scope="col">Started</th>
            <th scope="col" className="c-num">Running for</th>
          </tr>
        </thead>
        <tbody>
          {page?.jobs.map((j) => (
            <tr key={`${j.process}\u0000${j.thread}`} data-testid="busy-row" data-jid={j.jid ?? undefined}>
              <td>
                {j.process} {j.quiet && <QuietBadge stopping={j.stopping} />}
              </td>
              <td><code>{j.thread}</code></td>
              <td>{j.queue ? <a href={`#/queues/${encodeURIComponent(j.queue)}`}>{j.queue}</a> : '—'}</td>
              <td>
                <strong>{j.class}</strong> {j.unreadable && <span className="badge" title="The entry is not the JSON Sidekiq writes: shown with what could be read">unreadable</span>}
              </td>
              <td><Args job={j} /></td>
              <td>{stamp(j.run_at)}</td>
              <td className="c-num" data-testid="busy-running-for">{humanDuration(j.running_for_s)}</td>
            </tr>
          ))}
          {page && page.jobs.length === 0 && (
            <tr><td colSpan={7} className="muted" data-testid="busy-empty">Nothing is running: every worker of “{conn.name}” is idle.</td></tr>
          )}
          {!page && !busy.error && <tr><td colSpan={7} className="muted">Loading…</td></tr>}
        </tbody>
      </table>
    </div>
  );
}
