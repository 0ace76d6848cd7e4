// Defaults for a build created through the control API: what GitLab would have put in a pipeline's
// first build of a fresh project, with a sha long enough for the runner's sha[0:8].
import crypto from 'node:crypto';
import type { NewBuild as NewBuildBody } from '../contract/control.ts';
import type { NewBuild, Variable } from '../store/builds.ts';
import { parseTagList } from '../runner-api/runners.ts';

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
