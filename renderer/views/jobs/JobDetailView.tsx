// #/job/<set>/<key> and #/job/queue/<queue>/<jid>: one job of the selected connection, as Sidekiq
// Web's job page shows it: every field, the arguments pretty-printed (or the stored payload), the
// error with its backtrace, tags. Back returns to the list it was opened from, on its page.
import { useState, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { navigate } from '../../app/route.ts';
import { ApiError, type ConnectionView } from '../../api/client.ts';
import { jobDetail, targetOf, type JobDetail, type JobTarget } from '../../api/job-detail.ts';
import { humanDuration } from '../../components/format.ts';
import { stamp } from '../../components/jobs/job-row.ts';
import { JobActions, type JobTarget as ActionTarget } from '../../components/jobs/JobActions.tsx';
import type { ViewProps } from '../view-props.ts';
import { JobsUnavailable, useSelectedConnectionView } from './job-source.tsx';
import { listToReturnTo } from './list-page.ts';
import './jobs.css';

const LIST: Record<'retry' | 'schedule' | 'dead', { href: string; name: string }> = {
  retry: { href: '#/retries', name: 'Retries' },
  schedule: { href: '#/scheduled', name: 'Scheduled' },
  dead: { href: '#/dead', name: 'Dead' },
};

function listOf(t: JobTarget): { href: string; name: string } {
  return 'set' in t ? LIST[t.set] : { href: `#/queues/${encodeURIComponent(t.queue)}`, name: `queue ${t.queue}` };
}

export default function JobDetailView({ route }: ViewProps) {
  const target = targetOf(route.rest);
  const { conn } = useSelectedConnectionView();
  const list = target ? listOf(target) : { href: '#/queues', name: 'Queues' };
  return (
    <section className="view" data-testid="view-job">
      <div className="toolbar">
        <a href={listToReturnTo(list.href)} className="job-back" data-testid="job-back">← Back to {list.name}</a>
        <h2>Job</h2>
      </div>
      {!target ? (
        <p className="card" role="status">This address names no job: open one from a queue, Retries, Scheduled or Dead.</p>
      ) : conn?.kind === 'gitlab' ? (
        <JobsUnavailable conn={conn} what="Jobs" />
      ) : conn ? (
        <JobPage key={`${conn.id} ${route.rest.join('/')}`} conn={conn} target={target} back={listToReturnTo(list.href)} />
      ) : null}
    </section>
  );
}

/** The job as the action buttons name it: a set entry by its key, a queued job by its jid. */
function actionTarget(t: JobTarget, label: string): ActionTarget {
  return 'set' in t ? { kind: 'entry', set: t.set, key: t.key, label } : { kind: 'queued', queue: t.queue, jid: t.jid, label };
}

function JobPage({ conn, target, back }: { conn: ConnectionView; target: JobTarget; back: string }) {
  const client = useClient();
  const connectionId = conn.id;
  const job = useQuery({ queryKey: ['job-detail', connectionId, target], queryFn: () => jobDetail(client, connectionId, target), retry: false });
  if (job.error) {
    const gone = job.error instanceof ApiError && job.error.status === 404;
    return <p className={gone ? 'card' : 'card error'} role="status" data-testid="job-missing">{job.error.message}</p>;
  }
  if (!job.data) return <p className="card muted" role="status">Loading…</p>;
  const d = job.data;
  return (
    <>
      {/* Above the facts, as on Sidekiq Web's job page; once acted on the job has left this list, so the page returns to it. */}
      {!d.unreadable && <JobActions conn={conn} target={actionTarget(target, d.class ?? d.jid ?? 'this job')} onDone={() => navigate(back.replace(/^#/, ''))} />}
      <div className="card" data-testid="job-summary">
        <h3 className="job-class" data-testid="job-class">{d.class ?? 'Not a job'}</h3>
        {d.unreadable && <p data-testid="job-unreadable"><strong>This entry is not a JSON job payload: it is shown as stored below.</strong></p>}
        <dl className="facts job-facts" data-testid="job-facts">
          <Fact label="Queue">{d.queue ? <a href={`#/queues/${encodeURIComponent(d.queue)}`}>{d.queue}</a> : '—'}</Fact>
          <Fact label="JID"><code>{d.jid ?? '—'}</code></Fact>
          {d.wrapper_class && <Fact label="Wrapped by"><code>{d.wrapper_class}</code></Fact>}
          <Fact label="Created" test="created"><Time iso={d.created_at} /></Fact>
          <Fact label="Enqueued" test="enqueued"><Time iso={d.enqueued_at} /></Fact>
          {d.latency !== null && <Fact label="Latency" test="latency">{humanDuration(d.latency)}</Fact>}
          {d.next_retry_at && <Fact label="Next retry" test="next-retry"><Time iso={d.next_retry_at} /></Fact>}
          {d.scheduled_at && <Fact label="Scheduled for" test="scheduled"><Time iso={d.scheduled_at} /></Fact>}
          {d.died_at && <Fact label="Died" test="died"><Time iso={d.died_at} /></Fact>}
          {d.failed_at && <Fact label="First failed" test="failed"><Time iso={d.failed_at} /></Fact>}
          {d.retried_at && <Fact label="Last retried" test="retried"><Time iso={d.retried_at} /></Fact>}
          <Fact label="Retry count" test="retry-count">{d.retry_count ?? '—'}</Fact>
          <Fact label="Retry policy" test="retry-policy">{policy(d.retry)}</Fact>
          {d.bid && <Fact label="Batch"><code>{d.bid}</code></Fact>}
        </dl>
        {d.tags.length > 0 && (
          <ul className="chips" aria-label="Tags" data-testid="job-tags">
            {d.tags.map((t, i) => <li key={`${i}:${t}`} className="chip">{t}</li>)}
          </ul>
        )}
      </div>
      <Payload d={d} />
      {(d.error_class || d.error_message || d.backtrace || d.backtrace_note) && <ErrorCard d={d} />}
    </>
  );
}

function Fact({ label, test, children }: { label: string; test?: string; children: ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-testid={test ? `job-${test}` : undefined}>{children}</dd>
    </>
  );
}

function Time({ iso }: { iso: string | null }) {
  return iso ? <time dateTime={iso} title={iso}>{stamp(iso)}</time> : <>—</>;
}

function policy(retry: JobDetail['retry']): string {
  if (retry === null) return '—';
  if (retry === true) return 'retries (Sidekiq’s default: 25)';
  if (retry === false) return 'no retries';
  return retry === 0 ? 'no retries: straight to Dead' : `up to ${retry} retries`;
}

/** The arguments pretty-printed, or the payload as stored (what Sidekiq Web's raw view shows). */
function Payload({ d }: { d: JobDetail }) {
  const [raw, setRaw] = useState(d.unreadable);
  const text = raw ? prettyRaw(d.raw) : JSON.stringify(d.args, null, 2);
  return (
    <section className="card" aria-labelledby="job-args-h">
      <div className="card-head">
        <h3 id="job-args-h">{raw ? 'Payload' : 'Arguments'}</h3>
        <span className="spacer" />
        {!d.unreadable && (
          <button type="button" aria-pressed={raw} onClick={() => setRaw(!raw)} data-testid="job-raw-toggle">
            Raw payload
          </button>
        )}
      </div>
      {!raw && d.args_note && <p className="muted small" data-testid="job-args-note">{d.args_note}</p>}
      {raw && d.raw_truncated && <p className="muted small">Cut: the stored payload is longer than the server shows.</p>}
      {/* Focusable: a scrollable region must be reachable by keyboard. */}
      <pre className="job-json" tabIndex={0} aria-label={raw ? 'Stored payload' : 'Arguments'} data-testid={raw ? 'job-raw' : 'job-args'}>{text}</pre>
    </section>
  );
}

/** The stored JSON indented when it parses (and was not cut), else as stored. */
function prettyRaw(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

function ErrorCard({ d }: { d: JobDetail }) {
  return (
    <section className="card" aria-labelledby="job-error-h">
      <h3 id="job-error-h">Error</h3>
      <p className="job-error" data-testid="job-error">
        {d.error_class && <strong>{d.error_class}: </strong>}
        <span>{d.error_message}</span>
      </p>
      {d.backtrace_note && <p className="muted small" data-testid="job-backtrace-note">{d.backtrace_note}</p>}
      {d.backtrace ? (
        <ol className="backtrace" tabIndex={0} aria-label="Backtrace" data-testid="job-backtrace">
          {d.backtrace.map((line, i) => <li key={i}><code>{line}</code></li>)}
        </ol>
      ) : (
        !d.backtrace_note && <p className="muted small">No backtrace kept: Sidekiq keeps one when the job sets <code>backtrace</code> in its options.</p>
      )}
    </section>
  );
}
