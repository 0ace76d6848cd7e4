// Signs in (bridge, sign-in link, stored token or the form), then shows the shell.
import { useEffect, useMemo, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Client } from '../api/client.ts';
import { bridge } from '../api/bridge.ts';
import { browserSession, forgetToken, initialSession, rememberToken, takeTokenFromFragment, type Session } from '../api/session.ts';
import { ClientContext } from './client-context.tsx';
import { SignIn } from './SignIn.tsx';
import { Shell } from './Shell.tsx';

export function Root() {
  // Only the Electron bridge answers asynchronously; in a browser the session is known now.
  const [session, setSession] = useState<Session | null | undefined>(() => (bridge() ? undefined : (browserSession() ?? null)));
  const [notice, setNotice] = useState<string | null>(null);
  const queryClient = useQueryClient();

  useEffect(() => {
    if (bridge()) initialSession().then((s) => setSession(s ?? null), () => setSession(null));
    // A sign-in link opened in a tab that already runs the app changes only the fragment.
    const onHash = () => {
      const token = takeTokenFromFragment();
      if (!token) return;
      rememberToken(token);
      setNotice(null);
      setSession((cur) => (cur?.source === 'bridge' ? cur : { baseUrl: '', token, source: 'link' }));
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  const client = useMemo(() => {
    if (!session) return null;
    const c = new Client(session.baseUrl, session.token);
    c.onUnauthorized = () => {
      forgetToken();
      queryClient.clear();
      setNotice('The backend did not accept the token. Sign in again with the admin token.');
      setSession(null);
    };
    return c;
  }, [session, queryClient]);

  if (session === undefined) return <div className="center muted">Starting…</div>;
  if (!session || !client) return <SignIn notice={notice} onSignedIn={(s) => { setNotice(null); setSession(s); }} />;
  return (
    <ClientContext.Provider value={client}>
      <Shell onSignOut={() => { forgetToken(); queryClient.clear(); setSession(null); }} canSignOut={session.source !== 'bridge'} />
    </ClientContext.Provider>
  );
}
