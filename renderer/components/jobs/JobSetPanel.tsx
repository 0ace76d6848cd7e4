// A page of a job set (retries, scheduled or dead) with Sidekiq Web's actions: select some or all on
// the page, then retry now or delete; or act on the whole set; each but "retry selected" asked
// about first in the app's Modal. Props only: the caller fetches and says what each action does.
// `actions` absent = read-only (a connection that does not allow changes): no checkboxes, no
// buttons, and `readOnlyNote` says why.
import { useState, type ReactNode } from 'react';
import { JobTable } from './JobTable.tsx';
import { Pager } from './Pager.tsx';
import { num } from '../format.ts';
import { ConfirmButton } from './ConfirmButton.tsx';
import type { JobColumn, JobRow } from './job-row.ts';

export interface JobSetActions {
  retry(keys: string[]): Promise<string>;
  remove(keys: string[]): Promise<string>;
  retryAll(): Promise<string>;
  removeAll(): Promise<string>;
  /** Every entry into the dead set (a sidekiq connection's retry and scheduled sets). */
  killAll?(): Promise<string>;
}

export function JobSetPanel({ title, setName, rows, total, page, perPage, onPage, columns, actions, rowActions, retryWord = 'Retry', readOnlyNote, empty, error, loading = false }: {
  title: string;
  /** "retry set", "dead set": used in button names and confirms. */
  setName: string;
  rows: JobRow[];
  total: number;
  page: number;
  perPage: number;
  onPage(page: number): void;
  /** The rows are still the previous page's while `page` loads. */
  loading?: boolean;
  columns: JobColumn[];
  actions?: JobSetActions;
  rowActions?: (r: JobRow) => ReactNode;
  /** What "retry" is called here: a scheduled job is added to its queue. */
  retryWord?: string;
  readOnlyNote?: ReactNode;
  empty: ReactNode;
  error?: string | null;
}) {
  const [selected, setSelected] = useState<Set<string>>(() => new Set());
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<{ error: boolean; text: string } | null>(null);
  // Only what is still on the page counts: a job retried or deleted meanwhile leaves the selection.
  const onPage_ = new Set(rows.map((r) => r.key));
  const chosen = [...selected].filter((k) => onPage_.has(k));
  // The rows' keys as the actions name them (a peeked entry is shown by jid, acted on by `<score>-<jid>`).
  const byKey = new Map(rows.map((r) => [r.key, r.actionKey ?? r.key]));
  const chosenKeys = chosen.map((k) => byKey.get(k) ?? k);

  const killAll = actions?.killAll;
  // Why the whole-set buttons are not offered now, if they are not.
  const whole = busy ? 'Busy' : total ? undefined : 'The set is empty';

  const run = async (what: () => Promise<string>) => {
    setBusy(true);
    try {
      setNotice({ error: false, text: await what() });
      setSelected(new Set());
    } catch (err) {
      setNotice({ error: true, text: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="job-set-h" data-testid="job-set">
      <div className="card-head">
        <h3 id="job-set-h">{title} <span className="muted small" data-testid="job-set-total">{num(total)}</span></h3>
        {actions && (
          <div className="row gap">
            <button onClick={() => void run(() => actions.retry(chosenKeys))} disabled={busy || !chosen.length} data-testid="retry-selected">{retryWord} selected{chosen.length ? ` (${chosen.length})` : ''}</button>
            <ConfirmButton
              label="Delete selected"
              danger
              confirmLabel="Delete jobs"
              question={`Delete ${chosen.length} job${chosen.length === 1 ? '' : 's'} from the ${setName}? They will never run.`}
              run={() => run(() => actions.remove(chosenKeys))}
              disabledReason={busy ? 'Busy' : chosen.length ? undefined : 'Select jobs first'}
              testId="delete-selected"
            />
            <ConfirmButton
              label={`${retryWord} all`}
              confirmLabel={`${retryWord} all`}
              question={`${retryWord} every job of the ${setName} (${total}) now?`}
              run={() => run(actions.retryAll)}
              disabledReason={whole}
              testId="retry-all"
            />
            {killAll && (
              <ConfirmButton label="Kill all" danger confirmLabel="Kill all" question={`Move every job of the ${setName} (${total}) to the dead set?`} run={() => run(killAll)} disabledReason={whole} testId="kill-all" />
            )}
            <ConfirmButton
              label="Delete all"
              danger
              confirmLabel="Delete all"
              question={`Delete every job of the ${setName} (${total})? They will never run.`}
              run={() => run(actions.removeAll)}
              disabledReason={whole}
              testId="delete-all"
            />
          </div>
        )}
      </div>
      {!actions && readOnlyNote}
      {notice && <p className={`small ${notice.error ? 'error' : 'muted'}`} role="status" data-testid="job-set-message">{notice.text}</p>}
      {error && <p className="error small" role="alert">{error}</p>}
      <JobTable rows={rows} columns={columns} label={title} empty={empty} selection={actions ? { selected: new Set(chosen), onChange: setSelected } : undefined} rowActions={rowActions} />
      {total > perPage && <Pager page={page} perPage={perPage} total={total} onPage={onPage} label={`${title} pages`} loading={loading} />}
    </section>
  );
}
