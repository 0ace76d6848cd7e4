// A sidekiq connection as a MetricsSource (metrics/source.ts): one ioredis client per
// connection, read with read.ts (the read script, or the pipelines where Redis refuses scripts). A
// Redis that is down, refuses us or stays silent fails this read within `timeoutMs` with a sentence
// saying why (errors.ts); the client is dropped then and made afresh next time, so nothing queues up
// behind a dead socket and no other connection waits on it.
import type { Redis } from 'ioredis';
import type { CompoundMetrics } from '../../contract/metrics.ts';
import type { SidekiqExtras } from '../../contract/sidekiq.ts';
import type { MetricsSource, MetricsView, ProcessStats, QueueStats } from '../metrics/source.ts';
import { compoundOf } from '../metrics-api/compound.ts';
import { msOfRubyTime } from '../metrics-api/started-at.ts';
import { readSidekiq, type ReadLimits, type ScriptMemo, type SidekiqSnapshot } from './read.ts';
import { describeRedisError, RedisTimeout } from './errors.ts';
import { redisHost, type RedisTarget } from './redis-url.ts';
import { emptyNamespaceMessage, namespacesWithData } from './namespaces.ts';
import { boundedOptions, type ReplyBounds, type ReplyTooLarge } from '../redis/bounded-client.ts';
import { StorageError } from '../store/ports/storage-error.ts';
import type { LookupFunction } from 'node:net';

export interface SidekiqSourceOptions {
  timeoutMs: number;
  limits: ReadLimits;
  /** Bounds on each reply: past them the read fails and the connection is dropped. */
  reply: ReplyBounds;
  /** The outbound policy's resolver where it restricts (a server not bound to loopback). */
  lookup?: LookupFunction;
  now?: () => number;
}

export type SidekiqMetrics = CompoundMetrics & { sidekiq: SidekiqExtras };

export interface SidekiqOutcome {
  ok: boolean;
  message: string;
  latencyMs: number;
  metrics: SidekiqMetrics | null;
  /** The Redis gave no answer within the timeout (frozen, overloaded): a request waiting on it gets a 503. */
  timedOut?: boolean;
  /** Reachable, but nothing to watch there (no Sidekiq data under the namespace): not an OK. */
  warning?: boolean;
}

/** The options ioredis gets: no retries, no offline queue, no INFO ready check (a read-only ACL user may lack it). */
export function clientOptions(target: RedisTarget, timeoutMs: number, reply: ReplyBounds, onRefused?: (err: ReplyTooLarge) => void, lookup?: LookupFunction) {
  const u = new URL(target.url);
  return boundedOptions({ ...reply, commandTimeoutMs: timeoutMs }, {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 6379,
    db: Number(u.pathname.replace(/^\//, '') || 0),
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: target.password || undefined,
    tls: u.protocol === 'rediss:' ? { servername: u.hostname } : undefined,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    enableReadyCheck: false,
    connectionName: 'jobscope-readonly',
  }, onRefused, lookup);
}

export function viewOf(s: SidekiqSnapshot): MetricsView {
  const queues: QueueStats[] = s.queues.map((q) => ({
    name: q.name,
    backlog: q.size,
    // Sidekiq's Queue#latency (now - enqueued_at of the tail) and GitLab's `.to_i`.
    latency: (now: number) => (q.oldestEnqueuedAt === null ? 0 : Math.trunc(now / 1000 - q.oldestEnqueuedAt)),
  }));
  const processes: ProcessStats[] = s.processes.map((p) => ({
    identity: { hostname: p.info.hostname, pid: p.info.pid, tag: p.info.tag, labels: p.info.labels },
    startedAt: msOfRubyTime(p.info.started_at),
    concurrency: p.info.concurrency,
    busy: p.busy,
    version: 0,
    queueNames: () => p.info.queues,
  }));
  return {
    queues: () => queues,
    processes: () => processes,
    counters: () => ({ processed: s.processed, failed: s.failed }),
    sets: () => ({ retry: s.retrySize, scheduled: s.scheduledSize, dead: s.deadSize }),
  };
}

export function extrasOf(s: SidekiqSnapshot): SidekiqExtras {
  return {
    retry_size: s.retrySize,
    scheduled_size: s.scheduledSize,
    dead_size: s.deadSize,
    process_details: s.processes.map((p) => ({ identity: p.identity, quiet: p.quiet, stopping: p.stopping, beat: p.beat, rss_kb: p.rssKb })),
    days: s.days,
    queues_total: s.queuesTotal,
    processes_total: s.processesTotal,
  };
}

export function metricsOf(s: SidekiqSnapshot): SidekiqMetrics {
  return { ...compoundOf(viewOf(s), s.at), sidekiq: extrasOf(s) };
}

export class SidekiqSource implements MetricsSource {
  private client: Redis | null = null;
  private connecting: Promise<Redis> | null = null;
  /** Why the guard dropped the current client's socket: the read's error, instead of "Connection is closed". */
  private refused: ReplyTooLarge | null = null;
  private readonly host: string;
  private readonly clock: () => number;
  /** Kept across clients: a Redis that refused the read script is read with pipelines a while. */
  private readonly script: ScriptMemo = { refused: null };

  constructor(
    readonly target: RedisTarget,
    private readonly opts: SidekiqSourceOptions,
  ) {
    this.host = redisHost(target.url);
    this.clock = opts.now ?? Date.now;
  }

  now(): number {
    return this.clock();
  }

  get timeoutMs(): number {
    return this.opts.timeoutMs;
  }

  /**
   * A connected client, made afresh after a failure. Callers that come while it connects (a page's
   * read while a sample connects) share that connection: making another would drop the first's
   * socket under the caller already waiting on it.
   */
  redis(): Promise<Redis> {
    if (this.client && this.client.status === 'ready') return Promise.resolve(this.client);
    if (this.connecting) return this.connecting;
    const connecting = this.connect().finally(() => {
      if (this.connecting === connecting) this.connecting = null;
    });
    this.connecting = connecting;
    return connecting;
  }

  private async connect(): Promise<Redis> {
    // Loaded on the first sidekiq connection only: ioredis costs every server ~20 MiB of RSS at idle.
    const { Redis } = await import('ioredis');
    this.client?.disconnect();
    this.refused = null;
    const c = new Redis(
      clientOptions(
        this.target,
        this.opts.timeoutMs,
        this.opts.reply,
        (err) => {
          this.refused = err;
        },
        this.opts.lookup,
      ),
    );
    // Without retries, connect() rejects with a bare "Connection is closed"; the reason (refused,
    // WRONGPASS, NOAUTH…) comes as an 'error' event, which is also what keeps ioredis from printing it.
    let reason: unknown = null;
    c.on('error', (err: unknown) => {
      reason ??= err;
    });
    this.client = c;
    try {
      await c.connect();
    } catch (err) {
      throw reason ?? err;
    }
    return c;
  }

  /** Runs `fn` on the client within the timeout; any failure drops the client. */
  async use<T>(fn: (r: Redis) => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RedisTimeout(this.opts.timeoutMs)), this.opts.timeoutMs);
    });
    try {
      return await Promise.race([this.redis().then(fn), deadline]);
    } catch (err) {
      const refused = this.refused;
      this.drop();
      throw refused ?? err;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * `use` for a request someone waits on: a Redis that gives no answer in time is a 503 with
   * Retry-After (StorageError), any other failure `otherwise(sentence)`.
   */
  async forRequest<T>(fn: (r: Redis) => Promise<T>, otherwise: (sentence: string) => Error): Promise<T> {
    try {
      return await this.use(fn);
    } catch (err) {
      if (isTimeout(err)) throw new StorageError('unavailable', this.describe(err), retryAfterS(this.opts.timeoutMs), { cause: err });
      throw otherwise(this.describe(err));
    }
  }

  async snapshot(): Promise<SidekiqSnapshot> {
    return this.use((r) => readSidekiq(r, this.target.namespace, this.opts.limits, this.clock, this.script));
  }

  async read(): Promise<MetricsView> {
    return viewOf(await this.snapshot());
  }

  /**
   * One sample for the monitor: never throws; a failure is a message naming the host, never the
   * password. `lookAround` (the Test button): when the namespace holds no Sidekiq data, a bounded
   * search says which namespaces do.
   */
  async sample(lookAround = false): Promise<SidekiqOutcome> {
    const started = performance.now();
    const took = () => Math.round((performance.now() - started) * 10) / 10;
    try {
      const s = await this.snapshot();
      if (hasNoSidekiqData(s)) {
        // A Redis whose ACL refuses SCAN still gets the warning, without the list.
        const found = lookAround ? await this.use((r) => namespacesWithData(r)).catch(() => null) : null;
        return { ok: true, warning: true, message: emptyNamespaceMessage(`Redis at ${this.host}`, this.target.namespace, found), latencyMs: took(), metrics: metricsOf(s) };
      }
      return { ok: true, message: summary(s, this.host, this.target.namespace), latencyMs: took(), metrics: metricsOf(s) };
    } catch (err) {
      return { ok: false, message: this.describe(err), latencyMs: took(), metrics: null, timedOut: isTimeout(err) };
    }
  }

  describe(err: unknown): string {
    return describeRedisError(err, this.host, this.opts.timeoutMs, this.target.password);
  }

  private drop(): void {
    // A connect the drop cut short may never settle: the next caller starts afresh, not behind it.
    this.connecting = null;
    this.client?.disconnect();
    this.client = null;
  }

  close(): void {
    this.drop();
  }
}

const isTimeout = (err: unknown) => err instanceof RedisTimeout || /Command timed out/.test(String((err as Error | null)?.message));

/** A client told to come back after a frozen Redis waits at least one timeout's length. */
export const retryAfterS = (timeoutMs: number) => Math.max(1, Math.ceil(timeoutMs / 1000));

const hasNoSidekiqData = (s: SidekiqSnapshot) => s.queuesTotal === 0 && s.processesTotal === 0 && s.processed === 0 && s.failed === 0 && s.retrySize + s.scheduledSize + s.deadSize === 0;

/** What the "Test" button says of a Redis with Sidekiq data: what was found. */
export function summary(s: SidekiqSnapshot, host: string, namespace: string): string {
  const where = `Redis at ${host}${namespace ? `, namespace "${namespace}"` : ''}`;
  const enqueued = s.queues.reduce((n, q) => n + q.size, 0);
  const cut = s.queuesTotal > s.queues.length ? ` (first ${s.queues.length} of ${s.queuesTotal} read)` : '';
  const plain = s.scriptRefused ? ` (read with plain commands: the read script was refused: ${s.scriptRefused})` : '';
  return `OK: ${s.queuesTotal} queues${cut}, ${s.processes.length} processes, ${enqueued} enqueued, ${s.retrySize} retries, ${s.deadSize} dead at ${where}${plain}`;
}
