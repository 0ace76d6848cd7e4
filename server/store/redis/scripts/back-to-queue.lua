-- A Lua function putting an entry back at the tail of its job's queue (named in its payload, else
-- default): it runs next. Not a script of its own: the loader puts it before those that call it.
local function back_to_queue(v)
  local ok, job = pcall(cjson.decode, v)
  local q = 'default'
  if ok and type(job) == 'table' and type(job.queue) == 'string' then q = job.queue end
  redis.call('SADD', 'queues', q)
  redis.call('RPUSH', 'queue:' .. q, v)
end
