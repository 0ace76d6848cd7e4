// What `jobscope simulate` prints: the live block (terminal), the plain progress line (pipes and
// CI logs) and the closing summary.
import type { FleetStatus } from '../contract/simulator.ts';

const mb = (n: number) => `${(n / 1e6).toFixed(n >= 1e8 ? 0 : n >= 1e7 ? 1 : 2)} MB`;
const int = (n: number) => n.toLocaleString('en-US');

function buildsText(s: FleetStatus): string {
  return `${int(s.totals.builds_done)}${s.builds_target !== null ? `/${int(s.builds_target)}` : ''}`;
}

function rates(s: FleetStatus): { perMin: number; mbps: number } {
  const secs = Math.max(0.001, s.duration_s);
  return { perMin: (s.totals.builds_done * 60) / secs, mbps: s.totals.trace_bytes / 1e6 / secs };
}

function byState(s: FleetStatus): string {
  const counts: Record<string, number> = {};
  for (const r of s.runners) counts[r.state] = (counts[r.state] ?? 0) + 1;
  return Object.entries(counts)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
}

const errorsCount = (s: FleetStatus) => Object.values(s.errors_by_kind).reduce((a, b) => a + b, 0);

export function progressLine(s: FleetStatus): string {
  const r = rates(s);
  return (
    `[${s.duration_s.toFixed(1)}s] builds ${buildsText(s)} · runners ${byState(s) || '-'} · trace ${mb(s.totals.trace_bytes)} · ` +
    `416s ${s.totals.status_416} · faults ${s.totals.faults_injected} · errors ${errorsCount(s)} · violations ${s.violations.length} · ` +
    `${r.perMin.toFixed(0)} builds/min`
  );
}

export function formatProgress(s: FleetStatus, cols: number): string[] {
  // A line wider than the terminal wraps and breaks the redraw (it moves the cursor up by lines).
  const columns = cols > 20 ? cols : 100;
  const width = Math.max(10, Math.min(50, columns - 40));
  const frac = s.builds_target ? Math.min(1, s.totals.builds_done / s.builds_target) : 0;
  const bar = s.builds_target ? `[${'#'.repeat(Math.round(frac * width)).padEnd(width, '.')}] ${(frac * 100).toFixed(0)}%` : '';
  const r = rates(s);
  const lines = [
    `jobscope simulate → ${s.target}  ${s.duration_s.toFixed(1)}s  ${s.message}`,
    `builds ${buildsText(s)} ${bar}`,
    `ok ${s.totals.success} · failed ${s.totals.failed} · canceled ${s.totals.canceled} · abandoned ${s.totals.abandoned} · ` +
      `${r.perMin.toFixed(0)} builds/min · ${r.mbps.toFixed(2)} trace MB/s`,
    `trace ${mb(s.totals.trace_bytes)} · artifacts ${mb(s.totals.artifact_bytes)} · requests ${int(s.totals.requests)} · 416s ${s.totals.status_416} · ` +
      `faults ${s.totals.faults_injected} · errors ${errorsCount(s)} · violations ${s.violations.length}`,
    `runners: ${byState(s)}`,
  ];
  const shown = s.runners.filter((x) => x.build_id !== null).slice(0, 8);
  for (const x of shown) lines.push(`  ${x.name.padEnd(12)} ${x.detail}`);
  if (s.runners.filter((x) => x.build_id !== null).length > shown.length) lines.push('  …');
  return lines.map((l) => (l.length >= columns ? l.slice(0, columns - 2) + '…' : l));
}

function tally(record: Record<string, number>): string {
  const e = Object.entries(record).sort((a, b) => b[1] - a[1]);
  return e.length ? e.map(([k, v]) => `${k} ${int(v)}`).join(', ') : 'none';
}

/** What became of the builds the fleet created (project runners, or shared) and the others it took. */
function ownLines(s: FleetStatus): string[] {
  const own = s.own;
  if (!own) return [];
  const runners = s.shared ? 'shared runners: any project’s builds' : 'project runners: its builds only';
  return [
    `  its builds      ${int(own.created)} in project ${s.project} (${runners}): ${own.success} success, ${own.failed} failed, ${own.canceled} canceled, ${own.running} running, ${own.pending} pending`,
    ...(s.others_taken ? [`  others taken    ${int(s.others_taken)} builds it did not create`] : []),
  ];
}

export function formatSummary(s: FleetStatus, o: { embedded: boolean; verify: boolean }): string {
  const r = rates(s);
  const t = s.totals;
  const faults = Object.entries(s.faults_by_kind)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => {
      const answers = Object.entries(s.fault_answers[k] ?? {})
        .map(([status, n]) => `${status === '0' ? 'no answer' : status}×${n}`)
        .join(' ');
      return `${k} ${v} (${answers})`;
    });
  const lines = [
    'Jobscope simulate — summary',
    `  target          ${s.target}${o.embedded ? ' (embedded server)' : ''}`,
    `  runners         ${s.runners.length} (seed ${s.seed})`,
    `  builds done     ${buildsText(s)}: ${t.success} success, ${t.failed} failed, ${t.canceled} canceled, ${t.abandoned} abandoned` +
      (s.message === 'stopped' ? ' (stopped before the end; builds in progress were reported failed)' : ''),
    ...ownLines(s),
    `  bytes streamed  trace ${mb(t.trace_bytes)}, artifacts ${mb(t.artifact_bytes)}, in ${int(t.requests)} requests`,
    `  416s met        ${t.status_416}`,
    `  faults          ${faults.length ? faults.join('; ') : 'none'}`,
    `  errors by kind  ${tally(s.errors_by_kind)}`,
    `  verified        ${o.verify ? `${t.traces_verified} traces and ${t.artifacts_verified} artifacts byte-exact` : 'off (no admin token, or --no-verify)'}`,
    `  throughput      ${r.perMin.toFixed(0)} builds/min, ${r.mbps.toFixed(2)} trace MB/s`,
    `  duration        ${s.duration_s.toFixed(1)} s`,
  ];
  if (s.protocol_broken) {
    lines.push(`  protocol        BROKEN: ${s.violations.length} violation(s) by the server`);
    for (const v of s.violations.slice(0, 10)) lines.push(`    - ${v.kind}${v.build_id !== null ? ` (build ${v.build_id})` : ''}: ${v.message}`);
  } else if (o.verify) lines.push('  protocol        OK: no lost or corrupted bytes, no build handed out twice');
  else lines.push('  protocol        no violation seen in the answers (data not compared: give the target’s --admin-token)');
  return lines.join('\n');
}
