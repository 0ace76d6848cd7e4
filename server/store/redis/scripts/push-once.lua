-- Pushes a periodic job unless one of its kind waits (push-once.ts says what waits means).
-- KEYS: queue:<name>, queues, jobscope:queues. ARGV: kind, class ('' when a class alone does not make
-- the kind), the same two as JSON writes them inside a string (a cheap text test before decoding),
-- the payload, the queue name. Answers 1 when pushed, 0 when one waits. The list is read in pages so a
-- long queue does not build one big Lua table; only payloads that contain the kind's or class's text
-- are decoded, and the decoded fields decide (args may contain the same text).
local kind, cls, kindText, clsText = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local n = redis.call('LLEN', KEYS[1])
for from = 0, n - 1, 200 do
  for _, v in ipairs(redis.call('LRANGE', KEYS[1], from, from + 199)) do
    if string.find(v, kindText, 1, true) or (cls ~= '' and string.find(v, clsText, 1, true)) then
      local ok, job = pcall(cjson.decode, v)
      if ok and type(job) == 'table' then
        local k = job.jobscope_kind
        if k == kind or (type(k) ~= 'string' and cls ~= '' and job.class == cls) then return 0 end
      end
    end
  end
end
redis.call('LPUSH', KEYS[1], ARGV[5])
redis.call('SADD', KEYS[2], ARGV[6])
redis.call('SADD', KEYS[3], ARGV[6])
return 1
