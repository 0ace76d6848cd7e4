// Asks for the admin token when the UI was opened without the sign-in link.
import { useState, type FormEvent } from 'react';
import { ApiError, Client } from '../api/client.ts';
import { rememberToken, type Session } from '../api/session.ts';

export function SignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const t = token.trim();
    if (!t) return setError('Paste the admin token first.');
    setBusy(true);
    setError(null);
    try {
      await new Client('', t).instance();
      rememberToken(t);
      onSignedIn({ baseUrl: '', token: t, source: 'form' });
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'That token was not accepted. Use the admin token the server printed at start.' : (err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="signin" data-testid="signin">
      <form onSubmit={submit} className="card">
        <h1>Jobscope</h1>
        {notice && <p className="error" role="alert">{notice}</p>}
        <label htmlFor="token">Admin token</label>
        <input id="token" type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} data-testid="signin-token" />
        <p className="muted small">
          The server prints it when it starts (the line <code>Admin token (PRIVATE-TOKEN): …</code>), together with a
          sign-in link <code>http://HOST:PORT/#token=…</code> that opens this page signed in.
        </p>
        {error && <p className="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy} data-testid="signin-submit">{busy ? 'Checking…' : 'Sign in'}</button>
      </form>
    </main>
  );
}
