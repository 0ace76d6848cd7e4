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
// The scripts are scripts/push-once.lua and scripts/push-unless-pending.lua; these build their arguments.

/** A string as JSON writes it between its quotes: the text a payload holding it contains. */
const inJson = (s: string) => JSON.stringify(s).slice(1, -1);

/**
 * push-once.lua's keys and arguments. `classMakesKind`: a payload of `cls` with no jobscope_kind is read
 * as this kind (the kind registered for the class, or no kind registered for it and the kind's name is the class).
 */
export function pushOnceArgs(queue: string, kind: string, cls: string, classMakesKind: boolean, payload: string): string[] {
  const c = classMakesKind ? cls : '';
  return [`queue:${queue}`, 'queues', 'jobscope:queues', kind, c, inJson(kind), inJson(c), payload, queue];
}

/** push-unless-pending.lua's keys and arguments; `classMakesKind` as pushOnceArgs'. */
export function pushUnlessPendingArgs(queue: string, kind: string, cls: string, classMakesKind: boolean, args: Record<string, unknown>, payload: string): string[] {
  const c = classMakesKind ? cls : '';
  return [`queue:${queue}`, 'queues', 'jobscope:queues', 'jobscope:working', 'retry', kind, c, inJson(kind), inJson(c), JSON.stringify(args), payload, queue];
}
