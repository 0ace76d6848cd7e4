// What the control API does to the retry and dead sets (Sidekiq Web's Retry now, Delete, Clear):
// entries named by key, acted on, exactly what was done counted. Entries are found by key where the
// backend names them so (Redis: sorted-set members, EntryAddressed), by row id otherwise.
import { after, isEntryAddressed, type Awaitable, type JobBackend } from './backend.ts';
import type { Dispatch } from './dispatch.ts';
import type { EntryKey, FailedSet } from './entry-key.ts';
import { missingKeys, parseKeys, refuseUnreadable, resolveKeys, rowIds, type GivenKey } from './failed-entries.ts';
import type { FailedJob } from './types.ts';

/** What a retry or delete by keys did: how many entries it acted on, and the keys that named none (already gone). */
export interface Acted {
  count: number;
  missing: GivenKey[];
}

export class FailedSetActions {
  constructor(
    private readonly backend: JobBackend,
    private readonly dispatch: () => Dispatch,
    private readonly now: () => number,
  ) {}

  /** Moves retry entries (all, or those the keys name) back into their queues now; their retry count stays. */
  retryNow(given?: GivenKey[]): Awaitable<Acted> {
    return this.actOn('retry', given, (found) => this.requeueEntries('retry', found, given !== undefined));
  }

  /** Deletes entries from the retry set (Sidekiq Web's Delete): they never run again. */
  deleteRetries(given: GivenKey[]): Awaitable<Acted> {
    return this.actOn('retry', given, (found) => this.removeEntries('retry', found));
  }

  deleteDead(given: GivenKey[]): Awaitable<Acted> {
    return this.actOn('dead', given, (found) => this.removeEntries('dead', found));
  }

  /** Moves dead jobs (all, or those the keys name) back into their queues; returns how many. */
  retryDead(given?: GivenKey[]): Awaitable<number> {
    return after(this.actOn('dead', given, (found) => this.requeueEntries('dead', found, given !== undefined)), (a) => a.count);
  }

  /** Puts these jobs back into their queues as of now, through the backend, then the dispatch. */
  requeue(jobs: FailedJob[]): Awaitable<void> {
    if (jobs.length === 0) return;
    const now = this.now();
    return after(
      this.backend.requeue(
        jobs.map((j) => j.id),
        now,
      ),
      () => this.dispatch().requeued(jobs, now),
    );
  }

  /** The entries of `set` the keys could name (all when absent): Redis's by key, else the mirror's or the rows'. */
  private entriesFor(set: FailedSet, keys: EntryKey[] | undefined): Awaitable<readonly FailedJob[]> {
    if (isEntryAddressed(this.backend)) return this.backend.entries(set, keys);
    if (set === 'retry') return this.dispatch().retries();
    return this.backend.deadByIds(keys && rowIds(keys));
  }

  /** Resolves the keys (EntryKeyError when one cannot name an entry or names several), acts, counts exactly what was done. */
  private actOn(set: FailedSet, given: GivenKey[] | undefined, act: (found: FailedJob[]) => Awaitable<readonly FailedJob[]>): Awaitable<Acted> {
    const keys = given && parseKeys(given);
    return after(this.entriesFor(set, keys), (all) => {
      const r = keys && given ? resolveKeys(all, keys, given, set) : { found: [...all], byKey: [] };
      return after(act(r.found), (done) => ({ count: done.length, missing: given ? missingKeys(r, given, done) : [] }));
    });
  }

  /** Entries that are no job are refused when named, skipped when all are moved. */
  private requeueEntries(set: FailedSet, found: FailedJob[], named: boolean): Awaitable<readonly FailedJob[]> {
    if (named) refuseUnreadable(found, set);
    const jobs = found.filter((j) => !j.unreadable);
    if (isEntryAddressed(this.backend)) {
      const now = this.now();
      return this.backend.requeueEntries(set, jobs, now).then((moved) => {
        this.dispatch().requeued(moved, now);
        return moved;
      });
    }
    const taken = set === 'retry' ? this.dispatch().takeRetries(jobs) : jobs;
    return after(this.requeue(taken), () => taken);
  }

  private removeEntries(set: FailedSet, found: FailedJob[]): Awaitable<readonly FailedJob[]> {
    if (isEntryAddressed(this.backend)) return this.backend.removeEntries(set, found);
    if (set === 'retry') this.dispatch().takeRetries(found);
    return after(this.backend.deleteFailed(found.map((j) => j.id), set), (ids) => {
      const gone = new Set(ids);
      return found.filter((j) => gone.has(j.id));
    });
  }
}
