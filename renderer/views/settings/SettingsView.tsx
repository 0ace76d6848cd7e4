// The Settings view: server settings saved for the next start, the theme, demo mode,
// reset data, and the server log. The settings it shows are the server's config schema
// (server/config.ts) with what is saved in <data dir>/settings.json (server/settings-api/).
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { useTheme, type ThemeChoice } from '../../app/theme.ts';
import { settings } from '../../api/settings.ts';
import { SettingsTable } from './SettingsTable.tsx';
import { DemoPanel } from './DemoPanel.tsx';
import { ResetPanel } from './ResetPanel.tsx';
import { LogViewer } from './LogViewer.tsx';
import { TimesCard } from './TimesCard.tsx';
import './settings.css';

const THEMES: { id: ThemeChoice; label: string }[] = [
  { id: 'light', label: 'Light' },
  { id: 'dark', label: 'Dark' },
  { id: 'system', label: 'System' },
];

export default function SettingsView() {
  const client = useClient();
  const view = useQuery({ queryKey: ['settings'], queryFn: () => settings.get(client) });
  const [theme, setTheme] = useTheme();

  return (
    <section className="view" data-testid="view-settings">
      <div className="toolbar">
        <h2>Settings</h2>
        {view.data && <span className="muted small">Data dir <code data-testid="data-dir">{view.data.data_dir}</code></span>}
      </div>
      <div className="settings-top">
        <div className="card">
          <h3>Theme</h3>
          <div className="segmented" role="radiogroup" aria-label="Colour theme">
            {THEMES.map((t) => (
              <button key={t.id} role="radio" aria-checked={theme === t.id} className={theme === t.id ? 'on' : ''} onClick={() => setTheme(t.id)} data-testid={`theme-${t.id}`}>{t.label}</button>
            ))}
          </div>
          <p className="muted small">Kept in this browser (or this desktop app); System follows the operating system's choice.</p>
        </div>
        <TimesCard />
        <DemoPanel view={view.data} />
        <ResetPanel />
      </div>
      {view.error && <p className="error" role="alert">{(view.error as Error).message}</p>}
      {view.data ? <SettingsTable view={view.data} /> : !view.error && <p className="muted">Loading settings…</p>}
      <LogViewer />
    </section>
  );
}
