// Each virtual runner as it is right now: state, build, progress of the current step, counters.
import type { RunnerStatus } from '../../api/simulator.ts';
import { num } from '../../components/format.ts';
import { bytes } from './bytes.ts';

const STATE_CLASS: Record<string, string> = {
  running: 'status-running', uploading: 'status-running', finishing: 'status-running', verifying: 'status-running',
  idle: '', polling: '', starting: 'status-pending', registering: 'status-pending', dead: 'status-failed', stopped: 'status-canceled',
};

export function RunnersTable({ runners, linkBuilds }: { runners: RunnerStatus[]; linkBuilds: boolean }) {
  return (
    <div className="card table-wrap">
      <h3>Runners</h3>
      <table data-testid="sim-runners">
        <thead>
          <tr>
            <th>Runner</th><th>State</th><th>Build</th><th>Progress</th><th>Detail</th>
            <th className="c-num">Builds</th><th className="c-num">OK</th><th className="c-num">Failed</th><th className="c-num">Trace</th>
            <th className="c-num">416s</th><th className="c-num">Faults</th><th className="c-num">Errors</th>
          </tr>
        </thead>
        <tbody>
          {runners.map((r) => (
            <tr key={r.name} data-testid="sim-runner" data-runner={r.name} data-state={r.state}>
              <td>{r.name}{r.runner_id !== null && <span className="muted small"> #{r.runner_id}</span>}{r.tags.length > 0 && <div>{r.tags.map((t) => <span key={t} className="badge">{t}</span>)}</div>}</td>
              <td><span className={`badge ${STATE_CLASS[r.state] ?? ''}`} data-testid="sim-runner-state">{r.state}</span></td>
              <td>{r.build_id === null ? '—' : linkBuilds ? <a href={`#/builds/${r.build_id}`} data-testid="sim-runner-build">#{r.build_id}</a> : `#${r.build_id}`}</td>
              <td>
                <div className="bar" aria-label={`${Math.round(r.progress * 100)}%`}>
                  <div className="bar-fill" style={{ width: `${Math.round(r.progress * 100)}%` }} />
                  <span className="bar-text">{Math.round(r.progress * 100)}%</span>
                </div>
              </td>
              <td className="wrap small">{r.detail}</td>
              <td className="c-num">{num(r.counters.builds)}</td>
              <td className="c-num">{num(r.counters.success)}</td>
              <td className="c-num">{num(r.counters.failed)}</td>
              <td className="c-num">{bytes(r.counters.trace_bytes)}</td>
              <td className="c-num">{num(r.counters.status_416)}</td>
              <td className="c-num">{num(r.counters.faults)}</td>
              <td className="c-num">{num(r.counters.errors)}</td>
            </tr>
          ))}
          {!runners.length && <tr><td colSpan={12} className="muted">No fleet yet: fill in the form and press Start fleet.</td></tr>}
        </tbody>
      </table>
    </div>
  );
}
