-- As push-once.lua, keyed by the args too, and running and retrying jobs count: the queue, every
-- working list (a Jobscope process's jobs taken and not ended, listed in jobscope:working) and the
-- retry set are searched. Args are compared decoded (a payload's args[1], any key order) with ARGV[5].
-- KEYS: queue:<name>, queues, jobscope:queues, jobscope:working, retry. ARGV: kind, class or '', their
-- JSON texts, the args as JSON, the payload, the queue name. Working lists are named from the set,
-- as orphans.lua names queues from payloads (one Redis, not a cluster).
local kind, cls, kindText, clsText, queue = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[7]
local args = cjson.decode(ARGV[5])
local function same(a, b)
  if type(a) ~= 'table' or type(b) ~= 'table' then return a == b end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end
local function holds(key, size, range)
  local n = redis.call(size, key)
  for from = 0, n - 1, 200 do
    for _, v in ipairs(redis.call(range, key, from, from + 199)) do
      if string.find(v, kindText, 1, true) or (cls ~= '' and string.find(v, clsText, 1, true)) then
        local ok, job = pcall(cjson.decode, v)
        if ok and type(job) == 'table' and job.queue == queue and type(job.args) == 'table' then
          local k = job.jobscope_kind
          if (k == kind or (type(k) ~= 'string' and cls ~= '' and job.class == cls)) and same(job.args[1], args) then return true end
        end
      end
    end
  end
  return false
end
if holds(KEYS[1], 'LLEN', 'LRANGE') or holds(KEYS[5], 'ZCARD', 'ZRANGE') then return 0 end
for _, id in ipairs(redis.call('SMEMBERS', KEYS[4])) do
  if holds('working:' .. id, 'LLEN', 'LRANGE') then return 0 end
end
redis.call('LPUSH', KEYS[1], ARGV[6])
redis.call('SADD', KEYS[2], queue)
redis.call('SADD', KEYS[3], queue)
return 1
