// Reset data, behind a dialog that wants the word "reset" typed. The server restarts in place on an
// emptied data dir (tokens, saved settings and connections kept), so the panel waits until it
// answers again and then drops every cached query.
import { useEffect, useRef, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { settings } from '../../api/settings.ts';

const WAIT_MS = 30_000;

export function ResetPanel() {
  const client = useClient();
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [word, setWord] = useState('');
  const [phase, setPhase] = useState<{ kind: 'idle' | 'working' | 'done' | 'error'; text: string }>({ kind: 'idle', text: '' });
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (open) input.current?.focus();
  }, [open]);

  async function reset() {
    setPhase({ kind: 'working', text: 'Resetting: the server restarts with empty data…' });
    try {
      const before = (await client.instance()).started_at;
      await settings.reset(client);
      setOpen(false);
      setWord('');
      // Wait for the restarted server: a new start time on the same address.
      const until = Date.now() + WAIT_MS;
      for (;;) {
        await new Promise((r) => setTimeout(r, 300));
        const now = await client.instance().catch(() => null);
        if (now && now.started_at !== before) break;
        if (Date.now() > until) throw new Error(`The server did not come back within ${WAIT_MS / 1000} s. Check the server log or restart Jobscope.`);
      }
      await qc.invalidateQueries();
      setPhase({ kind: 'done', text: 'Data reset: builds, runners, projects, jobs and samples are gone; tokens, saved settings and connections were kept.' });
    } catch (e) {
      setPhase({ kind: 'error', text: (e as Error).message });
    }
  }

  return (
    <div className="card" data-testid="reset-panel">
      <h3>Reset data</h3>
      <p className="muted small">Deletes every build, trace, artifact, runner, project, job and dashboard sample in the data dir. Tokens, saved settings and connections are kept.</p>
      <button className="danger" onClick={() => setOpen(true)} disabled={phase.kind === 'working'} data-testid="reset-open">Reset data…</button>
      {phase.text && <p className={phase.kind === 'error' ? 'error' : phase.kind === 'done' ? 'ok-text' : 'muted'} role="status" data-testid="reset-status">{phase.text}</p>}
      {open && (
        <div className="modal-backdrop" onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
          <div className="modal card" role="dialog" aria-modal="true" aria-labelledby="reset-title" data-testid="reset-dialog">
            <h3 id="reset-title">Delete all data?</h3>
            <p>This cannot be undone. Type <code>reset</code> to confirm.</p>
            <form onSubmit={(e) => { e.preventDefault(); if (word === 'reset') void reset(); }}>
              <input ref={input} value={word} onChange={(e) => setWord(e.target.value)} aria-label='Type "reset" to confirm' autoComplete="off" data-testid="reset-word" />
              <div className="row gap pad">
                <button type="submit" className="danger" disabled={word !== 'reset'} data-testid="reset-confirm">Delete all data</button>
                <button type="button" className="ghost" onClick={() => { setOpen(false); setWord(''); }} data-testid="reset-cancel">Cancel</button>
              </div>
            </form>
          </div>
        </div>
      )}
    </div>
  );
}
