// What a build is, as every store adapter reads and writes it and every layer above passes it on.
import type { Runner } from './runner.ts';

export type BuildStatus = 'pending' | 'running' | 'success' | 'failed' | 'canceled';

export const FINISHED: readonly BuildStatus[] = ['success', 'failed', 'canceled'];

export interface Variable {
  key: string;
  value: string;
  public: boolean;
}

/** A build as stored: what it was created with, and what dispatch, the runner and artifacts add. */
export interface Build extends NewBuild {
  id: number;
  runner_id: number | null;
  status: BuildStatus;
  token: string;
  artifacts_key: string | null;
  artifacts_filename: string | null;
  artifacts_size: number | null;
  artifacts_expire_at: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

export interface ArchiveEntry {
  name: string;
  size: number;
}

export interface NewBuild {
  project_id: number;
  name: string;
  stage: string;
  ref: string;
  sha: string;
  before_sha: string;
  tag: boolean;
  commands: string;
  repo_url: string | null;
  variables: Variable[];
  options: Record<string, unknown>;
  timeout: number | null;
  tag_list: string[];
  depends_on: number[];
}

export interface BuildCredentials {
  id: number;
  project_id: number;
  status: BuildStatus;
  token_sha: string;
  runners_token_sha: string;
  ci_token_sha: string;
}

export interface BuildFilter {
  status?: BuildStatus;
  project_id?: number;
  runner_id?: number;
  limit?: number;
  before_id?: number;
}

/** How many builds one listing returns: 100 unless the filter asks, never below 1 nor above 1000. */
export const listLimit = (f: BuildFilter): number => Math.min(Math.max(f.limit ?? 100, 1), 1000);

/** A runner may take a build when every tag of the build is one of the runner's (GitLab's `can_pick?`). */
export function runnerMatches(runner: Pick<Runner, 'tag_list' | 'run_untagged'>, build: Pick<Build, 'tag_list'>): boolean {
  if (build.tag_list.length === 0) return runner.run_untagged;
  return build.tag_list.every((t) => runner.tag_list.includes(t));
}
