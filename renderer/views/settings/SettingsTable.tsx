// Every savable setting: what it does, its default, the value in force, the value saved for the
// next start (editable), and a marker when the saved one is not yet in force.
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { settings, type SettingsView, type SettingView } from '../../api/settings.ts';
import { allowed, exposesHost, parsed, shown } from './setting-values.ts';

function Editor({ s, value, onChange }: { s: SettingView; value: string; onChange: (v: string) => void }) {
  const common = { 'aria-label': `Saved value of ${s.name}`, 'data-testid': 'setting-input' };
  if (s.kind === 'bool') {
    return (
      <select value={value} onChange={(e) => onChange(e.target.value)} {...common}>
        <option value="">— not saved</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  }
  return <input value={value} onChange={(e) => onChange(e.target.value)} placeholder="not saved" inputMode={s.kind === 'string' ? 'text' : 'decimal'} size={12} {...common} />;
}

export function SettingsTable({ view }: { view: SettingsView }) {
  const client = useClient();
  const qc = useQueryClient();
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [done, setDone] = useState<string | null>(null);
  const [expose, setExpose] = useState(false);
  // Shown once the server refused a value it could not reach (it tries a Redis URL before saving it).
  const [askUnreachable, setAskUnreachable] = useState(false);
  const [unreachableOk, setUnreachableOk] = useState(false);
  const [savedWarnings, setSavedWarnings] = useState<string[]>([]);
  const changed = view.settings.filter((s) => edits[s.name] !== undefined && edits[s.name] !== shown(s.saved));
  const widening = changed.some((s) => s.name === 'host' && exposesHost(edits[s.name]!));
  const save = useMutation({
    mutationFn: () =>
      settings.save(client, Object.fromEntries(changed.map((s) => [s.name, parsed(s.kind, edits[s.name]!)])), { confirmExpose: widening && expose, confirmUnreachable: askUnreachable && unreachableOk }),
    onSuccess: (v) => {
      qc.setQueryData(['settings'], v);
      setDone(`Saved ${changed.map((s) => s.name).join(', ')} to ${v.settings_file}.`);
      setSavedWarnings(v.saved_warnings ?? []);
      setEdits({});
      setExpose(false);
      setAskUnreachable(false);
      setUnreachableOk(false);
    },
    onError: (e) => {
      if (/confirm_unreachable/.test((e as Error).message)) setAskUnreachable(true);
    },
    onMutate: () => {
      setDone(null);
      setSavedWarnings([]);
    },
  });

  return (
    <div className="card" data-testid="settings-table-card">
      <div className="card-head">
        <h3>Server settings</h3>
        <span className="muted small">Saved in <code>{view.settings_file}</code>; they apply at the next start. Flags and <code>JOBSCOPE_*</code> variables still win.</span>
      </div>
      {view.warnings.length > 0 && (
        <ul className="error small" role="alert" data-testid="settings-warnings">
          {view.warnings.map((w) => <li key={w}>{w}</li>)}
        </ul>
      )}
      <div className="table-wrap">
        <table data-testid="settings-table">
          <thead>
            <tr><th>Setting</th><th>What it does</th><th>Default</th><th>In force</th><th>Saved for next start</th><th><span className="sr-only">Actions</span></th></tr>
          </thead>
          <tbody>
            {view.settings.map((s) => {
              const value = edits[s.name] ?? shown(s.saved);
              const dirty = value !== shown(s.saved);
              return (
                <tr key={s.name} data-testid="setting-row" data-setting={s.name}>
                  <td><strong>{s.name}</strong><div className="muted small"><code>{s.flag}</code> · <code>{s.env}</code></div></td>
                  <td className="wrap small">{s.help}{allowed(s) && <div className="muted" data-testid="setting-allowed">Allowed: {allowed(s)}</div>}</td>
                  <td data-testid="setting-default">{shown(s.default) || '—'}</td>
                  <td data-testid="setting-effective">{shown(s.effective) || '—'}</td>
                  <td>
                    <Editor s={s} value={value} onChange={(v) => { save.reset(); setAskUnreachable(false); setUnreachableOk(false); setEdits((e) => ({ ...e, [s.name]: v })); }} />
                    {dirty && <span className="muted small"> edited</span>}
                    {s.problem && <p className="error small" data-testid="setting-problem">Ignored at start: {s.problem}</p>}
                  </td>
                  <td>{s.restart_required && <span className="badge status-pending" data-testid="restart-marker" title="The saved value differs from the one in force">applies at next start</span>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {widening && (
        <label className="error small" data-testid="settings-expose">
          <input type="checkbox" checked={expose} onChange={(e) => { save.reset(); setExpose(e.target.checked); }} data-testid="settings-expose-confirm" />
          {' '}Listen on {edits.host?.trim()} at the next start: other machines on the network can reach this server and try its tokens.
        </label>
      )}
      {askUnreachable && (
        <label className="error small" data-testid="settings-unreachable">
          <input type="checkbox" checked={unreachableOk} onChange={(e) => setUnreachableOk(e.target.checked)} data-testid="settings-unreachable-confirm" />
          {' '}Save it anyway: it will be reachable when the server next starts (until then the next start cannot use it).
        </label>
      )}
      {save.error && <p className="error" role="alert" data-testid="settings-error">{(save.error as Error).message}</p>}
      {done && <p className="ok-text" role="status" data-testid="settings-saved">{done}</p>}
      {savedWarnings.length > 0 && (
        <ul className="error small" role="alert" data-testid="settings-saved-warnings">
          {savedWarnings.map((w) => <li key={w}>{w}</li>)}
        </ul>
      )}
      <div className="row gap">
        <button onClick={() => save.mutate()} disabled={!changed.length || save.isPending} data-testid="settings-save">
          Save{changed.length ? ` ${changed.length} change${changed.length > 1 ? 's' : ''}` : ''}
        </button>
        <button className="ghost" onClick={() => { setEdits({}); save.reset(); }} disabled={!changed.length}>Discard edits</button>
        <span className="muted small">Empty a field to remove the saved value.</span>
      </div>
    </div>
  );
}
