// The form for a sidekiq connection: any Sidekiq, watched read-only through its Redis. The password
// goes to the backend only (in the URL or its own field); Test says what it found or what is wrong.
import { useState, type FormEvent, type ReactNode } from 'react';
import type { NewSidekiqConnection, TestResult } from '../../api/client.ts';
import { useClient } from '../../app/client-context.tsx';

export function SidekiqTestOutcome({ r, testId = 'sidekiq-test-result' }: { r: TestResult; testId?: string }) {
  // Reachable with nothing to watch (a namespace without Sidekiq data) is no green OK.
  if (r.warning) {
    return (
      <p role="status" data-testid={testId} data-state="warning">
        <span className="badge warn">Warning</span> {r.message} <span className="muted small">({Math.round(r.latency_ms)} ms)</span>
      </p>
    );
  }
  return (
    <p className={r.ok ? 'ok-text' : 'error'} role="status" data-testid={testId} data-state={r.ok ? 'ok' : 'failed'}>
      {r.ok ? '✓' : '✗'} {r.message} <span className="muted small">({Math.round(r.latency_ms)} ms)</span>
    </p>
  );
}

/** Loopback names as the backend reads them: a password over plain redis:// elsewhere is readable on the way. */
function plainRedisHost(raw: string, hasPassword: boolean): string | null {
  try {
    const u = new URL(raw.trim());
    const h = u.hostname.replace(/^\[|\]$/g, '');
    const loopback = h === 'localhost' || h.endsWith('.localhost') || /^127\./.test(h) || h === '::1';
    return u.protocol === 'redis:' && !loopback && (hasPassword || u.password) ? u.host : null;
  } catch {
    return null;
  }
}

export function AddSidekiqConnection({ onAdded }: { onAdded: () => void }) {
  const client = useClient();
  const [form, setForm] = useState({ name: '', redis_url: 'redis://127.0.0.1:6379/0', password: '', namespace: '', interval_s: '5' });
  const [result, setResult] = useState<TestResult | string | null>(null);
  const [busy, setBusy] = useState(false);

  const body = (): NewSidekiqConnection => ({
    kind: 'sidekiq',
    name: form.name.trim() || `Sidekiq at ${form.redis_url.trim().replace(/^rediss?:\/\/([^@/]*@)?/, '')}`,
    redis_url: form.redis_url.trim(),
    ...(form.password ? { password: form.password } : {}),
    ...(form.namespace.trim() ? { namespace: form.namespace.trim() } : {}),
    interval_s: Number(form.interval_s),
  });
  const invalid = () => {
    if (!/^rediss?:\/\/\S+$/.test(form.redis_url.trim())) return 'Enter the Redis URL, e.g. redis://127.0.0.1:6379/0 (rediss:// for TLS).';
    if (form.namespace.trim() && !/^[A-Za-z0-9_.:-]{1,64}$/.test(form.namespace.trim())) return 'The namespace is letters, digits, _ . : or - (as in redis-namespace), or empty.';
    const n = Number(form.interval_s);
    if (!Number.isInteger(n) || n < 2 || n > 60) return 'The interval is a whole number of seconds from 2 to 60.';
    return null;
  };

  async function run(kind: 'test' | 'add', e?: FormEvent) {
    e?.preventDefault();
    const bad = invalid();
    if (bad) return setResult(bad);
    setBusy(true);
    setResult(kind === 'test' ? 'Testing…' : 'Adding…');
    try {
      if (kind === 'test') setResult(await client.testNewSidekiqConnection(body()));
      else {
        const added = await client.createSidekiqConnection(body());
        setForm({ ...form, name: '', password: '' });
        onAdded();
        // Added, but a namespace without Sidekiq data would watch nothing: said now, not discovered on an empty dashboard.
        const t = await client.testConnection(added.id).catch(() => null);
        setResult(t?.warning ? t : null);
      }
    } catch (err) {
      setResult((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  const field = (k: keyof typeof form) => ({ value: form[k], onChange: (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value }) });
  const risky = plainRedisHost(form.redis_url, form.password !== '');

  return (
    <form className="card form-grid" onSubmit={(e) => void run('add', e)} aria-labelledby="add-sidekiq-h" data-testid="add-sidekiq">
      <h3 id="add-sidekiq-h">Add a Sidekiq (through its Redis, read-only)</h3>
      <label>Name<input {...field('name')} placeholder="production Sidekiq" data-testid="sk-name" /></label>
      <label>Redis URL<input {...field('redis_url')} placeholder="redis://127.0.0.1:6379/0" required data-testid="sk-url" /></label>
      <label>Password (optional)<input {...field('password')} type="password" autoComplete="off" data-testid="sk-password" /></label>
      <label>Namespace (optional)<input {...field('namespace')} placeholder="redis-namespace prefix" data-testid="sk-namespace" /></label>
      <label>Interval (s)<input {...field('interval_s')} inputMode="numeric" data-testid="sk-interval" /></label>
      {risky && (
        <p className="error small" role="note" data-testid="sk-plain-redis">⚠ The password would go to {risky} over plain redis://, readable on the network path: use rediss://.</p>
      )}
      <div className="row gap">
        <button type="button" className="ghost" disabled={busy} onClick={() => void run('test')} data-testid="sk-test">Test</button>
        <button type="submit" disabled={busy} data-testid="sk-add">Add Sidekiq</button>
      </div>
      {result && (typeof result === 'string' ? <p className="small" role="status" data-testid="sk-message">{result}</p> : <SidekiqTestOutcome r={result} />)}
    </form>
  );
}

/** Which kind of connection to add: a GitLab over HTTP (the existing form) or a Sidekiq through Redis. */
export function AddConnectionChooser({ gitlab, onAdded }: { gitlab: ReactNode; onAdded: () => void }) {
  const [kind, setKind] = useState<'gitlab' | 'sidekiq'>('gitlab');
  return (
    <>
      <fieldset className="card row gap" data-testid="add-kind">
        <legend>Add a connection</legend>
        <label className="row gap"><input type="radio" name="add-kind" value="gitlab" checked={kind === 'gitlab'} onChange={() => setKind('gitlab')} data-testid="add-kind-gitlab" />GitLab (metrics API over HTTP)</label>
        <label className="row gap"><input type="radio" name="add-kind" value="sidekiq" checked={kind === 'sidekiq'} onChange={() => setKind('sidekiq')} data-testid="add-kind-sidekiq" />Sidekiq (its Redis, read-only)</label>
      </fieldset>
      {kind === 'gitlab' ? gitlab : <AddSidekiqConnection onAdded={onAdded} />}
    </>
  );
}
