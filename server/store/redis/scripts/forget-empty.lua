-- Forgets a queue Jobscope did not create, only while it holds no job: checked and done in one step,
-- so a job the app pushes meanwhile is never lost. Answers how many jobs kept it, -1 when forgotten,
-- 0 when the name was not listed. KEYS: queues, queue:<name>. ARGV: the name.
local n = redis.call('LLEN', KEYS[2])
if n > 0 then return n end
return -redis.call('SREM', KEYS[1], ARGV[1])
