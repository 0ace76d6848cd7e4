-- The end of a batch of jobs (job-end.ts says why it is written this way): for each, LREM from the
-- working list; only if that removed the entry are its counters added and its retry or dead entry
-- written. KEYS[1] working list; ARGV[1] today (stat:<name>:<day>), ARGV[2] their TTL, ARGV[3] the
-- dead set's oldest score kept; then 7 per end: raw, processed, failed, set ('' | 'retry' | 'dead'),
-- score, payload, keep (dead_max_jobs). An empty raw (a job never fetched) is written unconditionally.
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
return ended
