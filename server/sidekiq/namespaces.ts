// Which namespaces of a Redis hold Sidekiq data, for the "Test" of a connection that found none
// under its own: keys `<namespace>:processes` or `<namespace>:queues` (and the bare `processes` /
// `queues` of no namespace), found by a bounded SCAN, never KEYS (which walks the whole keyspace in
// one command while every other client waits). Each SCAN call visits SCAN_COUNT buckets; after
// MAX_CALLS calls the answer says the search was cut short.
import type { Redis } from 'ioredis';
import { SCAN_COUNT } from './read-head.ts';

const MAX_CALLS = 40;
const MAX_FOUND = 10;
/** Matches `…:processes` and `…:queues` (and a few other keys, dropped by KEY below) in one scan. */
const MATCH = '*:[pq][ru][oe][cu]es*';
const KEY = /^(.+):(processes|queues)$/;

export interface NamespacesFound {
  /** Namespaces with data; '' is no namespace (the bare keys). */
  names: string[];
  /** The whole keyspace was scanned (else the first MAX_CALLS pages only, or MAX_FOUND names). */
  complete: boolean;
}

export async function namespacesWithData(redis: Redis): Promise<NamespacesFound> {
  const names = new Set<string>();
  const [processes, queues] = await Promise.all([redis.exists('processes'), redis.exists('queues')]);
  if (processes || queues) names.add('');
  let cursor = '0';
  for (let calls = 0; calls < MAX_CALLS && names.size < MAX_FOUND; calls++) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', MATCH, 'COUNT', SCAN_COUNT);
    for (const k of keys) {
      const m = KEY.exec(k);
      if (m && names.size < MAX_FOUND) names.add(m[1]!);
    }
    cursor = next;
    if (cursor === '0') return { names: [...names].sort(), complete: true };
  }
  return { names: [...names].sort(), complete: false };
}

const shown = (ns: string) => (ns ? `"${ns}"` : 'no namespace');

/** What "Test" says of a reachable Redis with no Sidekiq data under `namespace`: a warning, with where there is some. */
export function emptyNamespaceMessage(where: string, namespace: string, found: NamespacesFound | null): string {
  const head = `Reachable: connected to ${where}, but found no Sidekiq data under ${namespace ? `namespace "${namespace}"` : 'no namespace'} (no queues, processes or counters): check the namespace (and the database number, /0 in the URL)`;
  if (!found) return head;
  const others = found.names.filter((n) => n !== namespace);
  if (others.length) return `${head}. Sidekiq data was found under ${others.map(shown).join(', ')}${found.complete ? '' : ' (a partial search)'}`;
  return `${head}. ${found.complete ? 'No other namespace of this database has any' : 'None was found under another namespace in the keys searched'}`;
}
