// The action routes' adapter for a watched Sidekiq: each call hands on to sidekiq/actions.ts on the
// connection's client, as a request (a frozen Redis is a 503 with Retry-After, other Redis trouble
// a 502 naming the host, never the password).
import type { Redis } from 'ioredis';
import type { SidekiqSource } from '../sidekiq/source.ts';
import { SidekiqActions } from '../sidekiq/actions.ts';
import { ApiError } from '../http/errors.ts';
import { EntryKeyError } from '../jobs/failed-entries.ts';
import { CannotAct, NotThere } from '../jobs/action-errors.ts';
import { parseEntryKey } from '../jobs/entry-key.ts';
import type { JobActionsAdapter } from './job-actions-adapter.ts';

/** A key as Sidekiq Web's `<score>-<jid>`: the score as Redis reads it back exactly, and the jid. */
function scoreAndJid(key: string): { score: string; jid: string } {
  const k = parseEntryKey(key);
  if (!k || 'id' in k || k.jid === '') throw new EntryKeyError(`key ${JSON.stringify(key)} names no entry: give it as <score>-<jid>, as the list answers it`);
  return { score: String(k.score), jid: k.jid };
}

export function sidekiqActions(source: SidekiqSource): JobActionsAdapter {
  // A refusal is an answer, not Redis trouble: carried out of forRequest (which would make it a 502
  // and drop a healthy client) and raised again here.
  const on = async <T>(fn: (a: SidekiqActions) => Promise<T>): Promise<T> => {
    const run = async (r: Redis) => {
      try {
        // A bulk action answers `left` at half the timeout, before the timeout would cut it off as a 503.
        return { done: await fn(new SidekiqActions(r, source.target.namespace, () => source.now(), source.timeoutMs / 2)) };
      } catch (err) {
        if (err instanceof NotThere || err instanceof CannotAct) return { refused: err };
        throw err;
      }
    };
    const out = await source.forRequest(run, (sentence) => new ApiError(502, `502 Bad Gateway - ${sentence}`));
    if ('refused' in out) throw out.refused;
    return out.done;
  };
  return {
    entry: (set, key, action) => {
      const { score, jid } = scoreAndJid(key);
      if (action === 'delete') return on((a) => a.delete(set, score, jid));
      if (action === 'kill') return on((a) => a.kill(set, score, jid));
      return on((a) => a.moveToQueue(set, score, jid));
    },
    all: (set, action) => on((a) => (action === 'delete' ? a.deleteAll(set) : a.moveAll(set, action === 'kill' ? 'dead' : 'queue'))),
    deleteQueued: (queue, jid) => on((a) => a.deleteQueued(queue, jid)),
    clearQueue: (queue) => on((a) => a.clearQueue(queue)),
    signal: (identity, action) => on((a) => a.signal(identity, action === 'quiet' ? 'TSTP' : 'TERM')),
  };
}
