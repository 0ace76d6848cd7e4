// INFO's server, memory and clients sections of a watched Redis, asked for when a connection's page
// opens, never per sample. One section per INFO: Redis before 7 takes only one. A Redis that answers
// INFO with an error (an ACL without +info, a renamed command) is told as `refused`, so the page
// still shows the rest; a Redis that does not answer at all fails as any other read.
import type { Redis } from 'ioredis';
import type { RedisFacts } from '../../contract/redis-facts.ts';

const SECTIONS = ['server', 'memory', 'clients'] as const;

/** INFO's `key:value` lines (sections' `# Name` headers and blank lines skipped). */
export function infoFields(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) out.set(line.slice(0, at), line.slice(at + 1));
  }
  return out;
}

const count = (v: string | undefined): number | null => (v !== undefined && /^\d+$/.test(v) ? Number(v) : null);

export function factsOf(fields: Map<string, string>): RedisFacts {
  return {
    version: fields.get('redis_version') ?? null,
    used_memory: count(fields.get('used_memory')),
    used_memory_peak: count(fields.get('used_memory_peak')),
    connected_clients: count(fields.get('connected_clients')),
    uptime_s: count(fields.get('uptime_in_seconds')),
    refused: null,
  };
}

const NOTHING: Omit<RedisFacts, 'refused'> = { version: null, used_memory: null, used_memory_peak: null, connected_clients: null, uptime_s: null };

export async function readRedisFacts(redis: Redis): Promise<RedisFacts> {
  const p = redis.pipeline();
  for (const s of SECTIONS) p.info(s);
  const res = await p.exec();
  if (!res) throw new Error('the Redis pipeline was not run');
  const fields = new Map<string, string>();
  for (const [err, text] of res) {
    if (err) {
      // Redis answered, with an error: the facts are refused, the connection is fine.
      if (err.name === 'ReplyError') return { ...NOTHING, refused: String(err.message).split('\n')[0]!.slice(0, 200) };
      throw err;
    }
    for (const [k, v] of infoFields(String(text))) fields.set(k, v);
  }
  return factsOf(fields);
}
