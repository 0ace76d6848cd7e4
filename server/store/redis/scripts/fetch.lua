-- Up to ARGV[1] jobs LMOVEd into the working list (KEYS[1]), each from the first non-empty queue of
-- KEYS[2..] (as that many single fetches would take them): one round trip for any number of queues
-- and free slots.
local out = {}
local want = tonumber(ARGV[1])
for i = 2, #KEYS do
  while #out < want do
    local v = redis.call('LMOVE', KEYS[i], KEYS[1], 'RIGHT', 'LEFT')
    if not v then break end
    out[#out + 1] = v
  end
  if #out >= want then break end
end
return out
