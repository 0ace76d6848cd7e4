// enqueueOnce on Redis (SharedJobBackend.pushUnlessWaiting): push a periodic job unless one of its kind
// waits, checked and pushed in one script, so two servers whose schedules fire together cannot both
// see an empty queue and both push (Redis runs a script with no other command in between).
//
// "Waits" is what the PostgreSQL adapter (a 'queued' row no process claimed) and the in-memory
// mirror (waitingByKind) count: a payload in `queue:<name>`, taken by no process yet. Not counted:
// - running jobs (in a working list): a run that started before the state it sweeps changed may
//   miss that change, so the next period must still run after it;
// - the retry set: a periodic job is retried by its next period, not by backoff (the built-ins have
//   retry: false); one that is there waits minutes to hours and must not hold the schedule back;
// - Sidekiq's `schedule` set: Jobscope never writes it.
//
// A payload is of the kind when its `jobscope_kind` is (Jobscope's pushes), or, without one, when its
// class is the kind's class (a Sidekiq client's push: parse() reads its kind from the class the same way).

// KEYS: queue:<name>, queues, jobscope:queues. ARGV: kind, class ('' when a class alone does not make
// the kind), the same two as JSON writes them inside a string (a cheap text test before decoding),
// the payload, the queue name. Answers 1 when pushed, 0 when one waits. The list is read in pages so a
// long queue does not build one big Lua table; only payloads that contain the kind's or class's text
// are decoded, and the decoded fields decide (args may contain the same text).
export const PUSH_ONCE = `
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
return 1`;

/** A string as JSON writes it between its quotes: the text a payload holding it contains. */
const inJson = (s: string) => JSON.stringify(s).slice(1, -1);

/**
 * The script's keys and arguments. `classMakesKind`: a payload of `cls` with no jobscope_kind is read
 * as this kind (the kind registered for the class, or no kind registered for it and the kind's name is the class).
 */
export function pushOnceArgs(queue: string, kind: string, cls: string, classMakesKind: boolean, payload: string): string[] {
  const c = classMakesKind ? cls : '';
  return [`queue:${queue}`, 'queues', 'jobscope:queues', kind, c, inJson(kind), inJson(c), payload, queue];
}

// pushUnlessPending: as PUSH_ONCE, keyed by the args too, and running and retrying jobs count: the
// queue, every working list (a Jobscope process's jobs taken and not ended, listed in
// jobscope:working) and the retry set are searched. Args are compared decoded (a payload's
// args[1], any key order) with ARGV[5].
// KEYS: queue:<name>, queues, jobscope:queues, jobscope:working, retry. ARGV: kind, class or '', their
// JSON texts, the args as JSON, the payload, the queue name. Working lists are named from the set,
// as ORPHANS names queues from payloads (one Redis, not a cluster).
export const PUSH_UNLESS_PENDING = `
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
return 1`;

/** PUSH_UNLESS_PENDING's keys and arguments; `classMakesKind` as pushOnceArgs'. */
export function pushUnlessPendingArgs(queue: string, kind: string, cls: string, classMakesKind: boolean, args: Record<string, unknown>, payload: string): string[] {
  const c = classMakesKind ? cls : '';
  return [`queue:${queue}`, 'queues', 'jobscope:queues', 'jobscope:working', 'retry', kind, c, inJson(kind), inJson(c), JSON.stringify(args), payload, queue];
}
