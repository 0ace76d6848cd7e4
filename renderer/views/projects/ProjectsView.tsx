// Projects of the embedded server: create one, list them with the runners token a project runner
// registers with (copyable), and a link to each project's builds.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ProjectView } from '../../api/client.ts';
import { useClient } from '../../app/client-context.tsx';
import '../builds/builds.css';
import { copyText } from '../simulator/clipboard.ts';
import { usePace } from '../../app/pace.tsx';
import { Pager } from '../../components/jobs/Pager.tsx';
import { dateTime } from '../../components/format.ts';

const PER_PAGE = 100;

export default function ProjectsView() {
  const client = useClient();
  const qc = useQueryClient();
  const [page, setPage] = useState(1);
  const projects = useQuery({ queryKey: ['projects', 'page', page], queryFn: () => client.projectsPage(page, PER_PAGE), refetchInterval: usePace(15_000) });
  const rows = projects.data?.items;
  const total = projects.data?.total ?? 0;
  const [name, setName] = useState('');
  const [shared, setShared] = useState(true);
  const [note, setNote] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () => client.createProject({ name: name.trim(), shared_runners_enabled: shared }),
    onSuccess: (p) => {
      setName('');
      setNote(`Created project ${p.name} (#${p.id}).`);
      void qc.invalidateQueries({ queryKey: ['projects'] });
    },
  });

  async function copy(p: ProjectView) {
    setNote((await copyText(p.runners_token)) ? `Copied the runners token of ${p.name}.` : `The clipboard is not available here: select the token of ${p.name} and press Ctrl+C.`);
  }

  return (
    <section className="view" data-testid="view-projects">
      <div className="toolbar"><h2>Projects</h2></div>
      <form className="card form-grid projects-form" aria-labelledby="np-h" onSubmit={(e) => { e.preventDefault(); create.mutate(); }}>
        <h3 id="np-h">New project</h3>
        <label>Project name<input value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} /></label>
        <label className="check"><input type="checkbox" checked={shared} onChange={(e) => setShared(e.target.checked)} /> Shared runners may take its builds</label>
        <div className="row gap"><button type="submit" disabled={create.isPending}>Create project</button></div>
        {create.error && <p className="error" role="alert">{(create.error as Error).message}</p>}
        <p className="small" role="status">{note}</p>
      </form>
      {projects.error && <p className="error">{(projects.error as Error).message}</p>}
      <div className="table-wrap card projects-table">
        <table data-testid="projects-table">
          <caption className="muted small">
            A runner registered with a project's runners token takes only that project's builds; the instance registration token registers shared runners.
          </caption>
          <thead>
            <tr><th>#</th><th>Name</th><th>Runners token</th><th>Shared runners</th><th>Build timeout</th><th>Created</th></tr>
          </thead>
          <tbody>
            {(rows ?? []).map((p) => (
              <tr key={p.id} data-testid="project-row">
                <td>{p.id}</td>
                <td><a href={`#/builds?project=${p.id}`}>{p.name}</a></td>
                <td>
                  <span className="row gap">
                    <code className="token" data-testid="runners-token">{p.runners_token}</code>
                    <button type="button" className="ghost small" onClick={() => void copy(p)} aria-label={`Copy the runners token of ${p.name}`}>Copy</button>
                  </span>
                </td>
                <td>{p.shared_runners_enabled ? 'yes' : 'no'}</td>
                <td>{p.build_timeout} s</td>
                <td>{dateTime(p.created_at)}</td>
              </tr>
            ))}
            {rows && !rows.length && <tr><td colSpan={6} className="muted">No projects yet: create one above.</td></tr>}
          </tbody>
        </table>
      </div>
      {total > PER_PAGE && <Pager page={page} perPage={PER_PAGE} total={total} onPage={setPage} label="Project pages" noun="project" />}
    </section>
  );
}
