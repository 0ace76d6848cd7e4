-- One chunk of a read of a Sidekiq's Redis (read-script.ts says why a script). Only reads (LLEN,
-- LINDEX, HMGET). ARGV[1] key prefix ("" or "<namespace>:"); ARGV[2] = n; ARGV[3 .. 2+n] queue names,
-- the rest identities. → { Q, P }: Q = {name, LLEN, LINDEX -1 (nil when empty), ...},
-- P = {identity, info, busy, beat, quiet, rss, ...}. The names starting with a dollar sign are
-- filled in by read-script.ts from snapshot.ts's PROCESS_FIELDS.
local call, p = redis.call, ARGV[1]
local nq = tonumber(ARGV[2])
local q, n = {}, 0
for i = 3, 2 + nq do
  local key = p .. 'queue:' .. ARGV[i]
  local size = call('LLEN', key)
  q[n + 1], q[n + 2], q[n + 3] = ARGV[i], size, size > 0 and call('LINDEX', key, -1)
  n = n + 3
end
local pr, m = {}, 0
for i = 3 + nq, #ARGV do
  local h = call('HMGET', p .. ARGV[i], $PROCESS_FIELDS)
  pr[m + 1] = ARGV[i]
  for f = 1, $FIELD_COUNT do pr[m + 1 + f] = h[f] end
  m = m + $STRIDE
end
return { q, pr }
