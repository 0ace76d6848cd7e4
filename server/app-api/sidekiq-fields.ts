// The app API's reading of a sidekiq connection's fields: the Redis URL and its password (kept like
// a GitLab token: split off, stored, never answered), the namespace, and the 400s a person can act on.
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import type { Connection, ConnectionFields } from '../store/ports/monitor-ports.ts';
import { badRequest } from '../http/errors.ts';
import { refuseControlChars } from '../outbound/control-chars.ts';
import { normalizeRedisUrl, redisHost, redisOrigin, type RedisTarget } from '../sidekiq/redis-url.ts';

export function sidekiqTargetOrThrow(redisUrl: string, password: string | undefined, namespace: string | undefined): RedisTarget {
  refuseControlChars({ password, namespace });
  const u = normalizeRedisUrl(redisUrl);
  if ('error' in u) throw badRequest(`redis_url: ${u.error}`);
  if (password !== undefined && u.password && password !== u.password) {
    throw badRequest('the password is in redis_url and in password, and they differ: give it once');
  }
  return { url: u.url, password: password ?? u.password, namespace: namespace ?? '' };
}

interface SidekiqPatchBody {
  name?: string;
  interval_s?: number;
  enabled?: boolean;
  base_url?: string;
  private_token?: string;
  api_version?: string;
  segment?: string;
  redis_url?: string;
  password?: string;
  namespace?: string;
  allow_changes?: boolean;
}

/** A PATCH of a sidekiq connection; a new Redis server needs the password again (it is only sent where it was given for). */
export function sidekiqPatch(c: Connection, p: SidekiqPatchBody): Partial<ConnectionFields> {
  if (p.base_url !== undefined || p.private_token !== undefined || p.api_version !== undefined || p.segment !== undefined) {
    throw badRequest('a sidekiq connection takes redis_url, password and namespace, not base_url, private_token, api_version or segment');
  }
  refuseControlChars({ password: p.password, namespace: p.namespace });
  let baseUrl: string | undefined;
  let token = p.password;
  let allowChanges = p.allow_changes;
  if (p.redis_url !== undefined) {
    const t = sidekiqTargetOrThrow(p.redis_url, p.password, undefined);
    baseUrl = t.url;
    if (t.password) token = t.password;
    const moved = redisOrigin(baseUrl) !== redisOrigin(c.baseUrl);
    if (moved && token === undefined && c.token) {
      throw badRequest(
        `redis_url: moving this connection from ${c.baseUrl ? redisHost(c.baseUrl) : 'nowhere'} to ${redisHost(baseUrl)} needs its password again: ` +
          'send password (or put it in the URL); the stored one is only sent to the server it was given for',
      );
    }
    // A new server without a password given: the old one must not follow it there.
    if (moved && token === undefined) token = '';
    // Changes were allowed on one server's data: another server starts read-only unless told again.
    if (moved && allowChanges === undefined) allowChanges = false;
  }
  return {
    name: p.name?.trim() || undefined,
    baseUrl,
    token,
    segment: p.namespace,
    intervalS: p.interval_s,
    enabled: p.enabled,
    allowChanges,
  };
}

/**
 * Ajv reports every branch of a union body; the person sent one kind. The sidekiq branch fails on
 * `kind` (missing or another value) when the body is a GitLab one: then only the GitLab branch's complaints are told, else the
 * sidekiq branch's.
 */
export function unionErrors(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const branch = (n: number) => errors.filter((e) => e.schemaPath.startsWith(`#/anyOf/${n}/`));
  const sidekiq = branch(1);
  const notSidekiq = sidekiq.some((e) => e.instancePath === '/kind' || (e.keyword === 'required' && (e.params as { missingProperty?: string }).missingProperty === 'kind'));
  const chosen = notSidekiq ? branch(0) : sidekiq;
  const shown = chosen.length ? chosen : errors.filter((e) => e.keyword !== 'anyOf');
  return new Error(shown.map((e) => `${dataVar}${e.instancePath} ${e.message ?? 'is not valid'}`).join(', '));
}
