// What Sidekiq Web does to a Sidekiq's Redis, done the same way (shared/spec/sidekiq-web-actions.md,
// "Actions"): retry now, add to queue, kill, delete, the bulk forms, delete a queued job, clear a
// queue, quiet and stop a process. Only reached once the connection's user allowed changes
// (app-api/job-actions.ts checks). A move between keys is one Lua script that pushes only what it
// took, so a double click or Sidekiq's own poller never runs a job twice. Bulk actions go one entry
// at a time as Sidekiq does, pipelined in bounded batches: no long script blocks a busy Redis.
import type { Redis } from 'ioredis';
import { defineScripts, SIDEKIQ_ACTION_SCRIPTS } from '../redis/lua-scripts.ts';
import { CannotAct, NotThere } from '../jobs/action-errors.ts';
import { withJsonMembers } from '../util/json-members.ts';
import { entryAt, jobObject, queuedJob } from './find-job.ts';

export type SortedSetName = 'retry' | 'schedule' | 'dead';

/** Sidekiq's DeadSet defaults (dead_timeout_in_seconds: 6 months, dead_max_jobs). */
export const DEAD_TIMEOUT_S = 180 * 24 * 60 * 60;
export const DEAD_MAX_JOBS = 10_000;

/** Entries taken per round trip in a bulk action. */
const BATCH = 100;
/** A queued job is looked for this many entries at a time, at most this deep. */
const QUEUE_PAGE = 500;
const QUEUE_SCAN_MAX = 100_000;
/** Sidekiq's signal list lives 60 s: a process that never beats again leaves no key behind. */
const SIGNAL_TTL_S = 60;

export interface BulkDone {
  /** Entries acted on. */
  count: number;
  /** Entries still in the set afterwards (ones that are no job, or the time budget ran out). */
  left: number;
}

interface ActionScripts {
  skMoveEntry(set: string, queueKey: string, queuesKey: string, member: string, payload: string, queue: string): Promise<number>;
  skKillEntry(set: string, dead: string, member: string, now: string, oldest: string, max: string): Promise<number>;
}

export class SidekiqActions {
  private readonly r: Redis & ActionScripts;

  constructor(
    redis: Redis,
    private readonly namespace: string,
    private readonly now: () => number,
    /** How long a bulk action keeps at it before it answers what is left (within the request's Redis timeout). */
    private readonly budgetMs: number,
  ) {
    defineScripts(redis, SIDEKIQ_ACTION_SCRIPTS);
    this.r = redis as Redis & ActionScripts;
  }

  private k(key: string): string {
    return this.namespace ? `${this.namespace}:${key}` : key;
  }

  /** Retry now (retry or dead entry: retry_count - 1, as SortedEntry#retry) or add to queue now (scheduled: unchanged). */
  async moveToQueue(set: SortedSetName, score: string, jid: string): Promise<void> {
    const member = await this.find(set, score, jid);
    if ((await this.move(set, member)) === 0) throw gone(set, jid);
  }

  /** Kill: a retry or scheduled entry into the dead set, scored now. */
  async kill(set: SortedSetName, score: string, jid: string): Promise<void> {
    if (set === 'dead') throw new CannotAct('the job is dead already: retry it or delete it');
    const member = await this.find(set, score, jid);
    if ((await this.killMember(set, member)) === 0) throw gone(set, jid);
  }

  /** Delete one entry (ZREM of the exact member, SortedSet#delete_by_value). */
  async delete(set: SortedSetName, score: string, jid: string): Promise<void> {
    const member = await this.find(set, score, jid);
    if ((await this.r.zrem(this.k(set), member)) === 0) throw gone(set, jid);
  }

  /** Retry all (retry, dead), add all to their queues (schedule) or kill all (retry, schedule), one entry at a time. */
  async moveAll(set: SortedSetName, to: 'queue' | 'dead'): Promise<BulkDone> {
    if (to === 'dead' && set === 'dead') throw new CannotAct('the jobs are dead already: retry them or delete them');
    const key = this.k(set);
    const until = this.now() + this.budgetMs;
    let count = 0;
    let skipped = 0;
    while (this.now() < until) {
      const members = await this.r.zrange(key, String(skipped), String(skipped + BATCH - 1));
      if (members.length === 0) break;
      const p = this.r.pipeline() as unknown as ActionScripts & { exec(): Promise<[Error | null, unknown][] | null> };
      let sent = 0;
      for (const m of members) {
        const move = to === 'queue' ? moveArgs(set, m, this.now()) : null;
        if (to === 'queue' && !move) {
          skipped++; // no job to push: stays, as Sidekiq's retry would fail on it
          continue;
        }
        if (move) p.skMoveEntry(key, this.k(`queue:${move.queue}`), this.k('queues'), m, move.payload, move.queue);
        else p.skKillEntry(key, this.k('dead'), m, ...this.deathArgs());
        sent++;
      }
      if (sent === 0) continue;
      for (const [err, v] of (await p.exec()) ?? []) {
        if (err) throw err;
        if (v === 1) count++;
      }
    }
    return { count, left: await this.r.zcard(key) };
  }

  /** Delete all: UNLINK of the set (SortedSet#clear). */
  async deleteAll(set: SortedSetName): Promise<BulkDone> {
    const [[e1, size], [e2]] = ((await this.r.multi().zcard(this.k(set)).unlink(this.k(set)).exec()) ?? []) as [Error | null, number][];
    if (e1 || e2) throw e1 ?? e2;
    return { count: size ?? 0, left: 0 };
  }

  /** Delete a queued job: found by jid in bounded pages, then LREM of its exact value (as Sidekiq Web's `key_val`). */
  async deleteQueued(queue: string, jid: string): Promise<void> {
    const key = this.k(`queue:${queue}`);
    const value = await queuedJob(this.r, key, jid, { page: QUEUE_PAGE, max: QUEUE_SCAN_MAX });
    if (typeof value === 'string' && (await this.r.lrem(key, 1, value)) > 0) return;
    throw new NotThere(`job ${jid} is not in queue ${queue} (run, deleted or moved meanwhile; only the first ${QUEUE_SCAN_MAX} jobs of a queue are looked at)`);
  }

  /** Clear a queue: UNLINK queue:<name> and SREM queues <name> in MULTI (Queue#clear); answers how many jobs it held. */
  async clearQueue(queue: string): Promise<number> {
    const res = (await this.r.multi().llen(this.k(`queue:${queue}`)).unlink(this.k(`queue:${queue}`)).srem(this.k('queues'), queue).exec()) ?? [];
    for (const [err] of res) if (err) throw err;
    const held = res[0]![1] as number;
    if (held === 0 && res[2]![1] === 0) throw new NotThere(`there is no queue ${queue} (cleared or never pushed to)`);
    return held;
  }

  /** Quiet (TSTP) or stop (TERM) a process through its signal list, which its next heartbeat pops (Process#signal). */
  async signal(identity: string, signal: 'TSTP' | 'TERM'): Promise<void> {
    if ((await this.r.sismember(this.k('processes'), identity)) === 0) throw new NotThere(`no process ${identity} is listed (it stopped meanwhile)`);
    const key = this.k(`${identity}-signals`);
    const res = (await this.r.multi().lpush(key, signal).expire(key, SIGNAL_TTL_S).exec()) ?? [];
    for (const [err] of res) if (err) throw err;
  }

  /** The member of `set` at `score` whose jid is `jid` (several may share a score). */
  private async find(set: SortedSetName, score: string, jid: string): Promise<string> {
    // An entry that is no job has no jid to act by (its key ends in "-"): not acted on from here.
    const member = jid === '' ? undefined : await entryAt(this.r, this.k(set), score, jid);
    if (member === undefined) throw gone(set, jid);
    return member;
  }

  private move(set: SortedSetName, member: string): Promise<number> {
    const move = moveArgs(set, member, this.now());
    if (!move) throw new CannotAct('the entry is no job Sidekiq could run (its JSON does not parse or names no queue): delete it instead');
    return this.r.skMoveEntry(this.k(set), this.k(`queue:${move.queue}`), this.k('queues'), member, move.payload, move.queue);
  }

  private killMember(set: SortedSetName, member: string): Promise<number> {
    return this.r.skKillEntry(this.k(set), this.k('dead'), member, ...this.deathArgs());
  }

  private deathArgs(): [string, string, string] {
    const now = this.now() / 1000;
    return [String(now), String(now - DEAD_TIMEOUT_S), String(DEAD_MAX_JOBS)];
  }
}

const SET_NAMES: Record<SortedSetName, string> = { retry: 'retry set', schedule: 'scheduled set', dead: 'dead set' };

const gone = (set: SortedSetName, jid: string) =>
  new NotThere(`job ${jid} is no longer in the ${SET_NAMES[set]} at that time (retried, moved or deleted meanwhile): reload the list`);

/**
 * What Client.push would push for this entry: the job with `enqueued_at` = now, and from the retry
 * or dead set `retry_count` one less (SortedEntry#retry, so the next failure counts the same
 * attempt again). Every other member is kept byte for byte (a JSON round trip would round an
 * integer past 2^53 in the args). Null when the entry is no job with a queue.
 */
function moveArgs(set: SortedSetName, member: string, nowMs: number): { queue: string; payload: string } | null {
  const job = jobObject(member);
  if (!job || typeof job.queue !== 'string' || job.queue === '') return null;
  const changes: Record<string, unknown> = { enqueued_at: nowMs / 1000 };
  if (set !== 'schedule' && typeof job.retry_count === 'number') changes.retry_count = job.retry_count - 1;
  const payload = withJsonMembers(member, changes);
  return payload === null ? null : { queue: job.queue, payload };
}
