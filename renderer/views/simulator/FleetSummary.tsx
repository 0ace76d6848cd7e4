// Which run the numbers are from, what became of the builds the fleet created (and the others it
// took), the fleet's totals, what the faults met, and any protocol violation the verifier found.
import type { FleetStatus } from '../../api/simulator.ts';
import { clock, humanDuration, num } from '../../components/format.ts';
import { bytes } from './bytes.ts';

function Kpi({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="card">
      <div className="kpi-label">{label}</div>
      <div className="kpi-value" data-testid={testId}>{value}</div>
    </div>
  );
}

/** "Run of 14:03:07 · project simulator (project runners) · 4 runners · seed 1": which run the numbers below are from. */
export function runLabel(s: FleetStatus): string | null {
  if (!s.started_at) return null;
  const who = s.project ? `project ${s.project} (${s.shared ? 'shared runners' : 'project runners'})` : 'builds it did not create';
  return `Run of ${clock(Date.parse(s.started_at), 0)} · ${who} · ${num(s.runners.length)} runners${s.seed !== null ? ` · seed ${s.seed}` : ''}`;
}

/** "10 / 10 done", then what is still running or pending and what went wrong. */
function ownText(own: NonNullable<FleetStatus['own']>): string {
  const done = own.success + own.failed + own.canceled;
  const rest = [own.failed && `${num(own.failed)} failed`, own.canceled && `${num(own.canceled)} canceled`, own.running && `${num(own.running)} running`, own.pending && `${num(own.pending)} pending`].filter(Boolean);
  return `${num(done)} / ${num(own.created)} done${rest.length ? ` (${rest.join(', ')})` : ''}`;
}

export function FleetSummary({ s }: { s: FleetStatus }) {
  const t = s.totals;
  const faults = Object.entries(s.fault_answers);
  const errors = Object.entries(s.errors_by_kind);
  return (
    <>
      {s.protocol_broken && (
        <div className="banner alert" role="alert" data-testid="protocol-broken">
          <strong>The server broke the protocol:</strong>
          <ul>{s.violations.slice(0, 10).map((v, i) => <li key={i}>{v.kind}{v.build_id !== null ? ` (build ${v.build_id})` : ''}: {v.message}</li>)}</ul>
        </div>
      )}
      {runLabel(s) && <p className="muted small" data-testid="sim-run">{runLabel(s)}</p>}
      <div className="kpis">
        {s.own && <Kpi label="Its builds" testId="sim-own-builds" value={ownText(s.own)} />}
        {s.own && s.others_taken > 0 && <Kpi label="Other builds taken" testId="sim-others-taken" value={num(s.others_taken)} />}
        <Kpi label="Builds done" testId="sim-builds-done" value={`${num(t.builds_done)}${s.builds_target !== null ? ` / ${num(s.builds_target)}` : ''}`} />
        <Kpi label="Success / failed" testId="sim-success" value={`${num(t.success)} / ${num(t.failed)}`} />
        <Kpi label="Trace streamed" testId="sim-trace-bytes" value={bytes(t.trace_bytes)} />
        <Kpi label="Artifacts" testId="sim-artifact-bytes" value={bytes(t.artifact_bytes)} />
        <Kpi label="Requests" testId="sim-requests" value={num(t.requests)} />
        <Kpi label="416s met" testId="sim-416" value={num(t.status_416)} />
        <Kpi label="Faults injected" testId="sim-faults" value={num(t.faults_injected)} />
        <Kpi label="Trace checks / artifacts verified" testId="sim-verified" value={`${num(t.traces_verified)} / ${num(t.artifacts_verified)}`} />
        <Kpi label={s.state === 'running' || s.state === 'stopping' ? 'Running for' : 'Ran for'} testId="sim-duration" value={humanDuration(s.duration_s)} />
      </div>
      {(faults.length > 0 || errors.length > 0) && (
        <div className="card small" data-testid="fault-answers">
          {faults.length > 0 && (
            <p>
              <strong>What the server answered to each fault: </strong>
              {faults.map(([k, answers]) => (
                <span key={k} className="fault-answer">
                  <span className="badge danger">{k}</span>
                  {Object.entries(answers).map(([code, n]) => `${code === '0' ? 'no answer' : code} ×${n}`).join(', ')}
                </span>
              ))}
            </p>
          )}
          {errors.length > 0 && (
            <p><strong>Errors by kind: </strong>{errors.map(([k, n]) => `${k} ×${n}`).join(', ')}</p>
          )}
        </div>
      )}
    </>
  );
}
