// Builds of the embedded server: a filterable list that follows status and duration live (polled
// through TanStack Query), a "New build" form, retry and cancel per row, and a build's page at #/builds/<id>.
import { useState } from 'react';
import { isString, useUiState } from '../../app/ui-state.ts';
import { useQuery } from '@tanstack/react-query';
import type { BuildView } from '../../api/client.ts';
import { useClient } from '../../app/client-context.tsx';
import type { ViewProps } from '../view-props.ts';
import { dateTime, humanDuration } from '../../components/format.ts';
import { StatusBadge } from '../../components/StatusBadge.tsx';
import { BuildPage } from './BuildPage.tsx';
import { BuildActions } from './BuildActions.tsx';
import { Silence } from './BuildSilence.tsx';
import { NewBuildForm } from './NewBuildForm.tsx';
import './builds.css';
import { usePace } from '../../app/pace.tsx';

const STATUSES = ['pending', 'running', 'success', 'failed', 'canceled'] as const;

export default function BuildsView({ route }: ViewProps) {
  const id = route.rest[0];
  // Keyed by id: a retry opens the new build, whose trace tail must start from nothing.
  if (id && /^\d+$/.test(id)) return <BuildPage key={id} id={Number(id)} />;
  return <BuildList initialProject={route.query.get('project') ?? ''} />;
}

/** `initialProject`: #/builds?project=<id> (a project's link in the Projects view) opens filtered. */
function BuildList({ initialProject }: { initialProject: string }) {
  const client = useClient();
  const [status, setStatus] = useUiState('builds.status', '', isString); // remembered across restarts
  // A project's link (#/builds?project=<id>) shows that project until another is chosen; a choice
  // made here is remembered across restarts.
  const [linked, setLinked] = useState<string | null>(initialProject || null);
  const [savedProject, saveProject] = useUiState('builds.project', '', isString);
  const project = linked ?? savedProject;
  const setProject = (p: string) => {
    setLinked(null);
    saveProject(p);
  };
  const [creating, setCreating] = useState(false);
  const projects = useQuery({ queryKey: ['projects'], queryFn: client.projects, refetchInterval: usePace(15_000) });
  // Names for the runner column: the first 1,000 runners (the most a page holds); a build of a later one shows its #id.
  const runners = useQuery({ queryKey: ['runners', 'names'], queryFn: () => client.runners(1, 1000), refetchInterval: usePace(15_000) });
  const builds = useQuery({
    queryKey: ['builds', status, project],
    queryFn: () => client.builds({ ...(status ? { status: status as BuildView['status'] } : {}), ...(project ? { project_id: Number(project) } : {}), limit: 200 }),
    refetchInterval: usePace(2000),
  });
  const projectName = new Map((projects.data ?? []).map((p) => [p.id, p.name]));
  const runnerName = new Map((runners.data?.items ?? []).map((r) => [r.id, r.description || `#${r.id}`]));
  const asOf = builds.dataUpdatedAt; // running builds' durations count to the fetch (render may not read the clock)

  return (
    <section className="view" data-testid="view-builds">
      <div className="toolbar">
        <h2>Builds</h2>
        <label className="inline">Status
          <select value={status} onChange={(e) => setStatus(e.target.value)} data-testid="filter-status">
            <option value="">any</option>
            {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
        <label className="inline">Project
          <select value={project} onChange={(e) => setProject(e.target.value)} data-testid="filter-project">
            <option value="">any</option>
            {(projects.data ?? []).map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select>
        </label>
        <span className="spacer" />
        <button onClick={() => setCreating((c) => !c)} aria-expanded={creating}>New build</button>
      </div>
      {creating && projects.data && (
        <div id="new-build">
          <NewBuildForm projects={projects.data} onClose={() => setCreating(false)} />
        </div>
      )}
      {builds.error && <p className="error">{(builds.error as Error).message}</p>}
      <div className="table-wrap card">
        <table data-testid="builds-table">
          <thead>
            <tr><th>#</th><th>Name</th><th>Project</th><th>Status</th><th>Runner</th><th>Duration</th><th>Created</th><th>Actions</th></tr>
          </thead>
          <tbody>
            {(builds.data ?? []).map((b) => (
              <tr key={b.id} data-testid="build-row" data-build={b.id}>
                <td><a href={`#/builds/${b.id}`} data-testid="build-link">#{b.id}</a></td>
                <td><a href={`#/builds/${b.id}`}>{b.name}</a> <span className="muted small">{b.stage}</span></td>
                <td>{projectName.get(b.project_id) ?? b.project_id}</td>
                <td><StatusBadge status={b.status} /><Silence build={b} now={asOf} /></td>
                <td>{b.runner_id === null ? '—' : runnerName.get(b.runner_id) ?? `#${b.runner_id}`}</td>
                <td data-testid="build-duration">{b.duration === null ? (b.started_at ? humanDuration((asOf - Date.parse(b.started_at)) / 1000) : '—') : humanDuration(b.duration)}</td>
                <td>{dateTime(b.created_at)}</td>
                <td><BuildActions build={b} /></td>
              </tr>
            ))}
            {builds.data && !builds.data.length && <tr><td colSpan={8} className="muted">No builds match. Create some with <strong>New build</strong> (or a simulator fleet).</td></tr>}
          </tbody>
        </table>
      </div>
    </section>
  );
}
