// Saved settings that name another service are tried before they are saved: a saved Redis URL
// that nothing answers on was accepted, and the next start (the desktop app's, with nobody at a
// terminal) then ran into it. The try is the sidekiq connections' Test: connect and PING within
// the timeout, with the same client options and the same sentences for what failed.
import type { Config } from '../config.ts';
import { describeRedisError, RedisTimeout } from '../sidekiq/errors.ts';
import { normalizeRedisUrl, redactedUrl, redisHost } from '../sidekiq/redis-url.ts';
import { clientOptions } from '../sidekiq/source.ts';
import { replyBoundsOf, type ReplyBounds } from '../redis/bounded-client.ts';

/** Why the Redis at `raw` cannot be used now, as a sentence; null when it answered PING in time. */
export async function redisUnreachable(raw: string, timeoutMs: number, reply: ReplyBounds): Promise<string | null> {
  const target = normalizeRedisUrl(raw);
  if ('error' in target) return target.error;
  // Loaded only when a Redis URL is saved: ioredis costs every server ~20 MiB of RSS at idle.
  const { Redis } = await import('ioredis');
  const client = new Redis(clientOptions({ ...target, namespace: '' }, timeoutMs, reply));
  // Without retries, connect() rejects with a bare "Connection is closed"; the reason comes as an 'error' event.
  let reason: unknown = null;
  client.on('error', (err: unknown) => {
    reason ??= err;
  });
  let timer: NodeJS.Timeout | undefined;
  // connectTimeout covers the TCP connect only: a stopped Redis accepts and then answers nothing.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisTimeout(timeoutMs)), timeoutMs);
  });
  try {
    await Promise.race([
      (async () => {
        await client.connect().catch((err: unknown) => {
          throw reason ?? err;
        });
        await client.ping();
      })(),
      deadline,
    ]);
    return null;
  } catch (err) {
    return describeRedisError(err, redisHost(target.url), timeoutMs, target.password);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

/**
 * For each value about to be saved that names a service: what failed when it was tried, said with
 * what to do. Only the values sent are tried: the others were tried when they were saved.
 */
export async function unreachableServices(config: Pick<Config, 'sidekiqTimeoutMs' | 'redisMaxReplyBytes' | 'redisMaxReplyElements'>, values: Record<string, unknown>): Promise<string[]> {
  const redis = values.redis;
  if (typeof redis !== 'string') return [];
  const problem = await redisUnreachable(redis, config.sidekiqTimeoutMs, replyBoundsOf(config));
  return problem === null ? [] : [`redis: ${redactedUrl(redis)}: ${problem}`];
}
