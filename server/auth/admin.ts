// Who may use the control and metrics APIs: the instance admin token, or an admin user's token.
// Header PRIVATE-TOKEN or query private_token, as GitLab's API took them.
import type { FastifyRequest } from 'fastify';
import type { Store } from '../store/index.ts';
import { asToken, safeEqual } from './tokens.ts';
import { forbidden, unauthorized } from '../http/errors.ts';
import { andThen, type MaybePromise } from '../domain/maybe-promise.ts';

export function privateTokenOf(request: FastifyRequest): string | undefined {
  const q = request.query as Record<string, unknown> | undefined;
  return asToken(request.headers['private-token']) ?? asToken(q?.private_token);
}

/**
 * 401 for no or unknown token (runner and CI tokens are not user tokens), 403 for a non-admin user.
 * Users come from store.tokenUsers: the SQLite file, or in database mode the database (a promise
 * then, which the callers' async hooks await).
 */
export function requireAdmin(store: Store, request: FastifyRequest): MaybePromise<void> {
  const token = privateTokenOf(request);
  if (!token) throw unauthorized();
  if (safeEqual(token, store.adminToken)) return;
  return andThen(store.tokenUsers.byToken(token), (user) => {
    if (!user) throw unauthorized();
    if (!user.admin) throw forbidden();
  });
}
