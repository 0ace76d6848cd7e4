// The connections the backend samples: the embedded server and any remote GitLab instances.
// Tokens go to the backend only; the list shows whether one is set, never the token.
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ConnectionView, NewConnection, TestResult } from '../../api/client.ts';
import { useClient } from '../../app/client-context.tsx';
import { useSelectedConnection } from '../../app/connection-context.tsx';
import { navigate } from '../../app/route.ts';
import { ago } from '../../components/format.ts';
import { AddConnectionChooser, SidekiqTestOutcome } from './AddSidekiqConnection.tsx';
import { SidekiqPeek } from './SidekiqPeek.tsx';
import { EditConnection, GitLabApiFields } from './EditConnection.tsx';
import { AllowChangesToggle, ChangesBadge } from './AllowChanges.tsx';
import { usePace } from '../../app/pace.tsx';

const KIND_LABEL = { embedded: 'this server', gitlab: 'GitLab', sidekiq: 'Sidekiq (Redis)' } as const;

function TestOutcome({ r }: { r: TestResult }) {
  if (r.warning) return <SidekiqTestOutcome r={r} testId="test-result" />;
  return (
    <p className={r.ok ? 'ok-text' : 'error'} role="status" data-testid="test-result">
      {r.ok ? '✓' : '✗'} {r.message} <span className="muted small">({r.status ?? 'no answer'}, {Math.round(r.latency_ms)} ms)</span>
    </p>
  );
}

export default function ConnectionsView() {
  const client = useClient();
  const qc = useQueryClient();
  const selected = useSelectedConnection();
  const list = useQuery({ queryKey: ['connections'], queryFn: client.connections, refetchInterval: usePace(5000) });
  const [tests, setTests] = useState<Record<string, TestResult | string>>({});
  const [peekId, setPeekId] = useState<string | null>(null);
  const [editId, setEditId] = useState<string | null>(null);
  const editing = (list.data ?? []).find((c) => c.id === editId);
  const peeked = (list.data ?? []).find((c) => c.id === peekId && c.kind === 'sidekiq');
  const refresh = () => qc.invalidateQueries({ queryKey: ['connections'] });

  const patch = useMutation({ mutationFn: ({ id, enabled }: { id: string; enabled: boolean }) => client.patchConnection(id, { enabled }), onSettled: refresh });
  const remove = useMutation({ mutationFn: (id: string) => client.deleteConnection(id), onSettled: refresh });

  async function test(c: ConnectionView) {
    setTests((t) => ({ ...t, [c.id]: 'Testing…' }));
    try {
      const r = await client.testConnection(c.id);
      setTests((t) => ({ ...t, [c.id]: r }));
    } catch (e) {
      setTests((t) => ({ ...t, [c.id]: (e as Error).message }));
    }
  }

  return (
    <section className="view" data-testid="view-connections">
      <h2>Connections</h2>
      <p className="muted">The backend samples every enabled connection at its interval, whether or not this window is open, and keeps the history.</p>
      {list.error && <p className="error">{(list.error as Error).message}</p>}
      <div className="table-wrap card">
        <table data-testid="connections-table">
          <thead>
            <tr><th>Name</th><th>Kind</th><th>Base URL</th><th>API</th><th>Every</th><th>Last sample</th><th>Status</th><th>Actions</th></tr>
          </thead>
          <tbody>
            {(list.data ?? []).map((c) => {
              const t = tests[c.id];
              return (
                <tr key={c.id} data-testid="connection-row" data-connection={c.name}>
                  <td>{c.name}</td>
                  <td>{KIND_LABEL[c.kind]} <ChangesBadge c={c} /></td>
                  <td className="wrap">
                    {c.base_url ?? '—'}
                    {c.warnings.map((w) => <p key={w} className="error small" role="note" data-testid="connection-warning">⚠ {w}</p>)}
                  </td>
                  <td>{c.kind === 'sidekiq' ? (c.namespace ? `namespace ${c.namespace}` : '—') : `${c.api_version}/${c.segment}`}</td>
                  <td>{c.interval_s} s</td>
                  <td>{ago(c.last_sample_at)}</td>
                  <td>
                    {!c.enabled ? <span className="badge">disabled</span> : c.last_error ? <span className="error small" title={c.last_error}>{c.last_error}</span> : c.last_sample_at ? <span className="ok-text">ok</span> : <span className="muted">waiting for the first sample</span>}
                    {t && (typeof t === 'string' ? <p className="small">{t}</p> : <TestOutcome r={t} />)}
                  </td>
                  <td><div className="actions">
                    <button className="ghost" onClick={() => void test(c)} data-testid="connection-test">Test</button>
                    <button className="ghost" onClick={() => setEditId(editId === c.id ? null : c.id)} aria-expanded={editId === c.id} data-testid="connection-edit">Edit</button>
                    <button className="ghost" onClick={() => patch.mutate({ id: c.id, enabled: !c.enabled })} data-testid="connection-toggle">{c.enabled ? 'Disable' : 'Enable'}</button>
                    <button className="ghost" onClick={() => { selected.set(c.id); navigate('/dashboard'); }} data-testid="connection-show">Dashboard</button>
                    {c.kind === 'sidekiq' && <button className="ghost" onClick={() => setPeekId(peekId === c.id ? null : c.id)} aria-expanded={peekId === c.id} data-testid="connection-peek">Peek</button>}
                    <AllowChangesToggle c={c} onChanged={refresh} />
                    {c.kind !== 'embedded' && (
                      <button className="ghost danger" onClick={() => { if (confirm(`Remove ${c.name} and its history?`)) remove.mutate(c.id); }} data-testid="connection-remove">Remove</button>
                    )}
                  </div></td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {(patch.error || remove.error) && <p className="error">{((patch.error ?? remove.error) as Error).message}</p>}
      </div>
      {editing && <EditConnection key={editing.id} conn={editing} onSaved={() => void refresh()} onClose={() => setEditId(null)} />}
      {peeked && <SidekiqPeek connection={peeked} onClose={() => setPeekId(null)} />}
      <AddConnectionChooser onAdded={refresh} gitlab={<AddConnection onAdded={refresh} />} />
    </section>
  );
}

// The backend answers the same warning for a saved connection; this shows it before the token is sent.
function plainHttpHost(raw: string): string | null {
  try {
    const u = new URL(raw.trim());
    const h = u.hostname.replace(/^\[|\]$/g, '');
    const loopback = h === 'localhost' || h.endsWith('.localhost') || /^127\./.test(h) || h === '::1';
    return u.protocol === 'http:' && !loopback ? u.host : null;
  } catch {
    return null;
  }
}

function AddConnection({ onAdded }: { onAdded: () => void }) {
  const client = useClient();
  const [form, setForm] = useState({ name: '', base_url: '', private_token: '', api_version: 'v4' as 'v3' | 'v4', segment: 'sidekiq', interval_s: '5' });
  const [result, setResult] = useState<TestResult | string | null>(null);
  const [busy, setBusy] = useState(false);

  const body = (): NewConnection => ({
    name: form.name.trim() || form.base_url.trim(),
    base_url: form.base_url.trim(),
    private_token: form.private_token.trim(),
    api_version: form.api_version,
    segment: form.segment.trim() || 'sidekiq',
    interval_s: Number(form.interval_s),
  });
  const invalid = () => {
    if (!/^https?:\/\/\S+$/.test(form.base_url.trim())) return 'Enter the base URL, e.g. https://gitlab.example.com';
    if (!form.private_token.trim()) return 'Enter a PRIVATE-TOKEN of an admin user of that instance.';
    const n = Number(form.interval_s);
    if (!Number.isInteger(n) || n < 2 || n > 60) return 'The interval is a whole number of seconds from 2 to 60.';
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(form.segment.trim() || 'sidekiq')) return 'The segment is letters, digits, _ or - (usually "sidekiq").';
    return null;
  };

  async function run(kind: 'test' | 'add', e?: FormEvent) {
    e?.preventDefault();
    const bad = invalid();
    if (bad) return setResult(bad);
    setBusy(true);
    setResult(kind === 'test' ? 'Testing…' : 'Adding…');
    try {
      if (kind === 'test') setResult(await client.testNewConnection(body()));
      else {
        await client.createConnection(body());
        setResult(null);
        setForm({ ...form, name: '', base_url: '', private_token: '' });
        onAdded();
      }
    } catch (err) {
      setResult((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  const field = (k: keyof typeof form) => ({ value: form[k], onChange: (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value }) });

  return (
    <form className="card form-grid" onSubmit={(e) => void run('add', e)} aria-labelledby="add-h" data-testid="add-connection">
      <h3 id="add-h">Add a GitLab instance</h3>
      <label>Name<input {...field('name')} placeholder="production GitLab" data-testid="conn-name" /></label>
      <label>Base URL<input {...field('base_url')} placeholder="https://gitlab.example.com" required data-testid="conn-url" /></label>
      <label>PRIVATE-TOKEN<input {...field('private_token')} type="password" autoComplete="off" required data-testid="conn-token" /></label>
      {plainHttpHost(form.base_url) && (
        <p className="error small" role="note" data-testid="conn-plain-http">⚠ The token would go to {plainHttpHost(form.base_url)} over plain http, readable on the network path: use https://.</p>
      )}
      <GitLabApiFields api={field('api_version')} segment={field('segment')} testIdPrefix="conn" />
      <label>Interval (s)<input {...field('interval_s')} inputMode="numeric" data-testid="conn-interval" /></label>
      <div className="row gap">
        <button type="button" className="ghost" disabled={busy} onClick={() => void run('test')} data-testid="conn-test">Test</button>
        <button type="submit" disabled={busy} data-testid="conn-add">Add connection</button>
      </div>
      {result && (typeof result === 'string' ? <p className="small" role="status" data-testid="conn-message">{result}</p> : <TestOutcome r={result} />)}
    </form>
  );
}
