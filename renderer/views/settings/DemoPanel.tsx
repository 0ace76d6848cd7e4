// The demo load: simulated workers and queues, started and stopped live, and whether it starts
// with the server (the `demo` setting, for the next start).
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { demoLoad, settings, type SettingsView } from '../../api/settings.ts';
import { num } from '../../components/format.ts';
import { usePace } from '../../app/pace.tsx';

export function DemoPanel({ view }: { view: SettingsView | undefined }) {
  const client = useClient();
  const qc = useQueryClient();
  const load = useQuery({ queryKey: ['demo-load'], queryFn: () => demoLoad.status(client), refetchInterval: usePace(3000) });
  const toggle = useMutation({
    mutationFn: (on: boolean) => (on ? demoLoad.start(client) : demoLoad.stop(client)),
    onSuccess: (s) => qc.setQueryData(['demo-load'], s),
  });
  const demo = view?.settings.find((s) => s.name === 'demo');
  const atStart = useMutation({
    mutationFn: (on: boolean) => settings.save(client, { demo: on ? true : null }),
    onSuccess: (v) => qc.setQueryData(['settings'], v),
  });
  const l = load.data;
  // While the save is on its way the box shows what was clicked, not the old saved value. Local state,
  // not the mutation's isPending: TanStack publishes that a tick later, and the controlled box would
  // snap back to the old value in between.
  const [clicked, setClicked] = useState<boolean | null>(null);
  const savedOn = clicked ?? demo?.saved === true;
  const error = toggle.error ?? atStart.error ?? load.error;

  return (
    <div className="card" data-testid="demo-panel">
      <h3>Demo mode</h3>
      <div className="row gap">
        <span>
          Demo load:{' '}
          <strong data-testid="demo-state">{l ? (l.running ? 'running' : 'stopped') : '…'}</strong>
          {l?.running && <span className="muted small"> · {num(l.settings.processes)} processes × {l.settings.concurrency}, {l.settings.queues} queues, ~{l.settings.rate}/s, {num(l.generated)} jobs so far</span>}
        </span>
        <span className="spacer" />
        {l?.running ? (
          <button className="ghost danger" onClick={() => toggle.mutate(false)} disabled={toggle.isPending} data-testid="demo-stop">Stop demo load</button>
        ) : (
          <button onClick={() => toggle.mutate(true)} disabled={toggle.isPending || !l} data-testid="demo-start">Start demo load</button>
        )}
      </div>
      <label className="check">
        <input type="checkbox" checked={savedOn} disabled={!demo} onChange={(e) => {
            const on = e.target.checked;
            setClicked(on);
            atStart.mutate(on, { onSettled: () => setClicked(null) });
          }}
          data-testid="demo-at-start"
        />
        <span>Start the demo load with the server (the <code>demo</code> setting, applies at the next start{demo?.effective === true ? '; on now' : ''})</span>
      </label>
      {error && <p className="error" role="alert">{(error as Error).message}</p>}
    </div>
  );
}
