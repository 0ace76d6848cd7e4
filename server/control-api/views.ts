// How the control API shows stored records: ISO times, no token digests, trace length from the file.
import type { AppContext } from '../context.ts';
import type { Build } from '../store/ports/build.ts';
import type { Project } from '../store/ports/project.ts';
import type { Runner } from '../store/ports/runner.ts';
import type { BuildView, ProjectView, RunnerView } from '../../contract/control.ts';
import { isoTime, isoTimeOr0 } from '../util/times.ts';

// Never new Date(x).toISOString() here: it throws on a stored time past Date's range.
const iso = isoTime;

export function projectView(p: Project): ProjectView {
  return { ...p, created_at: isoTimeOr0(p.created_at) };
}

/** `files: true` (a build's detail) adds the archive's kept file list and the project's name; lists never carry them. */
export async function buildView(ctx: AppContext, b: Build, opts: { files?: boolean } = {}): Promise<BuildView> {
  const end = b.finished_at ?? (b.status === 'running' ? Date.now() : null);
  const runner = b.status === 'running' && b.runner_id !== null ? await ctx.domain.runners.byId(b.runner_id) : undefined;
  const project = opts.files === true ? await ctx.domain.projects.byId(b.project_id) : undefined;
  return {
    id: b.id,
    status: b.status,
    project_id: b.project_id,
    runner_id: b.runner_id,
    name: b.name,
    stage: b.stage,
    ref: b.ref,
    sha: b.sha,
    before_sha: b.before_sha,
    tag: b.tag,
    commands: b.commands,
    repo_url: b.repo_url,
    variables: b.variables,
    options: b.options,
    timeout: b.timeout,
    tag_list: b.tag_list,
    depends_on: b.depends_on,
    token: b.token,
    trace_length: await ctx.domain.builds.traceLength(b.id),
    artifacts: b.artifacts_key
      ? { filename: b.artifacts_filename ?? 'artifacts.zip', size: b.artifacts_size ?? 0, expire_at: iso(b.artifacts_expire_at), ...(await filesOf(ctx, b.id, opts.files === true)) }
      : null,
    created_at: isoTimeOr0(b.created_at),
    started_at: iso(b.started_at),
    finished_at: iso(b.finished_at),
    duration: b.started_at !== null && end !== null ? (end - b.started_at) / 1000 : null,
    last_update_at: iso(ctx.domain.builds.lastUpdate(b, runner?.contacted_at ?? null) ?? null),
    ...(project ? { project_name: project.name } : {}),
  };
}

async function filesOf(ctx: AppContext, buildId: number, withEntries: boolean): Promise<Pick<NonNullable<BuildView['artifacts']>, 'files' | 'files_total' | 'files_truncated'>> {
  if (!withEntries) {
    const s = await ctx.domain.builds.listingSummary(buildId);
    return { files_total: s?.total ?? null, files_truncated: s?.truncated ?? false };
  }
  const l = await ctx.domain.builds.listing(buildId);
  return l ? { files: l.entries, files_total: l.total, files_truncated: l.truncated } : { files: null, files_total: null, files_truncated: false };
}

/** `buildsCount`: builds handed to the runner (RunnersDomain.buildCounts). */
export function runnerView(r: Runner, buildsCount: number): RunnerView {
  const s = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    id: r.id,
    description: r.description,
    active: r.active,
    is_shared: r.is_shared,
    project_id: r.project_id,
    online: r.online,
    run_untagged: r.run_untagged,
    locked: r.locked,
    tag_list: r.tag_list,
    version: s(r.info.version),
    revision: s(r.info.revision),
    platform: s(r.info.platform),
    architecture: s(r.info.architecture),
    last_contact_at: iso(r.contacted_at),
    created_at: isoTimeOr0(r.created_at),
    builds_count: buildsCount,
  };
}
