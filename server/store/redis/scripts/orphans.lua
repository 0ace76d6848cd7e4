-- A dead process's working list back to the tails of its jobs' queues (they were the oldest); runs
-- after back-to-queue.lua. ARGV[2] = 'if-dead': only while its heartbeat hash is missing, checked in
-- the same step, so a process that re-beat since the caller looked keeps its jobs.
-- KEYS: the working list, jobscope:working. ARGV: the identity, 'if-dead' | 'always'.
if ARGV[2] == 'if-dead' and redis.call('EXISTS', ARGV[1]) == 1 then return 0 end
local n = 0
while true do
  local v = redis.call('RPOP', KEYS[1])
  if not v then break end
  back_to_queue(v)
  n = n + 1
end
redis.call('SREM', KEYS[2], ARGV[1])
return n
