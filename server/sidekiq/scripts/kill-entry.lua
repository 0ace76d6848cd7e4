-- Moves one entry of the retry or scheduled set to the dead set, as Sidekiq Web's "Kill" does
-- (SortedEntry#kill: remove_job, then DeadSet#kill), in one step, with DeadSet#kill's trimming:
-- deaths older than the timeout go, then all but the newest (ZREMRANGEBYRANK 0 -max_jobs, exactly
-- Sidekiq's bounds).
-- KEYS[1] the set it is in, KEYS[2] the dead set.
-- ARGV[1] the member exactly as stored, ARGV[2] now (epoch s), ARGV[3] the oldest death kept (epoch s),
-- ARGV[4] dead_max_jobs.
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[4]))
return 1
