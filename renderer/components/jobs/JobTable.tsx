// A page of jobs as a table (Sidekiq Web's queue, retries and dead pages), driven by props only:
// the rows, which columns, and whether rows can be selected. Without `selection` it is read-only
// (no checkboxes), which is how a peek into someone else's Sidekiq uses it.
import type { ReactNode } from 'react';
import { argsText, stamp, type JobColumn, type JobRow } from './job-row.ts';
import './job-table.css';

export interface Selection {
  selected: ReadonlySet<string>;
  onChange(next: Set<string>): void;
}

const HEAD: Record<JobColumn, string> = {
  id: 'Job id',
  class: 'Class',
  args: 'Arguments',
  queue: 'Queue',
  enqueued: 'Enqueued at',
  failed: 'Failed at',
  error: 'Error',
  retries: 'Retries',
  next_retry: 'Next retry at',
  died: 'Died at',
  runs_at: 'When',
};

function cell(col: JobColumn, r: JobRow): ReactNode {
  switch (col) {
    case 'id':
      return <code>{r.key}</code>;
    case 'class':
      return r.href ? <a href={r.href} data-testid="job-link"><strong>{r.class}</strong></a> : <strong>{r.class}</strong>;
    case 'args': {
      const a = argsText(r.args);
      return <code title={a.full === a.short ? undefined : a.full}>{a.short}</code>;
    }
    case 'queue':
      return r.queue ? <a href={`#/queues/${encodeURIComponent(r.queue)}`}>{r.queue}</a> : '—';
    case 'enqueued':
      return stamp(r.enqueuedAt);
    case 'failed':
      return stamp(r.failedAt);
    case 'error':
      return r.errorClass || r.errorMessage ? (
        <>
          {r.errorClass && <strong>{r.errorClass}: </strong>}
          <span>{r.errorMessage}</span>
        </>
      ) : '—';
    case 'retries':
      return r.retryCount ?? '—';
    case 'next_retry':
      return stamp(r.nextRetryAt);
    case 'runs_at':
      return stamp(r.runAt);
    case 'died':
      return <span title={diedTitle(r)}>{stamp(r.diedAt)}</span>;
  }
}

function diedTitle(r: JobRow): string | undefined {
  if (r.firstFailedAt) return `First failed ${stamp(r.firstFailedAt)}`;
  return r.failedAt ? `Last failed ${stamp(r.failedAt)}` : undefined;
}

export function JobTable({ rows, columns, label, selection, rowActions, empty, testId = 'job-table' }: {
  rows: JobRow[];
  columns: JobColumn[];
  /** The table's accessible name. */
  label: string;
  selection?: Selection;
  /** A last column of what can be done to each row (JobActions). */
  rowActions?: (r: JobRow) => ReactNode;
  empty: ReactNode;
  testId?: string;
}) {
  const keys = rows.map((r) => r.key);
  const allOn = keys.length > 0 && keys.every((k) => selection?.selected.has(k));
  const toggle = (key: string, on: boolean) => {
    if (!selection) return;
    const next = new Set(selection.selected);
    if (on) next.add(key);
    else next.delete(key);
    selection.onChange(next);
  };
  return (
    <div className="table-wrap">
      <table data-testid={testId} className="job-table" aria-label={label}>
        <thead>
          <tr>
            {selection && (
              <th scope="col" className="c-select">
                <input type="checkbox" checked={allOn} disabled={!keys.length} onChange={(e) => selection.onChange(e.target.checked ? new Set(keys) : new Set())} aria-label="Select every job on this page" data-testid="select-all" />
              </th>
            )}
            {columns.map((c) => <th key={c} scope="col">{HEAD[c]}</th>)}
            {rowActions && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key} data-testid="job-row" data-job={r.key}>
              {selection && (
                <td className="c-select">
                  <input type="checkbox" checked={selection.selected.has(r.key)} onChange={(e) => toggle(r.key, e.target.checked)} aria-label={`Select job ${r.key} (${r.class})`} data-testid="select-job" />
                </td>
              )}
              {columns.map((c) => <td key={c} className={c === 'error' || c === 'args' ? 'wrap' : undefined} data-col={c}>{cell(c, r)}</td>)}
              {rowActions && <td data-col="actions">{rowActions(r)}</td>}
            </tr>
          ))}
          {!rows.length && <tr><td colSpan={columns.length + (selection ? 1 : 0) + (rowActions ? 1 : 0)} className="muted">{empty}</td></tr>}
        </tbody>
      </table>
    </div>
  );
}
