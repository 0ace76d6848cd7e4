-- Moves one entry of a sorted set (retry, schedule or dead) into its queue, as Sidekiq Web's
-- "Retry now" and "Add to queue" do (SortedEntry#remove_job, then Client.push: LPUSH queue, SADD
-- queues), in one step: the entry is pushed only when this call took it from the set, so two
-- clicks, or Sidekiq's own poller moving it meanwhile, never push it twice.
-- KEYS[1] the sorted set, KEYS[2] queue:<name>, KEYS[3] the queues set.
-- ARGV[1] the member exactly as stored, ARGV[2] the payload to push, ARGV[3] the queue's name.
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('SADD', KEYS[3], ARGV[3])
redis.call('LPUSH', KEYS[2], ARGV[2])
return 1
