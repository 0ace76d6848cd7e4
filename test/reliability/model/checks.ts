// What is compared after each step: the touched build (cheap), one route of the sweep in turn, and
// after restarts and kills the full sweep: every list and detail route, every build's status (in
// the list and its detail), trace bytes and artifact, the runners, projects, connections, saved
// settings and job counters.
import assert from 'node:assert/strict';
import { Model, OVERRIDDEN, type MBuild } from './model.ts';
import type { Answer, RealSystem } from './system.ts';
import type { BuildView } from '../../../contract/control.ts';
import type { ConnectionView } from '../../../contract/app.ts';

/** One build's detail against the model: status, runner, trace length, artifact metadata. */
export async function checkBuild(model: Model, real: RealSystem, b: MBuild, listed?: BuildView): Promise<void> {
  let view = listed;
  if (!view) {
    const r = await real.admin('GET', `/api/v3/sim/builds/${b.id}`);
    assert.equal(r.status, 200, `GET build ${b.id}`);
    view = r.json() as BuildView;
  }
  const what = `build ${b.id}`;
  assert.equal(view.status, b.status, `${what}: status`);
  assert.equal(view.runner_id, b.runnerId, `${what}: runner_id`);
  assert.equal(view.trace_length, b.trace.length, `${what}: trace_length`);
  await settleArtifact(model, real, b, view.artifacts);
}

/** Compares the artifact metadata; an expired one may be gone (the sweep runs every 100 ms). */
async function settleArtifact(model: Model, real: RealSystem, b: MBuild, shown: BuildView['artifacts']): Promise<void> {
  const a = b.artifact;
  const what = `build ${b.id}: artifact`;
  if (!a) {
    assert.equal(shown, null, `${what} should be absent`);
    return;
  }
  if (shown === null) {
    assert.ok(!Model.mustHave(a, Date.now()), `${what} vanished before its expiry (${JSON.stringify(a.expire)})`);
    b.artifact = null;
    return;
  }
  assert.equal(shown.size, a.content.length, `${what} size`);
  assert.equal(shown.filename, a.filename, `${what} filename`);
  if (a.expire === null) assert.equal(shown.expire_at, null, `${what} expire_at`);
  else {
    const at = Date.parse(shown.expire_at ?? '');
    assert.ok(at >= a.expire.lo - 1 && at <= a.expire.hi + 1, `${what} expire_at ${shown.expire_at} outside [${new Date(a.expire.lo).toISOString()}, ${new Date(a.expire.hi).toISOString()}]`);
  }
  // The background job fills the listing in later (lists may leave it out); a zip lists its entries, anything else none.
  if (shown.files !== null && shown.files !== undefined) assert.deepEqual(shown.files, a.listing ?? [], `${what} listing`);
}

export async function checkTrace(real: RealSystem, b: MBuild): Promise<void> {
  const r = await real.admin('GET', `/api/v3/sim/builds/${b.id}/trace`);
  assert.equal(r.status, 200, `GET trace of build ${b.id}`);
  assert.equal(r.headers['build-status'], b.status, `build ${b.id}: Build-Status of the trace`);
  assert.ok(r.body.equals(b.trace), `build ${b.id}: trace is not byte-exact (${r.body.length} bytes, model ${b.trace.length})`);
}

/** The trace from a little before `from` (where the step wrote) to its end, byte-exact: the cheap check of a trace step. */
export async function checkTraceTail(real: RealSystem, b: MBuild, from: number): Promise<void> {
  const start = Math.max(0, Math.min(from, b.trace.length) - 16);
  const r = await real.admin('GET', `/api/v3/sim/builds/${b.id}/trace`, undefined, { range: `bytes=${start}-` });
  assert.equal(r.status, 206, `GET trace of build ${b.id} from ${start}: ${r.body.subarray(0, 200).toString('utf8')}`);
  assert.equal(r.headers['content-range'], `bytes ${start}-${Math.max(start, b.trace.length - 1)}/${b.trace.length}`, `build ${b.id}: Content-Range`);
  assert.ok(r.body.equals(b.trace.subarray(start)), `build ${b.id}: trace from ${start} is not byte-exact`);
}

/** Downloads through the runner API (build or project token) or the control API (admin). */
export async function checkDownload(model: Model, real: RealSystem, b: MBuild, via: 'runner' | 'control'): Promise<void> {
  const token = b.token ?? model.project(b.projectId).runnersToken;
  const r =
    via === 'runner'
      ? await real.request('GET', `/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'build-token': token } })
      : await real.admin('GET', `/api/v3/sim/builds/${b.id}/artifacts`);
  const what = `download (${via}) of build ${b.id}`;
  const a = b.artifact;
  if (r.status === 404) {
    assert.ok(!a || !Model.mustHave(a, Date.now()), `${what}: 404 but the artifact was acknowledged and has not expired`);
    b.artifact = null;
    return;
  }
  assert.equal(r.status, 200, what);
  assert.ok(a, `${what}: 200 for an artifact the model does not have`);
  assert.ok(r.body.equals(a.content), `${what}: bytes differ (${r.body.length} vs ${a.content.length})`);
  assert.match(String(r.headers['content-disposition']), /^attachment; filename=/, `${what}: Content-Disposition`);
}

/** List routes that answer in about a millisecond: one of them after every step, in turn. */
const CHEAP = [
  '/api/v3/sim/instance', '/api/v3/sim/users', '/api/v3/sim/projects', '/api/v3/sim/builds?limit=20', '/api/v3/sim/builds?status=running&limit=20',
  '/api/v3/sim/builds?status=pending&limit=20', '/api/v3/sim/runners', '/api/v3/sim/jobs/queues', '/api/v3/sim/jobs/retries?limit=20',
  '/api/v3/sim/jobs/dead?limit=20', '/api/v3/sim/load', '/api/app/settings', '/api/app/status', '/api/app/connections', '/api/app/alerts',
  '/api/app/sim/fleet', '/api/app/sim/fleet/throughput', '/api/app/sim/console', '/api/v3/sidekiq/compound_metrics', '/api/v4/sidekiq/job_stats',
];

/** The cheap lists and, for one entity each time, its detail routes. */
export function cheapRoutes(model: Model): string[] {
  const routes = [...CHEAP];
  const n = model.steps;
  if (model.projects.length) routes.push(`/api/v3/sim/projects/${model.projects[n % model.projects.length]!.id}`);
  if (model.builds.length) routes.push(`/api/v3/sim/builds/${model.builds[n % model.builds.length]!.id}`);
  if (model.connections.length) routes.push(`/api/app/connections/${model.connections[n % model.connections.length]!.id}/thresholds`);
  return routes;
}

/**
 * Every GET route that lists or shows something, for the current model (ids filled in), but a build's
 * detail and trace: the sweep reads those once per build and compares them with the model.
 */
export function sweepRoutes(model: Model): string[] {
  const now = Date.now();
  const routes = [
    ...CHEAP, '/api/v3/sim/builds', '/api/v3/sim/builds?limit=1000', '/api/v3/sim/jobs/dead?limit=1000', '/api/app/logs',
    '/api/app/sim/scenario', '/api/app/sim/journal', '/api/app/sim/journal.har', '/api/docs/json',
  ];
  for (const v of ['v3/sidekiq', 'v3/jobqueue', 'v4/sidekiq']) for (const m of ['queue_metrics', 'process_metrics', 'job_stats', 'compound_metrics']) routes.push(`/api/${v}/${m}`);
  for (const p of model.projects) routes.push(`/api/v3/sim/projects/${p.id}`, `/api/v3/sim/builds?project_id=${p.id}`);
  for (const c of model.connections) {
    routes.push(`/api/app/connections/${c.id}/thresholds`, `/api/app/connections/${c.id}/history?from=${now - 3600_000}&to=${now}`);
    routes.push(`/api/app/connections/${c.id}/export.csv?from=${now - 3600_000}&to=${now}`);
  }
  return routes;
}

/** The answer a list or detail route must give: it answers, with a 2xx (returned, for a caller that compares it too). */
export async function checkRoute(real: RealSystem, route: string): Promise<Answer> {
  const r = await real.admin('GET', route);
  assert.ok(r.status >= 200 && r.status < 300, `GET ${route} answered ${r.status}: ${r.body.subarray(0, 300).toString('utf8')}`);
  return r;
}

/** Job counters never go down; after a drain they count at least every acknowledged job. */
export async function checkCounters(model: Model, real: RealSystem, drained: boolean, read?: Answer): Promise<void> {
  const r = read ?? (await real.admin('GET', '/api/v3/sidekiq/job_stats'));
  assert.equal(r.status, 200, 'job_stats');
  const { processed, failed } = r.json().jobs as { processed: number; failed: number };
  assert.ok(processed >= model.counters.processed, `processed went down: ${processed} < ${model.counters.processed}`);
  assert.ok(failed >= model.counters.failed, `failed went down: ${failed} < ${model.counters.failed}`);
  model.counters.processed = processed;
  model.counters.failed = failed;
  if (model.exact && !model.jobs.loose) {
    const j = model.jobs;
    assert.ok(processed - model.counters.processed0 <= j.acked + j.maybe, `processed ${processed - model.counters.processed0} > ${j.acked} acknowledged jobs + ${j.maybe} of unknown outcome: a job ran twice`);
    assert.ok(failed - model.counters.failed0 <= j.failing + j.maybeFailing, `failed ${failed - model.counters.failed0} > ${j.failing} failing jobs + ${j.maybeFailing} of unknown outcome: a job failed twice`);
  }
  if (drained) {
    assert.ok(processed - model.counters.processed0 >= model.jobs.acked, `processed ${processed - model.counters.processed0} < ${model.jobs.acked} acknowledged jobs`);
    assert.ok(failed - model.counters.failed0 >= model.jobs.failing, `failed ${failed - model.counters.failed0} < ${model.jobs.failing} failing jobs`);
  }
}

/** Everything: after a restart or a kill, and at the end of every run. */
export async function sweep(model: Model, real: RealSystem): Promise<void> {
  // The lists compared below are among the routes every sweep reads: their answers are compared
  // as read (the model does not change during a sweep), not fetched a second time.
  const read = new Map<string, Answer>();
  for (const route of sweepRoutes(model)) read.set(route, await checkRoute(real, route));
  const answer = async (route: string) => read.get(route) ?? (await real.admin('GET', route));

  const projects = (await answer('/api/v3/sim/projects')).json() as { id: number }[];
  assert.deepEqual(projects.map((p) => p.id).sort((a, b) => a - b), model.projects.map((p) => p.id).sort((a, b) => a - b), 'projects');

  const runners = (await answer('/api/v3/sim/runners')).json() as { id: number; active: boolean; is_shared: boolean }[];
  const live = model.live();
  assert.deepEqual(
    runners.map((r) => [r.id, r.active, r.is_shared]).sort((a, b) => Number(a[0]) - Number(b[0])),
    live.map((r) => [r.id, r.active, r.shared]).sort((a, b) => Number(a[0]) - Number(b[0])),
    'runners (id, active, shared)',
  );

  const list = (await answer('/api/v3/sim/builds?limit=1000')).json() as BuildView[];
  assert.equal(list.length, Math.min(1000, model.builds.length), 'build count');
  const byId = new Map(list.map((v) => [v.id as number, v]));
  for (const b of model.builds) {
    const v = byId.get(b.id);
    if (v) await checkBuild(model, real, b, v); // absent when beyond the first 1000
    await checkBuild(model, real, b);
    await checkTrace(real, b);
    if (b.artifact) await checkDownload(model, real, b, 'control');
  }
  for (const status of ['pending', 'running', 'success', 'failed', 'canceled'] as const) {
    if (model.builds.length >= 1000) break;
    const n = list.filter((v) => v.status === status).length;
    assert.equal(n, model.builds.filter((b) => b.status === status).length, `builds ${status}`);
  }

  await checkConnections(model, real, await answer('/api/app/connections'));
  await checkSettings(model, real, await answer('/api/app/settings'));
  await checkCounters(model, real, false, await answer('/api/v3/sidekiq/job_stats'));
  const dead = (await answer('/api/v3/sim/jobs/dead?limit=1000')).json() as unknown[];
  assert.ok(dead.length <= model.jobs.deadMax, `dead set has ${dead.length} jobs, at most ${model.jobs.deadMax} can have died`);
}

/** Every token a stand-in remote received was given for the origin it reached (a stored token never follows a changed URL). */
export function checkTokensStayHome(model: Model, real: RealSystem): void {
  for (const got of real.remotes.received) {
    if (got.token === undefined) continue;
    const home = model.tokenOrigin.get(got.token);
    assert.equal(home, got.origin, `token ${got.token} was sent to ${got.origin}; it was given for ${home ?? 'no connection'}`);
  }
}

export async function checkConnections(model: Model, real: RealSystem, read?: Answer): Promise<void> {
  checkTokensStayHome(model, real);
  const shown = (read ?? (await real.admin('GET', '/api/app/connections'))).json() as ConnectionView[];
  const norm = (xs: { id: string; name: string; enabled: boolean; interval: number; hasToken: boolean }[]) => xs.map((c) => JSON.stringify(c)).sort();
  assert.deepEqual(
    norm(shown.map((c) => ({ id: c.id, name: c.name, enabled: c.enabled, interval: c.interval_s, hasToken: c.has_token }))),
    norm(model.connections.map((c) => ({ id: c.id, name: c.name, enabled: c.enabled, interval: c.interval, hasToken: c.hasToken }))),
    'connections',
  );
}

export async function checkSettings(model: Model, real: RealSystem, read?: Answer): Promise<void> {
  const view = (read ?? (await real.admin('GET', '/api/app/settings'))).json() as {
    settings: { name: string; saved: unknown; effective: unknown; default: unknown; problem: string | null }[];
    warnings: string[];
  };
  for (const s of view.settings) {
    if (s.name in model.savedBad) {
      const bad = model.savedBad[s.name];
      assert.deepEqual(s.saved, bad !== null && typeof bad === 'object' ? null : bad, `saved (invalid) setting ${s.name}`);
      assert.ok(s.problem, `saved ${s.name} = ${JSON.stringify(bad)} is shown without its problem`);
    } else {
      assert.equal(s.saved, model.saved[s.name] ?? null, `saved setting ${s.name}`);
      assert.equal(s.problem, null, `saved setting ${s.name} has a problem`);
    }
    // What is in force: the valid value saved before the last start, else the default (a bad saved value is ignored).
    if (!OVERRIDDEN.has(s.name)) assert.deepEqual(s.effective, model.inForce[s.name] ?? s.default, `setting ${s.name} in force`);
  }
  // The warnings of the last start: one per ignored value (named), one for an unusable file, nothing else.
  assert.equal(view.warnings.length, model.warnings.length, `settings warnings ${JSON.stringify(view.warnings)}, expected about ${JSON.stringify(model.warnings)}`);
  for (const w of model.warnings) {
    const found = w === 'file' ? view.warnings.some((x) => /ignored, not (valid JSON|a JSON object)/.test(x)) : view.warnings.some((x) => x.includes(`ignored ${w} =`));
    assert.ok(found, `no settings warning about ${w}: ${JSON.stringify(view.warnings)}`);
  }
  const eff = (name: string) => view.settings.find((s) => s.name === name)?.effective;
  assert.equal(eff('max-trace-mb'), model.maxTraceBytes / 1024 / 1024, 'max-trace-mb in force');
  assert.equal(eff('max-artifact-mb'), model.maxArtifactBytes / 1024 / 1024, 'max-artifact-mb in force');
}
