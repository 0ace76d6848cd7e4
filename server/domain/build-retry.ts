// GitLab's retry (Ci::Build.retry): a finished build is run again as a new build of the same
// definition. The old build keeps its status, trace and artifacts (the pipeline's history); the
// new one gets its own id and token and waits for a runner like any other pending build.
import type { Build, BuildStatus, NewBuild } from '../store/ports/build.ts';

export type RetryResult = { ok: true; build: Build } | { ok: false; reason: 'not-found' } | { ok: false; reason: 'not-finished'; status: Build['status'] };

/** Only a build that has stopped can be retried: a pending or running one would run twice at once. */
const RETRIABLE: readonly BuildStatus[] = ['success', 'failed', 'canceled'];
export const canRetry = (b: Pick<Build, 'status'>): boolean => RETRIABLE.includes(b.status);

/** What the new build copies: everything that defines the work (same commit, script, variables, tags, options), nothing of the run. */
export function retryInput(b: Build): NewBuild {
  return {
    project_id: b.project_id,
    name: b.name,
    stage: b.stage,
    ref: b.ref,
    sha: b.sha,
    before_sha: b.before_sha,
    tag: b.tag,
    commands: b.commands,
    repo_url: b.repo_url,
    variables: b.variables.map((v) => ({ ...v })),
    options: b.options,
    timeout: b.timeout,
    tag_list: [...b.tag_list],
    depends_on: [...b.depends_on],
  };
}
