// The two credentials of the runner API: the runner token (register, update) and the build token
// (trace, artifacts), where a build's own token, its project's runners_token and ci_token all count.
import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Runner } from '../store/ports/runner.ts';
import type { Build, BuildCredentials } from '../store/ports/build.ts';
import { asToken, tokenDigestBytes } from '../auth/tokens.ts';
import { forbidden } from '../http/errors.ts';
import type { Params } from '../http/params.ts';
import { andThen, type MaybePromise } from '../domain/maybe-promise.ts';

/** GitLab's `authenticate_runner!`: a missing or unknown token is 403, not 400. */
export function authenticateRunner(ctx: AppContext, params: Params): MaybePromise<Runner> {
  return andThen(ctx.domain.runners.byToken(runnerToken(params)), knownRunner);
}

/** The request's runner token; a missing one is 403. */
export function runnerToken(params: Params): string {
  const token = asToken(params.token);
  if (!token) throw forbidden();
  return token;
}

/** The runner the token named; none is 403, as a missing token. */
export function knownRunner(runner: Runner | undefined): Runner {
  if (!runner) throw forbidden();
  return runner;
}

export function buildTokenOf(request: FastifyRequest, params: Params): string | undefined {
  return asToken(params.token) ?? asToken(request.headers['build-token']);
}

/**
 * The three stored SHA-256 digests of a build's credentials, decoded once per credentials object
 * (the store caches those while a build streams its trace, so each part skips three hex decodings).
 */
const decoded = new WeakMap<BuildCredentials, [Buffer, Buffer, Buffer]>();
const EMPTY = Buffer.alloc(32);

function digestsOf(cred: BuildCredentials): [Buffer, Buffer, Buffer] {
  let d = decoded.get(cred);
  if (!d) {
    // A malformed stored digest decodes short: it is replaced by one no token hashes to.
    const dec = (hex: string) => (typeof hex === 'string' && hex.length === 64 ? Buffer.from(hex, 'hex') : EMPTY);
    d = [dec(cred.token_sha), dec(cred.runners_token_sha), dec(cred.ci_token_sha)];
    decoded.set(cred, d);
  }
  return d;
}

/**
 * The build's own token, its project's runners_token or its ci_token (GitLab's `build_token_valid?`).
 * Synchronous when given the credentials (the trace path); a build's are looked up, maybe a promise.
 */
export function buildTokenValid(ctx: AppContext, build: Pick<Build, 'id'> | BuildCredentials, token: string | undefined): MaybePromise<boolean> {
  if (!token) return false;
  if ('runners_token_sha' in build) return credentialsMatch(build, token);
  return andThen(ctx.domain.builds.credentials(build.id), (cred) => cred !== undefined && credentialsMatch(cred, token));
}

export function credentialsMatch(cred: BuildCredentials, token: string | undefined): boolean {
  if (!token) return false;
  // The same SHA-256 as auth/tokens.ts digest(), as bytes, hashed once per token string (not per part).
  const presented = tokenDigestBytes(token);
  const [own, runners, ci] = digestsOf(cred);
  // Evaluate all three, constant-time, so the time taken does not say which one matched (or how much).
  const a = crypto.timingSafeEqual(presented, own);
  const b = crypto.timingSafeEqual(presented, runners);
  const c = crypto.timingSafeEqual(presented, ci);
  return a || b || c;
}

export async function authenticateBuild(ctx: AppContext, request: FastifyRequest, params: Params, build: Pick<Build, 'id'> | BuildCredentials): Promise<void> {
  if (!(await buildTokenValid(ctx, build, buildTokenOf(request, params)))) throw forbidden();
}
