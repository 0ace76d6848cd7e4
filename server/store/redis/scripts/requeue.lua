-- Moves one member of a sorted set (retry or dead) into its queue, only if this caller removed it.
-- KEYS: the set, queue:<name>, queues. ARGV: the member, the payload pushed, the queue name.
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('SADD', KEYS[3], ARGV[3])
  redis.call('LPUSH', KEYS[2], ARGV[2])
  return 1
end
return 0
