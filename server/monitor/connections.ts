// The watched connections (stored through ConnectionsRepo, store/ports/monitor-ports.ts). The embedded one
// (this server) always exists; remote GitLab instances carry a PRIVATE-TOKEN that stays in the
// backend: `view()` is what leaves it.
import crypto from 'node:crypto';
import type { ConnectionView, Thresholds } from '../../contract/app.ts';
import type { Connection, ConnectionFields, ConnectionsRepo } from '../store/ports/monitor-ports.ts';
import type { Clock } from '../clock.ts';
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

/** The repo plus what the monitor decides itself: ids, creation times, the embedded row. */
export class Connections {
  constructor(
    private readonly repo: ConnectionsRepo,
    private readonly clock: Clock,
  ) {
    repo.ensureEmbedded(EMBEDDED_ID, DEFAULT_INTERVAL_S, clock.now());
  }

  list(): Connection[] {
    return this.repo.list();
  }

  get(id: string): Connection | undefined {
    return this.repo.get(id);
  }

  create(c: ConnectionFields & { baseUrl: string; token: string; kind?: 'gitlab' | 'sidekiq' }): Connection {
    const prefix = c.kind === 'sidekiq' ? 'sk' : 'gl';
    return this.repo.create(`${prefix}-${crypto.randomBytes(5).toString('hex')}`, c, this.clock.now());
  }

  update(id: string, patch: Partial<ConnectionFields>): Connection | undefined {
    return this.repo.update(id, patch);
  }

  setThresholds(id: string, t: Thresholds): void {
    this.repo.setThresholds(id, t);
  }

  /** Health after a sample. The full sample (kept so `current` survives a restart) is passed only now and then. */
  setHealth(id: string, at: number, error: string | null, sampleJson?: string): void {
    this.repo.setHealth(id, at, error, sampleJson);
  }

  lastSample(id: string): { at: number; json: string } | undefined {
    return this.repo.lastSample(id);
  }

  remove(id: string): boolean {
    return this.repo.remove(id);
  }
}
