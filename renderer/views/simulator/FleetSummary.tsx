// The fleet's totals, what the faults met, and any protocol violation the verifier found.
import type { FleetStatus } from '../../api/simulator.ts';
import { humanDuration, num } from '../../components/format.ts';
import { bytes } from './bytes.ts';

function Kpi({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="card">
      <div className="kpi-label">{label}</div>
      <div className="kpi-value" data-testid={testId}>{value}</div>
    </div>
  );
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
      <div className="kpis">
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
