// The monitor's SidekiqSource per sidekiq connection: made on first use, replaced when the
// connection's URL, password or namespace changes, closed when it is removed or the server stops.
import type { Connection } from '../store/ports/monitor-ports.ts';
import { SidekiqSource, type SidekiqSourceOptions } from './source.ts';
import type { RedisTarget } from './redis-url.ts';
import type { Config } from '../config.ts';
import { replyBoundsOf } from '../redis/bounded-client.ts';
import { policyOf } from '../outbound/policy.ts';

/** Day counters a sidekiq connection reads back (Sidekiq Web's default history graph is 30 days). */
const SIDEKIQ_DAYS = 30;

/** A sidekiq connection's read options from the config, read at each use (settings may change). */
export function sidekiqOptionsOf(config: Config): SidekiqSourceOptions {
  const outbound = policyOf(config);
  return {
    timeoutMs: config.sidekiqTimeoutMs,
    limits: { maxQueues: config.sidekiqMaxQueues, maxProcesses: config.sidekiqMaxProcesses, days: SIDEKIQ_DAYS, maxNameBytes: config.sampleMaxNameBytes },
    reply: replyBoundsOf(config),
    // ioredis would resolve the host itself: where the policy restricts, the socket takes its lookup,
    // so a name that answers an allowed address at the check and another at the connect (DNS
    // rebinding) still reaches only an allowed one.
    lookup: outbound.open ? undefined : outbound.lookup,
  };
}

export function targetOfConnection(c: Pick<Connection, 'baseUrl' | 'token' | 'segment'>): RedisTarget {
  return { url: c.baseUrl ?? '', password: c.token ?? '', namespace: c.segment };
}

const sameTarget = (a: RedisTarget, b: RedisTarget) => a.url === b.url && a.password === b.password && a.namespace === b.namespace;

export class SidekiqSources {
  private readonly sources = new Map<string, SidekiqSource>();

  constructor(private readonly options: () => SidekiqSourceOptions) {}

  of(c: Connection): SidekiqSource {
    const target = targetOfConnection(c);
    const had = this.sources.get(c.id);
    if (had && sameTarget(had.target, target)) return had;
    had?.close();
    const s = new SidekiqSource(target, this.options());
    this.sources.set(c.id, s);
    return s;
  }

  /** A source for a connection not saved yet (the form's Test button); the caller closes it. */
  transient(target: RedisTarget): SidekiqSource {
    return new SidekiqSource(target, this.options());
  }

  drop(id: string): void {
    this.sources.get(id)?.close();
    this.sources.delete(id);
  }

  closeAll(): void {
    for (const s of this.sources.values()) s.close();
    this.sources.clear();
  }
}
