// Recording the end of jobs taken from Redis (ack, retry later, kill), so that an outage loses no
// end and a retried write never counts twice:
// - one script per batch: for each job, LREM from the working list; ONLY if that removed the entry
//   are its counters added and its retry or dead entry written. A reply lost with the connection
//   (the write done, the answer never read) is retried, finds no entry and does nothing.
// - an end that fails because Redis is away stays pending (pending-ends.ts) and is retried; its job
//   keeps its slot and stays in the heartbeat's workers meanwhile, as it is still in the working list.
import type { JobCounters } from '../../jobs/types.ts';

// KEYS[1] working list; ARGV[1] today (stat:<name>:<day>), ARGV[2] their TTL, ARGV[3] the dead set's
// oldest score kept; then 7 per end: raw, processed, failed, set ('' | 'retry' | 'dead'), score,
// payload, keep (dead_max_jobs). An empty raw (a job never fetched) is written unconditionally.
export const END = `
local processed, failed, ended = 0, 0, 0
for i = 4, #ARGV, 7 do
  local raw = ARGV[i]
  if raw == '' or redis.call('LREM', KEYS[1], 1, raw) == 1 then
    ended = ended + 1
    processed = processed + tonumber(ARGV[i + 1])
    failed = failed + tonumber(ARGV[i + 2])
    local set = ARGV[i + 3]
    if set ~= '' then redis.call('ZADD', set, ARGV[i + 4], ARGV[i + 5]) end
    if set == 'dead' then
      redis.call('ZREMRANGEBYSCORE', 'dead', '-inf', ARGV[3])
      redis.call('ZREMRANGEBYRANK', 'dead', 0, -(tonumber(ARGV[i + 6]) + 1))
    end
  end
end
for name, n in pairs({ processed = processed, failed = failed }) do
  if n > 0 then
    redis.call('INCRBY', 'stat:' .. name, n)
    redis.call('INCRBY', 'stat:' .. name .. ':' .. ARGV[1], n)
    redis.call('EXPIRE', 'stat:' .. name .. ':' .. ARGV[1], ARGV[2])
  end
end
return ended`;

/** A Lua function putting an entry back at the tail of its job's queue (named in its payload, else default): it runs next. */
export const BACK_TO_QUEUE = `
local function back_to_queue(v)
  local ok, job = pcall(cjson.decode, v)
  local q = 'default'
  if ok and type(job) == 'table' and type(job.queue) == 'string' then q = job.queue end
  redis.call('SADD', 'queues', q)
  redis.call('RPUSH', 'queue:' .. q, v)
end`;

// Entries of this process's working list that no job of it holds (a fetch whose answer was lost in
// an outage: Redis moved them, this process never saw them) back to the tails of their queues.
// KEYS[1] working list; ARGV the entries held, with repeats.
export const RETURN_STRAYS = `${BACK_TO_QUEUE}
local held = {}
for i = 1, #ARGV do held[ARGV[i]] = (held[ARGV[i]] or 0) + 1 end
local n = 0
for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if (held[v] or 0) > 0 then
    held[v] = held[v] - 1
  else
    redis.call('LREM', KEYS[1], 1, v)
    back_to_queue(v)
    n = n + 1
  end
end
return n`;

export interface JobEnd {
  raw: string;
  counters: JobCounters;
  /** The retry or dead entry written with the end, if any. */
  set?: { key: 'retry' | 'dead'; score: number; payload: string; keep: number };
}

/** The END script's arguments after the head: 7 per end (see scripts/end.lua). */
export function endArgs(head: string[], batch: JobEnd[]): string[] {
  const args = [...head];
  for (const e of batch) {
    args.push(e.raw, String(e.counters.processed), String(e.counters.failed), e.set?.key ?? '', String(e.set?.score ?? 0), e.set?.payload ?? '', String(e.set?.keep ?? 0));
  }
  return args;
}
