// Runners of the embedded server, like GitLab's admin Runners page: how to register one (the
// instance token and the command for this server), then every runner with what it told us, its
// last contact and builds, paused, resumed or deleted from here.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RunnerView } from '../../api/client.ts';
import { runnerAdmin } from '../../api/runners.ts';
import { useClient } from '../../app/client-context.tsx';
import { RegisterCard } from './RegisterCard.tsx';
import { RunnersTable } from './RunnersTable.tsx';
import './runners.css';
import { usePace } from '../../app/pace.tsx';
import { Pager } from '../../components/jobs/Pager.tsx';

const PER_PAGE = 100;

export default function RunnersView() {
  const client = useClient();
  const qc = useQueryClient();
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const instance = useQuery({ queryKey: ['instance'], queryFn: client.instance, staleTime: 60_000 });
  const projects = useQuery({ queryKey: ['projects'], queryFn: client.projects, refetchInterval: usePace(15_000) });
  // Polls every few seconds: a runner that just registered, or went silent, shows without a reload.
  const [page, setPage] = useState(1);
  const runners = useQuery({ queryKey: ['runners', page], queryFn: () => client.runners(page, PER_PAGE), refetchInterval: usePace(3000) });
  const total = runners.data?.total ?? 0;

  const done = (text: string) => {
    setMessage({ text, error: false });
    void qc.invalidateQueries({ queryKey: ['runners'] });
  };
  const failed = (e: unknown) => setMessage({ text: (e as Error).message, error: true });
  const toggle = useMutation({
    mutationFn: ({ r, active }: { r: RunnerView; active: boolean }) => runnerAdmin.setActive(client, r.id, active),
    onSuccess: (r) => done(r.active ? `Resumed runner #${r.id}: it takes builds again.` : `Paused runner #${r.id}: its polls get no build until resumed.`),
    onError: failed,
  });
  const remove = useMutation({
    mutationFn: (r: RunnerView) => runnerAdmin.remove(client, r.id),
    onSuccess: (_x, r) => done(`Deleted runner #${r.id}.`),
    onError: failed,
  });
  const confirmDelete = (r: RunnerView) => {
    const name = r.description ? ` (${r.description})` : '';
    if (confirm(`Delete runner #${r.id}${name}? Its token stops working: it takes no more builds and would have to register again. Builds it is running now are failed (they could never finish).`)) remove.mutate(r);
  };
  const origin = client.baseUrl || window.location.origin;

  return (
    <section className="view" data-testid="view-runners">
      <div className="toolbar">
        <h2>Runners</h2>
        {/* Always rendered: a live region announces changes only if it was there before them. */}
        <p className={`runner-message ${message?.error ? 'error' : 'ok-text'}`} role="status" data-testid="runner-message">{message?.text}</p>
      </div>
      <RegisterCard token={instance.data?.runners_registration_token} origin={origin} />
      {instance.error && <p className="error" role="alert">{(instance.error as Error).message}</p>}
      {runners.error && <p className="error" role="alert">{(runners.error as Error).message}</p>}
      <RunnersTable
        runners={runners.data?.items ?? []}
        projects={projects.data ?? []}
        asOf={runners.dataUpdatedAt}
        actions={{ setActive: (r, active) => toggle.mutate({ r, active }), remove: confirmDelete, busy: toggle.isPending || remove.isPending }}
      />
      {total > PER_PAGE && <Pager page={page} perPage={PER_PAGE} total={total} onPage={setPage} label="Runner pages" noun="runner" />}
    </section>
  );
}
