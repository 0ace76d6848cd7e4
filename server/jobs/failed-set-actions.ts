// What the control and app APIs do to the retry and dead sets (Sidekiq Web's Retry now, Delete, Kill): entries
// named by key, acted on, exactly what was done counted. How the backend names its entries is
// entry-sets.ts's.
import { after, type Awaitable, type JobBackend } from './backend.ts';
import type { Dispatch } from './dispatch.ts';
import { entrySetsOf, type EntrySets } from './entry-sets.ts';
import type { FailedSet } from './entry-key.ts';
import { missingKeys, parseKeys, refuseUnreadable, resolveKeys, type GivenKey } from './failed-entries.ts';
import { retriedByHand, type FailedJob } from './types.ts';

/** What a retry or delete by keys did: how many entries it acted on, and the keys that named none (already gone). */
export interface Acted {
  count: number;
  missing: GivenKey[];
}

export class FailedSetActions {
  private readonly sets: EntrySets;

  constructor(
    private readonly backend: JobBackend,
    private readonly dispatch: () => Dispatch,
    private readonly now: () => number,
    deadMax: () => number,
  ) {
    this.sets = entrySetsOf(backend, { dispatch, now, deadMax, requeueRows: (set, jobs) => this.requeue(jobs, set) });
  }

  /** Moves retry entries (all, or those the keys name) back into their queues now, each count lowered as Sidekiq Web's Retry now does. */
  retryNow(given?: GivenKey[]): Awaitable<Acted> {
    return this.actOn('retry', given, (found) => this.requeueEntries('retry', found, given !== undefined));
  }

  /** Deletes entries from the retry set (Sidekiq Web's Delete): they never run again. */
  deleteRetries(given: GivenKey[]): Awaitable<Acted> {
    return this.actOn('retry', given, (found) => this.sets.remove('retry', found));
  }

  /** Kill (Sidekiq Web's): entries of the retry set (all, or those the keys name) into the dead set now. */
  killRetries(given?: GivenKey[]): Awaitable<Acted> {
    return this.actOn('retry', given, (found) => this.sets.kill(found));
  }

  deleteDead(given: GivenKey[]): Awaitable<Acted> {
    return this.actOn('dead', given, (found) => this.sets.remove('dead', found));
  }

  /** Moves dead jobs (all, or those the keys name) back into their queues, counted as Sidekiq Web's Retry now does; returns how many. */
  retryDead(given?: GivenKey[]): Awaitable<number> {
    return after(this.actOn('dead', given, (found) => this.requeueEntries('dead', found, given !== undefined)), (a) => a.count);
  }

  /** The entries of `set` one key names (none when gone); EntryKeyError when it cannot name an entry or names several. */
  named(set: FailedSet, given: GivenKey): Awaitable<FailedJob[]> {
    const keys = parseKeys([given]);
    return after(this.sets.entries(set, keys), (all) => resolveKeys(all, keys, [given], set).found);
  }

  /**
   * Puts these jobs back into their queues as of now, through the backend, then the dispatch:
   * retried by hand from `byHandFrom` (Retry now), else their retry came due.
   */
  requeue(jobs: FailedJob[], byHandFrom?: FailedSet): Awaitable<void> {
    if (jobs.length === 0) return;
    const now = this.now();
    const back = byHandFrom ? jobs.map((j) => ({ ...j, retry_count: retriedByHand(j.retry_count, byHandFrom) })) : jobs;
    return after(
      this.backend.requeue(
        back.map((j) => j.id),
        now,
        byHandFrom !== undefined,
      ),
      () => this.dispatch().requeued(back, now),
    );
  }

  /** Resolves the keys (EntryKeyError when one cannot name an entry or names several), acts, counts exactly what was done. */
  private actOn(set: FailedSet, given: GivenKey[] | undefined, act: (found: FailedJob[]) => Awaitable<readonly FailedJob[]>): Awaitable<Acted> {
    const keys = given && parseKeys(given);
    return after(this.sets.entries(set, keys), (all) => {
      const r = keys && given ? resolveKeys(all, keys, given, set) : { found: [...all], byKey: [] };
      return after(act(r.found), (done) => ({ count: done.length, missing: given ? missingKeys(r, given, done) : [] }));
    });
  }

  /** Entries that are no job are refused when named, skipped when all are moved. */
  private requeueEntries(set: FailedSet, found: FailedJob[], named: boolean): Awaitable<readonly FailedJob[]> {
    if (named) refuseUnreadable(found, set);
    return this.sets.requeue(
      set,
      found.filter((j) => !j.unreadable),
    );
  }
}
