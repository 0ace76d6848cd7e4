// The watched connections, kept in the database. The embedded one (this server) always exists;
// remote GitLab instances carry a PRIVATE-TOKEN that stays here: `view()` is what leaves the backend.
import crypto from 'node:crypto';
import type { Db } from '../store/db.ts';
import type { ConnectionView, Thresholds } from '../contract/app.ts';
import type { RemoteTarget } from './remote-client.ts';

export const EMBEDDED_ID = 'embedded';
export const DEFAULT_INTERVAL_S = 5;

export interface Connection {
  id: string;
  name: string;
  kind: 'embedded' | 'gitlab';
  baseUrl: string | null;
  token: string | null;
  apiVersion: 'v3' | 'v4';
  segment: string;
  intervalS: number;
  enabled: boolean;
  thresholds: Thresholds;
  lastSampleAt: number | null;
  lastError: string | null;
  createdAt: number;
}

interface Row {
  id: string;
  name: string;
  kind: string;
  base_url: string | null;
  private_token: string | null;
  api_version: string;
  segment: string;
  interval_s: number;
  enabled: number;
  thresholds: string;
  last_sample_at: number | null;
  last_error: string | null;
  created_at: number;
}

function fromRow(r: Row): Connection {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind === 'embedded' ? 'embedded' : 'gitlab',
    baseUrl: r.base_url,
    token: r.private_token,
    apiVersion: r.api_version === 'v3' ? 'v3' : 'v4',
    segment: r.segment,
    intervalS: r.interval_s,
    enabled: r.enabled === 1,
    thresholds: parseThresholds(r.thresholds),
    lastSampleAt: r.last_sample_at,
    lastError: r.last_error,
    createdAt: r.created_at,
  };
}

function parseThresholds(text: string): Thresholds {
  try {
    const t = JSON.parse(text) as Thresholds;
    return { ...t, queues: t.queues ?? {} };
  } catch {
    return { queues: {} };
  }
}

/** Loopback names and addresses: a token sent there never crosses a network. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::1' || h === '::ffff:127.0.0.1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(h);
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
  if (u.protocol !== 'http:' || isLoopbackHost(u.hostname)) return [];
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
    has_token: hasToken,
    warnings: tokenWarnings(c.baseUrl, hasToken),
    last_sample_at: c.lastSampleAt === null ? null : new Date(c.lastSampleAt).toISOString(),
    last_error: c.lastError,
    created_at: new Date(c.createdAt).toISOString(),
  };
}

export function targetOf(c: Connection): RemoteTarget {
  return { baseUrl: c.baseUrl ?? '', token: c.token ?? '', apiVersion: c.apiVersion, segment: c.segment };
}

export class Connections {
  constructor(private readonly db: Db) {
    this.db.run(
      `INSERT OR IGNORE INTO monitor_connections (id, name, kind, api_version, segment, interval_s, enabled, created_at)
       VALUES (?, 'This Jobscope', 'embedded', 'v4', 'sidekiq', ?, 1, ?)`,
      [EMBEDDED_ID, DEFAULT_INTERVAL_S, Date.now()],
    );
  }

  list(): Connection[] {
    return this.db
      .all<Row>("SELECT * FROM monitor_connections ORDER BY kind = 'embedded' DESC, created_at, id")
      .map(fromRow);
  }

  get(id: string): Connection | undefined {
    const r = this.db.get<Row>('SELECT * FROM monitor_connections WHERE id = ?', [id]);
    return r ? fromRow(r) : undefined;
  }

  create(c: { name: string; baseUrl: string; token: string; apiVersion: 'v3' | 'v4'; segment: string; intervalS: number; enabled: boolean }): Connection {
    const id = `gl-${crypto.randomBytes(5).toString('hex')}`;
    this.db.run(
      `INSERT INTO monitor_connections (id, name, kind, base_url, private_token, api_version, segment, interval_s, enabled, created_at)
       VALUES (?, ?, 'gitlab', ?, ?, ?, ?, ?, ?, ?)`,
      [id, c.name, c.baseUrl, c.token, c.apiVersion, c.segment, c.intervalS, c.enabled ? 1 : 0, Date.now()],
    );
    return this.get(id)!;
  }

  update(id: string, patch: Partial<Pick<Connection, 'name' | 'baseUrl' | 'token' | 'apiVersion' | 'segment' | 'intervalS' | 'enabled'>>): Connection | undefined {
    const cols: Record<string, string> = {
      name: 'name',
      baseUrl: 'base_url',
      token: 'private_token',
      apiVersion: 'api_version',
      segment: 'segment',
      intervalS: 'interval_s',
      enabled: 'enabled',
    };
    const sets: string[] = [];
    const values: (string | number | null)[] = [];
    for (const [key, col] of Object.entries(cols)) {
      const v = patch[key as keyof typeof patch];
      if (v === undefined) continue;
      sets.push(`${col} = ?`);
      values.push(typeof v === 'boolean' ? (v ? 1 : 0) : v);
    }
    if (sets.length) this.db.run(`UPDATE monitor_connections SET ${sets.join(', ')} WHERE id = ?`, [...values, id]);
    return this.get(id);
  }

  setThresholds(id: string, t: Thresholds): void {
    this.db.run('UPDATE monitor_connections SET thresholds = ? WHERE id = ?', [JSON.stringify(t), id]);
  }

  /** Health after a sample. The full sample (kept so `current` survives a restart) is passed only now and then. */
  setHealth(id: string, at: number, error: string | null, sampleJson?: string): void {
    if (error !== null) this.db.run('UPDATE monitor_connections SET last_error = ? WHERE id = ?', [error, id]);
    else if (sampleJson !== undefined) this.db.run('UPDATE monitor_connections SET last_sample_at = ?, last_error = NULL, last_sample = ? WHERE id = ?', [at, sampleJson, id]);
    else this.db.run('UPDATE monitor_connections SET last_sample_at = ?, last_error = NULL WHERE id = ?', [at, id]);
  }

  lastSample(id: string): { at: number; json: string } | undefined {
    const r = this.db.get<{ last_sample_at: number | null; last_sample: string | null }>(
      'SELECT last_sample_at, last_sample FROM monitor_connections WHERE id = ?',
      [id],
    );
    return r?.last_sample && r.last_sample_at !== null ? { at: r.last_sample_at, json: r.last_sample } : undefined;
  }

  remove(id: string): boolean {
    return this.db.run("DELETE FROM monitor_connections WHERE id = ? AND kind != 'embedded'", [id]).changes > 0;
  }
}
