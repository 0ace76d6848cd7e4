// The app shell: navigation from the view registry, connection picker, theme, alert banner.
import { Suspense, useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useClient } from './client-context.tsx';
import { useRoute } from './route.ts';
import { useTheme, type ThemeChoice } from './theme.ts';
import { CONNECTION_KEY, SelectedConnection } from './connection-context.tsx';
import { AlertCenter } from './AlertCenter.tsx';
import { JobSystemBanner } from './JobSystemBanner.tsx';
import { LiveAnnouncer } from './announcer.tsx';
import { ShortcutsAndTour } from './ShortcutsAndTour.tsx';
import { isString, useUiState, useUiStateSync } from './ui-state.ts';
import { VIEWS, viewFor } from '../views/registry.ts';
import { HeaderNav } from './HeaderNav.tsx';
import { PaceContext } from './pace.tsx';
import { CONTENT_ID, SkipLink } from './SkipLink.tsx';
import { useTimeZoneForFormats } from './time-zone.ts';

const MENU = VIEWS.filter((v) => !v.hidden);

export function Shell({ onSignOut, canSignOut }: { onSignOut: () => void; canSignOut: boolean }) {
  const client = useClient();
  const route = useRoute();
  const [theme, setTheme] = useTheme();
  useUiStateSync(client);
  useTimeZoneForFormats();
  // Remembered with the view state (the backend's data dir); the older localStorage key seeds it.
  const [connectionId, setConnectionId] = useUiState('connection', localStorage.getItem(CONNECTION_KEY) ?? 'embedded', isString);
  // Read once: it names the pace the views ask for new data at (pace.tsx), fixed for the server's life.
  const status = useQuery({ queryKey: ['status'], queryFn: client.status, staleTime: Infinity });
  const pace = status.data?.ui_refresh_ms ?? 0;
  const connections = useQuery({ queryKey: ['connections'], queryFn: client.connections, refetchInterval: pace > 0 ? pace : 5000 });

  const selected = useMemo(
    () => ({
      id: connections.data && !connections.data.some((c) => c.id === connectionId) ? 'embedded' : connectionId,
      set: setConnectionId,
    }),
    [connectionId, setConnectionId, connections.data],
  );

  const entry = viewFor(route.view);
  const View = entry.component;

  return (
    <PaceContext.Provider value={pace}>
      <SelectedConnection.Provider value={selected}>
        <div className="shell">
          <SkipLink />
          <header className="topbar">
            <h1 className="brand">Jobscope</h1>
            <HeaderNav views={MENU} activeId={entry.id} />
            <label className="inline">
              <span className="muted small">Connection</span>
              <select value={selected.id} onChange={(e) => selected.set(e.target.value)} data-testid="connection-picker" aria-label="Connection shown on the dashboard">
                {(connections.data ?? [{ id: 'embedded', name: 'Embedded server' }]).map((c) => (
                  <option key={c.id} value={c.id}>{c.name}</option>
                ))}
              </select>
            </label>
            <label className="inline">
              <span className="muted small">Theme</span>
              <select value={theme} onChange={(e) => setTheme(e.target.value as ThemeChoice)} data-testid="theme-picker" aria-label="Colour theme">
                <option value="system">System</option>
                <option value="light">Light</option>
                <option value="dark">Dark</option>
              </select>
            </label>
            <ShortcutsAndTour />
            {canSignOut && <button className="ghost" onClick={onSignOut}>Sign out</button>}
          </header>
          <JobSystemBanner />
          <AlertCenter />
          <LiveAnnouncer />
          <main className="content" id={CONTENT_ID} tabIndex={-1}>
            <Suspense fallback={<p className="muted">Loading…</p>}>
              <View route={route} />
            </Suspense>
          </main>
        </div>
      </SelectedConnection.Provider>
    </PaceContext.Provider>
  );
}
