// Reading a connection once, whichever store the monitor is on (monitor.ts): this server's job
// system in-process, a Sidekiq through its Redis, or a GitLab over HTTP.
import type { CompoundMetrics } from '../../contract/metrics.ts';
import type { Connection } from '../store/ports/monitor-ports.ts';
import type { SidekiqSources } from '../sidekiq/sources.ts';
import { targetOfConnection } from '../sidekiq/sources.ts';
import { retryAfterS } from '../sidekiq/source.ts';
import { StorageError } from '../store/ports/storage-error.ts';
import { fetchCompound, type FetchOutcome } from './remote-client.ts';
import { embeddedSource, type MetricsSource } from './embedded-source.ts';
import type { AppContext } from '../context.ts';
import { targetOf } from './connections.ts';
import { OutboundRefused, policyOf, type OutboundPolicy } from '../outbound/policy.ts';
import { boundSample, sampleBoundsOf, type SampleBounds } from './sample-bounds.ts';

export interface SourceDeps {
  embedded: MetricsSource;
  sidekiq: SidekiqSources;
  remoteTimeoutMs: number;
  policy: OutboundPolicy;
  sampleBounds: SampleBounds;
}

/** The config is read at each use: a test (or a settings change) may set it after the monitor starts. */
export function sourcesOf(ctx: AppContext, sidekiq: SidekiqSources): SourceDeps {
  return {
    embedded: embeddedSource(ctx),
    sidekiq,
    get remoteTimeoutMs() {
      return ctx.config.remoteTimeoutMs;
    },
    get policy() {
      return policyOf(ctx.config);
    },
    get sampleBounds() {
      return sampleBoundsOf(ctx.config);
    },
  };
}

/** One sample: the metrics (within the sample bounds), or null with the error that says why there are none. */
export async function readConnection(c: Connection, signal: AbortSignal, deps: SourceDeps): Promise<{ metrics: CompoundMetrics | null; error: string; queuesLeftOut: number }> {
  const read = await readUnbounded(c, signal, deps);
  if (!read.metrics) return { ...read, queuesLeftOut: 0 };
  const { metrics, queuesLeftOut } = boundSample(read.metrics, deps.sampleBounds);
  return { metrics, error: read.error, queuesLeftOut };
}

async function readUnbounded(c: Connection, signal: AbortSignal, deps: SourceDeps): Promise<{ metrics: CompoundMetrics | null; error: string }> {
  if (c.kind === 'embedded') {
    try {
      return { metrics: await deps.embedded(), error: '' };
    } catch (err) {
      return { metrics: null, error: `reading this server's job system failed: ${(err as Error).message}` };
    }
  }
  if (c.kind === 'sidekiq') {
    const refused = await redisRefused(c.baseUrl, deps.policy);
    if (refused) return { metrics: null, error: refused };
  }
  const outcome = c.kind === 'sidekiq' ? await deps.sidekiq.of(c).sample() : await fetchCompound(targetOf(c), { timeoutMs: deps.remoteTimeoutMs, signal, policy: deps.policy });
  return { metrics: outcome.metrics, error: outcome.message };
}

/**
 * The outbound policy's answer for a sidekiq connection's Redis host, or null when it may be called.
 * Checked before each read; ioredis resolves the name again itself (it takes no lookup of ours).
 */
async function redisRefused(url: string | null, policy: OutboundPolicy): Promise<string | null> {
  if (policy.open || !url) return null;
  try {
    await policy.check(new URL(url).hostname);
    return null;
  } catch (err) {
    if (err instanceof OutboundRefused) return err.message;
    throw err;
  }
}

/** Reads a connection once without storing anything (the "Test" button). */
export async function probeConnection(c: Pick<Connection, 'kind' | 'baseUrl' | 'token' | 'apiVersion' | 'segment'>, deps: SourceDeps): Promise<FetchOutcome> {
  if (c.kind === 'embedded') {
    const started = performance.now();
    const metrics = await deps.embedded();
    return { ok: true, status: 200, message: 'OK: this server', latencyMs: performance.now() - started, metrics };
  }
  if (c.kind === 'sidekiq') {
    const refused = await redisRefused(c.baseUrl, deps.policy);
    if (refused) return { ok: false, status: null, message: refused, latencyMs: 0, metrics: null };
    const source = deps.sidekiq.transient(targetOfConnection(c));
    try {
      const { timedOut, ...outcome } = await source.sample(true);
      // Nothing came back in time: the asker learns to come back (503), as with any storage that is down.
      if (timedOut) throw new StorageError('unavailable', outcome.message, retryAfterS(source.timeoutMs));
      return { ...outcome, status: null };
    } finally {
      source.close();
    }
  }
  return fetchCompound(targetOf(c as Connection), { timeoutMs: deps.remoteTimeoutMs, policy: deps.policy });
}
