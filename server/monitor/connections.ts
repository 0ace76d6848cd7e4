// The watched connections (stored through ConnectionsRepo, store/ports/monitor-ports.ts). The embedded one
// (this server) always exists; remote GitLab instances carry a PRIVATE-TOKEN that stays in the
// backend: `view()` is what leaves it.
import crypto from 'node:crypto';
import type { ConnectionView, Thresholds } from '../../contract/app.ts';
import type { Connection, ConnectionFields, ConnectionsRepo } from '../store/ports/monitor-ports.ts';
import type { Clock } from '../clock.ts';
import { andThen, type Loose, type MaybePromise } from '../domain/maybe-promise.ts';
import type { Answer, Answers } from './ownership.ts';
import type { RemoteTarget } from './remote-client.ts';
import { isLoopbackHost } from '../host-address.ts';
import { isoTime, isoTimeOr0 } from '../util/times.ts';
import { passwordWarnings } from '../sidekiq/redis-url.ts';

export const EMBEDDED_ID = 'embedded';
export const DEFAULT_INTERVAL_S = 5;

export type { Connection };

/**
 * A URL host a token sent to never crosses a network: a loopback host (host-address.ts), and also the
 * forms a URL may spell one in (`x.localhost`, which browsers and resolvers keep local, a trailing
 * dot, IPv4-mapped ::ffff:127.x).
 */
function staysOnThisMachine(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return isLoopbackHost(h) || h.endsWith('.localhost') || h === '::ffff:127.0.0.1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(h);
}

/** What a person should know before the stored token is sent to this URL. */
export function tokenWarnings(baseUrl: string | null, hasToken: boolean): string[] {
  if (!baseUrl || !hasToken) return [];
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    return [];
  }
  if (u.protocol !== 'http:' || staysOnThisMachine(u.hostname)) return [];
  return [`the PRIVATE-TOKEN goes to ${u.host} over plain http: anyone on the network path can read it; use https://`];
}

/** Scheme, host and port: a stored token is only ever sent to the origin it was given for. */
export function originOf(baseUrl: string | null): string | null {
  if (!baseUrl) return null;
  try {
    return new URL(baseUrl).origin;
  } catch {
    return null;
  }
}

/** This server's own job system is always the user's to act on; a watched Sidekiq only once they allowed it; a GitLab has no actions. */
export function changesAllowed(c: Connection): boolean {
  return c.kind === 'embedded' || (c.kind === 'sidekiq' && c.allowChanges);
}

export function view(c: Connection): ConnectionView {
  const hasToken = c.token !== null && c.token !== '';
  return {
    id: c.id,
    name: c.name,
    kind: c.kind,
    base_url: c.baseUrl,
    api_version: c.apiVersion,
    segment: c.segment,
    interval_s: c.intervalS,
    enabled: c.enabled,
    allow_changes: changesAllowed(c),
    ...(c.kind === 'sidekiq' ? { namespace: c.segment } : {}),
    has_token: hasToken,
    warnings: c.kind === 'sidekiq' ? passwordWarnings(c.baseUrl, hasToken, staysOnThisMachine) : tokenWarnings(c.baseUrl, hasToken),
    last_sample_at: isoTime(c.lastSampleAt),
    last_error: c.lastError,
    created_at: isoTimeOr0(c.createdAt),
  };
}

export function targetOf(c: Connection): RemoteTarget {
  return { baseUrl: c.baseUrl ?? '', token: c.token ?? '', apiVersion: c.apiVersion, segment: c.segment };
}

/**
 * The repo plus what the monitor decides itself: ids, creation times, the embedded row, and the
 * changes its ownership policy announces. Answers as the store does (`A`): at once on SQLite.
 */
export class Connections<A extends Answers = 'now'> {
  constructor(
    private readonly repo: Loose<ConnectionsRepo>,
    private readonly clock: Clock,
    private readonly announce: (id: string) => MaybePromise<void>,
  ) {}

  /** Creates the connection to this server unless it exists (it can be changed, never deleted). */
  ensureEmbedded(): Answer<A, void> {
    return this.repo.ensureEmbedded(EMBEDDED_ID, DEFAULT_INTERVAL_S, this.clock.now()) as Answer<A, void>;
  }

  list(): Answer<A, Connection[]> {
    return this.repo.list() as Answer<A, Connection[]>;
  }

  get(id: string): Answer<A, Connection | undefined> {
    return this.repo.get(id) as Answer<A, Connection | undefined>;
  }

  create(c: ConnectionFields & { baseUrl: string; token: string; kind?: 'gitlab' | 'sidekiq' }): Answer<A, Connection> {
    const prefix = c.kind === 'sidekiq' ? 'sk' : 'gl';
    const made = this.repo.create(`${prefix}-${crypto.randomBytes(5).toString('hex')}`, c, this.clock.now());
    return andThen(made, (m) => andThen(this.announce(m.id), () => m)) as Answer<A, Connection>;
  }

  update(id: string, patch: Partial<ConnectionFields>): Answer<A, Connection | undefined> {
    return andThen(this.repo.update(id, patch), (c) => (c ? andThen(this.announce(id), () => c) : c)) as Answer<A, Connection | undefined>;
  }

  /** Not announced: the sampling instance reads the connection (thresholds too) afresh at every sample. */
  setThresholds(id: string, t: Thresholds): Answer<A, void> {
    return this.repo.setThresholds(id, t) as Answer<A, void>;
  }

  lastSample(id: string): Answer<A, { at: number; json: string } | undefined> {
    return this.repo.lastSample(id) as Answer<A, { at: number; json: string } | undefined>;
  }

  remove(id: string): Answer<A, boolean> {
    return andThen(this.repo.remove(id), (gone) => (gone ? andThen(this.announce(id), () => gone) : gone)) as Answer<A, boolean>;
  }
}
