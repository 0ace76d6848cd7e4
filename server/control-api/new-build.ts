// Defaults for a build created through the control API: what GitLab would have put in a pipeline's
// first build of a fresh project, with a sha long enough for the runner's sha[0:8].
import crypto from 'node:crypto';
import type { NewBuild as NewBuildBody } from '../../contract/control.ts';
import type { NewBuild, Variable } from '../store/ports/build.ts';
import { parseTagList } from '../runner-api/runners.ts';
import type { BuildsDomain } from '../domain/index.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { refuseNul } from '../http/stored-text.ts';

function variablesOf(v: NewBuildBody['variables']): Variable[] {
  if (!v) return [];
  if (Array.isArray(v)) return v.map((x) => ({ key: x.key, value: x.value, public: x.public ?? true }));
  return Object.entries(v).map(([key, value]) => ({ key, value, public: true }));
}

export function newBuildInput(projectId: number, body: NewBuildBody): NewBuild {
  return {
    project_id: projectId,
    name: body.name ?? 'test',
    stage: body.stage ?? 'test',
    ref: body.ref ?? 'master',
    sha: body.sha ?? crypto.randomBytes(20).toString('hex'),
    before_sha: body.before_sha ?? '0000000000000000000000000000000000000000',
    tag: body.tag ?? false,
    commands: body.commands ?? 'echo "Hello from Jobscope"\nmake test',
    repo_url: body.repo_url ?? null,
    variables: variablesOf(body.variables),
    options: body.options ?? {},
    timeout: body.timeout ?? null,
    tag_list: parseTagList(body.tag_list),
    depends_on: body.depends_on ?? [],
  };
}

/** What a build row holds besides the client's fields (token, its digest, times, ids), bytes. */
const ROW_OVERHEAD = 256;
const MAX_OPTIONS_BYTES = 1024 * 1024;
const MiB = 1024 * 1024;

/**
 * Refuses, before anything is written, a request whose builds could not be stored on every store or
 * would not be bounded work: text holding a NUL anywhere (400, http/stored-text.ts: names, commands,
 * variables, options, tags), options over 1 MiB (400), or count × the stored size of one build over
 * --max-build-batch-mb (413). One request with count 10,000 and 1 MiB of commands once wrote 635 MB.
 */
export function checkBuildBatch(input: NewBuild, count: number, maxBatchBytes: number): void {
  for (const [field, value] of Object.entries(input)) refuseNul(field, value);
  const options = Buffer.byteLength(JSON.stringify(input.options));
  if (options > MAX_OPTIONS_BYTES) throw badRequest(`options is ${(options / MiB).toFixed(1)} MiB as JSON; at most 1 MiB`);
  const one = Buffer.byteLength(JSON.stringify(input)) + ROW_OVERHEAD;
  if (one * count > maxBatchBytes) {
    const mib = (n: number) => (n / MiB).toFixed(1);
    throw new ApiError(
      413,
      `413 Request Entity Too Large - ${count} builds of ${one} bytes each make ${mib(one * count)} MiB, over the ${mib(maxBatchBytes)} MiB one request may create (--max-build-batch-mb); send fewer builds per request`,
    );
  }
}

/**
 * Refuses a `depends_on` naming a build that does not exist or belongs to another project: the
 * runner would be handed a dependency it cannot fetch (GitLab's dependencies are builds of earlier
 * stages of the same pipeline).
 */
export async function checkDependencies(builds: BuildsDomain, input: NewBuild): Promise<void> {
  if (input.depends_on.length === 0) return;
  const found = new Map((await builds.byIds(input.depends_on)).map((b) => [b.id, b]));
  const missing = input.depends_on.filter((id) => !found.has(id));
  if (missing.length > 0) throw badRequest(`depends_on names ${missing.length === 1 ? 'build' : 'builds'} ${missing.join(', ')} that ${missing.length === 1 ? 'does' : 'do'} not exist; name existing builds of this project`);
  const foreign = input.depends_on.filter((id) => found.get(id)!.project_id !== input.project_id);
  if (foreign.length > 0) throw badRequest(`depends_on names ${foreign.length === 1 ? 'build' : 'builds'} ${foreign.join(', ')} of another project; name builds of project ${input.project_id}`);
}
