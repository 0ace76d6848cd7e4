// The two credentials of the runner API: the runner token (register, update) and the build token
// (trace, artifacts), where a build's own token, its project's runners_token and ci_token all count.
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Runner } from '../store/runners.ts';
import type { Build, BuildCredentials } from '../store/builds.ts';
import { asToken, digest, digestEqual } from '../auth/tokens.ts';
import { forbidden } from '../http/errors.ts';
import type { Params } from '../http/params.ts';

/** GitLab's `authenticate_runner!`: a missing or unknown token is 403, not 400. */
export function authenticateRunner(ctx: AppContext, params: Params): Runner {
  const token = asToken(params.token);
  const runner = token ? ctx.store.runners.byToken(token) : undefined;
  if (!runner) throw forbidden();
  return runner;
}

export function buildTokenOf(request: FastifyRequest, params: Params): string | undefined {
  return asToken(params.token) ?? asToken(request.headers['build-token']);
}

/** The build's own token, its project's runners_token or its ci_token (GitLab's `build_token_valid?`). */
export function buildTokenValid(ctx: AppContext, build: Pick<Build, 'id'> | BuildCredentials, token: string | undefined): boolean {
  if (!token) return false;
  const cred = 'runners_token_sha' in build ? build : ctx.store.builds.credentials(build.id);
  if (!cred) return false;
  const presented = digest(token);
  // Evaluate all three so the time taken does not say which one matched.
  const own = digestEqual(presented, cred.token_sha);
  const runners = digestEqual(presented, cred.runners_token_sha);
  const ci = digestEqual(presented, cred.ci_token_sha);
  return own || runners || ci;
}

export function authenticateBuild(ctx: AppContext, request: FastifyRequest, params: Params, build: Pick<Build, 'id'> | BuildCredentials): void {
  if (!buildTokenValid(ctx, build, buildTokenOf(request, params))) throw forbidden();
}
