// What to start: the fleet form, or a scenario (imported from a JSON file, or exported from the
// last fleet to edit and re-import). Both end up as one StartFleet body.
import { useState, type ReactNode } from 'react';
import { useClient } from '../../app/client-context.tsx';
import { saveBlob } from '../../app/save-file.ts';
import { sim, type Scenario, type StartFleet } from '../../api/simulator.ts';
import { FAULT_HELP, FAULT_KINDS, FormError, INITIAL_FORM, startBodyOf, targetPart, type FleetFormState } from './fleet-form.ts';
import { nativeOpen, nativeOpenAvailable } from './open-file.ts';

type Mode = 'form' | 'scenario';

function Field({ label, hint, children }: { label: string; hint?: string; children: ReactNode }) {
  return (
    <label title={hint}>
      {label}
      {children}
    </label>
  );
}

export function FleetSetup({ busy, running, onStart, onStop }: { busy: boolean; running: boolean; onStart: (body: StartFleet) => void; onStop: () => void }) {
  const client = useClient();
  const [mode, setMode] = useState<Mode>('form');
  const [f, setF] = useState<FleetFormState>(INITIAL_FORM);
  const [scenario, setScenario] = useState<Scenario | null>(null);
  const [scenarioName, setScenarioName] = useState('');
  const [note, setNote] = useState<{ error: boolean; text: string } | null>(null);
  const set = (k: keyof FleetFormState) => (e: { target: { value: string } }) => setF((s) => ({ ...s, [k]: e.target.value }));

  async function importText(name: string, text: string) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      setNote({ error: true, text: `${name} is not JSON (${(e as Error).message}). A scenario is a JSON object with a "runners" list; export one to see the format.` });
      return;
    }
    try {
      const normalized = await sim.validateScenario(client, parsed);
      setScenario(normalized);
      setScenarioName(name);
      setNote({ error: false, text: `Imported ${name}: ${normalized.runners.reduce((n, g) => n + (g.count ?? 1), 0)} runners, ${normalized.builds ?? 0} builds, seed ${normalized.seed ?? 1}.` });
    } catch (e) {
      setNote({ error: true, text: `${name} is not a valid scenario: ${(e as Error).message}` });
    }
  }

  async function pickNative() {
    const file = await nativeOpen([{ name: 'Scenario', extensions: ['json'] }]);
    if (file) await importText(file.name, new TextDecoder().decode(file.data));
  }

  async function exportCurrent() {
    try {
      const { blob, filename } = await sim.exportScenario(client);
      await saveBlob(blob, filename);
      setNote({ error: false, text: `Exported ${filename}.` });
    } catch (e) {
      setNote({ error: true, text: (e as Error).message });
    }
  }

  function start() {
    setNote(null);
    try {
      if (mode === 'scenario') {
        if (!scenario) return setNote({ error: true, text: 'Import a scenario file first (or switch to the form).' });
        onStart({ scenario, ...targetPart(f) });
      } else onStart(startBodyOf(f));
    } catch (e) {
      if (e instanceof FormError) setNote({ error: true, text: e.message });
      else throw e;
    }
  }

  return (
    <div className="card" data-testid="fleet-setup">
      <div className="card-head">
        <h3>Fleet</h3>
        <div className="segmented" role="group" aria-label="Fleet from">
          <button className={mode === 'form' ? 'on' : ''} onClick={() => setMode('form')} data-testid="mode-form">Form</button>
          <button className={mode === 'scenario' ? 'on' : ''} onClick={() => setMode('scenario')} data-testid="mode-scenario">Scenario</button>
        </div>
      </div>

      {mode === 'form' ? (
        <div className="form-grid" data-testid="fleet-form">
          <Field label="Runners"><input type="number" min={1} value={f.runners} onChange={set('runners')} data-testid="f-runners" /></Field>
          <Field label="Tags (comma-separated)"><input value={f.tags} onChange={set('tags')} placeholder="docker, linux" data-testid="f-tags" /></Field>
          <Field label="Builds to create" hint="created through the control API before the runners start; the fleet stops when they are done">
            <input type="number" min={0} value={f.builds} onChange={set('builds')} data-testid="f-builds" />
          </Field>
          <label className="check" title="Off: the runners register with the fleet's project's runners token, as GitLab's project runners, and take only the builds the fleet created. On: they register as shared runners and take any project's builds too.">
            <input type="checkbox" checked={f.shared} onChange={(e) => setF((s) => ({ ...s, shared: e.target.checked }))} data-testid="f-shared" />
            Shared: take any project’s builds
          </label>
          <Field label="Seed" hint="same seed, same logs, same faults"><input type="number" min={0} value={f.seed} onChange={set('seed')} data-testid="f-seed" /></Field>
          <Field label="Trace size, KiB"><input type="number" min={0} value={f.trace_kb} onChange={set('trace_kb')} data-testid="f-trace-kb" /></Field>
          <Field label="Part size, KiB"><input type="number" min={0} step="any" value={f.part_kb} onChange={set('part_kb')} data-testid="f-part-kb" /></Field>
          <Field label="Trace rate, KiB/s (0 = as fast as the server takes it)"><input type="number" min={0} step="any" value={f.rate_kbps} onChange={set('rate_kbps')} data-testid="f-rate" /></Field>
          <Field label="Artifact size, KiB (0 = no upload)"><input type="number" min={0} value={f.artifact_kb} onChange={set('artifact_kb')} data-testid="f-artifact-kb" /></Field>
          <Field label="Failure rate, 0–1"><input type="number" min={0} max={1} step="0.01" value={f.fail_rate} onChange={set('fail_rate')} data-testid="f-fail-rate" /></Field>
          <fieldset className="faults" data-testid="f-faults">
            <legend>Faults</legend>
            {FAULT_KINDS.map((k) => (
              <label key={k} className="check" title={FAULT_HELP[k]}>
                <input type="checkbox" checked={!!f.faults[k]} onChange={(e) => setF((s) => ({ ...s, faults: { ...s.faults, [k]: e.target.checked } }))} data-testid={`fault-${k}`} />
                {k.replace(/_/g, ' ')}
              </label>
            ))}
            <label className="check">
              probability of each
              <input type="number" min={0} max={1} step="0.01" value={f.fault_rate} onChange={set('fault_rate')} style={{ width: 80 }} data-testid="f-fault-rate" />
            </label>
          </fieldset>
        </div>
      ) : (
        <div className="scenario" data-testid="scenario-panel">
          <div className="row gap">
            <input type="file" accept=".json,application/json" data-testid="scenario-file"
              onChange={async (e) => {
                const file = e.target.files?.[0];
                if (file) await importText(file.name, await file.text());
                e.target.value = '';
              }}
            />
            {nativeOpenAvailable() && <button className="ghost" onClick={() => void pickNative()}>Open…</button>}
            <button className="ghost" onClick={() => void exportCurrent()} data-testid="scenario-export">Export current scenario</button>
          </div>
          {scenario ? (
            <pre className="json-view small" data-testid="scenario-json">{`// ${scenarioName}\n${JSON.stringify(scenario, null, 2)}`}</pre>
          ) : (
            <p className="muted small">No scenario loaded. Export the current one to see the format (runner groups, behaviour, faults, builds, seed), edit it, and import it here.</p>
          )}
        </div>
      )}

      <details className="target">
        <summary className="muted small">Target: {f.target_url.trim() || 'this server'}</summary>
        <div className="form-grid">
          <Field label="Coordinator URL (empty = this server)"><input value={f.target_url} onChange={set('target_url')} placeholder="http://127.0.0.1:8090" data-testid="f-target" /></Field>
          <Field label="Registration token (empty = this server's)"><input value={f.registration_token} onChange={set('registration_token')} autoComplete="off" /></Field>
          <Field label="Admin token of the target (to create builds, verify data)"><input type="password" value={f.admin_token} onChange={set('admin_token')} autoComplete="off" /></Field>
        </div>
      </details>

      {note && <p className={note.error ? 'error' : 'ok-text'} role={note.error ? 'alert' : 'status'} data-testid="fleet-note">{note.text}</p>}
      <div className="row gap">
        <button onClick={start} disabled={busy || running} data-testid="fleet-start">Start fleet</button>
        <button className="ghost danger" onClick={onStop} disabled={busy || !running} data-testid="fleet-stop">Stop</button>
      </div>
    </div>
  );
}
