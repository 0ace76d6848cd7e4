// Every runner of the embedded server, as GitLab's admin Runners page lists them, with pause/resume
// and delete (after a confirm).
import type { ProjectView, RunnerView } from '../../api/client.ts';
import { ago, num } from '../../components/format.ts';

export interface RunnerActions {
  setActive(r: RunnerView, active: boolean): void;
  remove(r: RunnerView): void;
  busy: boolean;
}

function Kind({ r, projects }: { r: RunnerView; projects: Map<number, ProjectView> }) {
  if (r.is_shared) return <span className="badge" data-testid="runner-kind">shared</span>;
  const p = r.project_id === null ? undefined : projects.get(r.project_id);
  return (
    <span data-testid="runner-kind">
      <span className="badge">project</span> {p ? p.name : r.project_id === null ? '—' : `#${r.project_id}`}
    </span>
  );
}

function Contact({ r, asOf }: { r: RunnerView; asOf: number }) {
  return (
    <span className="inline" data-testid="runner-contact" data-online={r.online ? 'yes' : 'no'}>
      <span className={`dot ${r.online ? 'ok' : 'bad'}`} aria-hidden="true" />
      <span>{r.online ? 'online' : 'offline'}</span>
      <span className="muted small">{r.last_contact_at ? ago(r.last_contact_at, asOf) : 'never'}</span>
    </span>
  );
}

export function RunnersTable({ runners, projects, asOf, actions }: { runners: RunnerView[]; projects: ProjectView[]; asOf: number; actions: RunnerActions }) {
  const byId = new Map(projects.map((p) => [p.id, p]));
  return (
    <div className="table-wrap card">
      <table data-testid="runners-table">
        <caption className="table-caption">Runners registered with this server ({runners.length})</caption>
        <thead>
          <tr>
            <th scope="col">Runner</th><th scope="col">Type</th><th scope="col">Tags</th><th scope="col">Version</th><th scope="col">Platform</th>
            <th scope="col">Last contact</th><th scope="col" className="c-num">Builds</th><th scope="col">State</th><th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {runners.map((r) => (
            <tr key={r.id} data-testid="runner-row" data-runner={r.id}>
              <td><span className="muted">#{r.id}</span> <span data-testid="runner-description">{r.description || '(no description)'}</span></td>
              <td><Kind r={r} projects={byId} /></td>
              <td data-testid="runner-tags">
                {r.tag_list.map((t) => <span key={t} className="badge">{t}</span>)}
                {r.run_untagged && <span className="muted small">{r.tag_list.length ? ' + untagged' : 'untagged'}</span>}
              </td>
              <td data-testid="runner-version">{r.version ?? <span className="muted">—</span>}{r.revision && <span className="muted small"> ({r.revision})</span>}</td>
              <td data-testid="runner-platform">{r.platform || r.architecture ? [r.platform, r.architecture].filter(Boolean).join('/') : <span className="muted">—</span>}</td>
              <td><Contact r={r} asOf={asOf} /></td>
              <td className="c-num" data-testid="runner-builds">{num(r.builds_count)}</td>
              <td data-testid="runner-state">{r.active ? 'active' : <strong>paused</strong>}</td>
              <td><div className="actions">
                <button className="ghost" disabled={actions.busy} onClick={() => actions.setActive(r, !r.active)} data-testid="runner-toggle"
                  aria-label={`${r.active ? 'Pause' : 'Resume'} runner #${r.id} ${r.description}`}>
                  {r.active ? 'Pause' : 'Resume'}
                </button>
                <button className="ghost danger" disabled={actions.busy} onClick={() => actions.remove(r)} data-testid="runner-delete"
                  aria-label={`Delete runner #${r.id} ${r.description}`}>
                  Delete
                </button>
              </div></td>
            </tr>
          ))}
          {!runners.length && (
            <tr><td colSpan={9} className="muted">No runners yet: register one with the command above, or start a fleet in the Simulator.</td></tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
