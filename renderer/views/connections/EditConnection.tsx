// Editing a saved connection: its name and interval (the embedded one: only those), a GitLab's URL,
// token, API and segment, a sidekiq connection's Redis URL, password and namespace. Only what
// changed is sent (PATCH). A token or password is never shown: left empty it stays as stored, and
// moving the URL to another host needs it again (the backend sends a stored secret only to the host
// it was given for), which the form says as soon as the URL names another host.
import { useState, type FormEvent } from 'react';
import type { AnyConnectionPatch, ConnectionView } from '../../api/client.ts';
import { useClient } from '../../app/client-context.tsx';

/** scheme://host:port of a URL, as the backend compares them; null when it does not parse. */
function hostOf(raw: string | null): string | null {
  if (!raw) return null;
  try {
    const u = new URL(raw.trim());
    return `${u.protocol}//${u.host}`;
  } catch {
    return null;
  }
}

const secretInUrl = (raw: string) => {
  try {
    return new URL(raw.trim()).password !== '';
  } catch {
    return false;
  }
};

type Bound = { value: string; onChange: (e: { target: { value: string } }) => void };

/** A GitLab connection's API version and metrics path segment, in the add and the edit form alike. */
export function GitLabApiFields({ api, segment, testIdPrefix }: { api: Bound; segment: Bound; testIdPrefix: string }) {
  return (
    <>
      <label>API
        <select {...api} data-testid={`${testIdPrefix}-api`}>
          <option value="v4">v4</option>
          <option value="v3">v3</option>
        </select>
      </label>
      <label>Path segment<input {...segment} data-testid={`${testIdPrefix}-segment`} /></label>
    </>
  );
}

export function EditConnection({ conn, onSaved, onClose }: { conn: ConnectionView; onSaved: () => void; onClose: () => void }) {
  const client = useClient();
  const sidekiq = conn.kind === 'sidekiq';
  const remote = conn.kind !== 'embedded';
  const initial = { name: conn.name, interval_s: String(conn.interval_s), url: conn.base_url ?? '', secret: '', namespace: conn.namespace ?? '', api_version: conn.api_version, segment: conn.segment };
  const [form, setForm] = useState(initial);
  const [message, setMessage] = useState<{ error: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const field = (k: keyof typeof form) => ({ value: form[k], onChange: (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value }) });

  const secretName = sidekiq ? 'password' : 'token';
  const urlChanged = remote && form.url.trim() !== initial.url;
  const newHost = hostOf(form.url);
  const moves = urlChanged && newHost !== null && newHost !== hostOf(conn.base_url);
  const needsSecret = moves && conn.has_token && !form.secret && !(sidekiq && secretInUrl(form.url));

  const invalid = (): string | null => {
    const n = Number(form.interval_s);
    if (!Number.isInteger(n) || n < 2 || n > 60) return 'The interval is a whole number of seconds from 2 to 60.';
    if (urlChanged && !(sidekiq ? /^rediss?:\/\/\S+$/ : /^https?:\/\/\S+$/).test(form.url.trim())) {
      return sidekiq ? 'Enter the Redis URL, e.g. redis://127.0.0.1:6379/0 (rediss:// for TLS).' : 'Enter the base URL, e.g. https://gitlab.example.com';
    }
    if (sidekiq && form.namespace.trim() && !/^[A-Za-z0-9_.:-]{1,64}$/.test(form.namespace.trim())) return 'The namespace is letters, digits, _ . : or - (as in redis-namespace), or empty for none.';
    if (needsSecret) return `Moving this connection to ${new URL(form.url.trim()).host} needs its ${secretName} again: enter it.`;
    return null;
  };

  const patch = (): AnyConnectionPatch => {
    const p: AnyConnectionPatch = {};
    if (form.name.trim() && form.name.trim() !== conn.name) p.name = form.name.trim();
    if (Number(form.interval_s) !== conn.interval_s) p.interval_s = Number(form.interval_s);
    if (!remote) return p;
    if (sidekiq) {
      if (urlChanged) p.redis_url = form.url.trim();
      if (form.secret) p.password = form.secret;
      if (form.namespace.trim() !== initial.namespace) p.namespace = form.namespace.trim();
    } else {
      if (urlChanged) p.base_url = form.url.trim();
      if (form.secret) p.private_token = form.secret;
      if (form.api_version !== conn.api_version) p.api_version = form.api_version;
      if (form.segment.trim() !== conn.segment) p.segment = form.segment.trim();
    }
    return p;
  };

  async function save(e: FormEvent) {
    e.preventDefault();
    const bad = invalid();
    if (bad) return setMessage({ error: true, text: bad });
    const p = patch();
    if (!Object.keys(p).length) return setMessage({ error: false, text: 'Nothing changed.' });
    setBusy(true);
    setMessage(null);
    try {
      await client.patchConnection(conn.id, p);
      onSaved();
      onClose();
    } catch (err) {
      setMessage({ error: true, text: (err as Error).message });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card form-grid" onSubmit={(e) => void save(e)} noValidate aria-labelledby="edit-conn-h" data-testid="edit-connection">
      <h3 id="edit-conn-h">Edit “{conn.name}”</h3>
      <label>Name<input {...field('name')} data-testid="edit-name" /></label>
      <label>Interval (s)<input {...field('interval_s')} inputMode="numeric" data-testid="edit-interval" /></label>
      {remote && <label>{sidekiq ? 'Redis URL' : 'Base URL'}<input {...field('url')} data-testid="edit-url" /></label>}
      {remote && (
        <label>
          {sidekiq ? 'Password' : 'PRIVATE-TOKEN'} {conn.has_token ? '(empty: keep the stored one)' : '(optional)'}
          <input {...field('secret')} type="password" autoComplete="off" aria-required={needsSecret} aria-describedby={needsSecret ? 'edit-secret-note' : undefined} data-testid="edit-secret" />
        </label>
      )}
      {sidekiq && <label>Namespace (empty: none)<input {...field('namespace')} data-testid="edit-namespace" /></label>}
      {remote && !sidekiq && (
        <>
          <GitLabApiFields api={field('api_version')} segment={field('segment')} testIdPrefix="edit" />
        </>
      )}
      {moves && conn.has_token && (
        <p className="small" role="note" id="edit-secret-note" data-testid="edit-secret-note">
          <span className="badge warn">Another host</span> The stored {secretName} is only sent to {hostOf(conn.base_url)?.replace(/^[a-z]+:\/\//, '')}, the host it was given for: moving to {new URL(form.url.trim()).host} needs the {secretName} again{sidekiq ? ' (in its field or in the URL)' : ''}.
        </p>
      )}
      <div className="row gap">
        <button type="submit" disabled={busy} data-testid="edit-save">Save</button>
        <button type="button" className="ghost" onClick={onClose} data-testid="edit-cancel">Cancel</button>
      </div>
      {message && <p className={message.error ? 'error small' : 'small'} role={message.error ? 'alert' : 'status'} data-testid="edit-message">{message.text}</p>}
    </form>
  );
}
