-- Entries of this process's working list that no job of it holds (a fetch whose answer was lost in
-- an outage: Redis moved them, this process never saw them) back to the tails of their queues; runs
-- after back-to-queue.lua. KEYS[1] working list; ARGV the entries held, with repeats.
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
return n
