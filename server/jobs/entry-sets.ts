// How a backend names the entries of its retry and dead sets, chosen once per backend. Redis names
// them by key (sorted-set members, EntryAddressed): entries are found by key and each removed
// exactly, never by a number two entries could share. Row backends (SQLite, PostgreSQL) name them
// by row id: the retry set is read where the dispatch keeps it, the dead set from the rows.
import { after, isEntryAddressed, type Awaitable, type EntryAddressed, type JobBackend } from './backend.ts';
import type { Dispatch } from './dispatch.ts';
import type { EntryKey, FailedSet } from './entry-key.ts';
import { rowIds } from './failed-entries.ts';
import type { FailedJob } from './types.ts';

export interface EntrySets {
  /** The entries of `set` the keys could name (all when absent). */
  entries(set: FailedSet, keys: EntryKey[] | undefined): Awaitable<readonly FailedJob[]>;
  /** Puts these entries back into their queues by hand (Retry now); answers those moved. */
  requeue(set: FailedSet, jobs: FailedJob[]): Awaitable<readonly FailedJob[]>;
  /** Removes these entries; answers those removed. */
  remove(set: FailedSet, found: FailedJob[]): Awaitable<readonly FailedJob[]>;
  /** Moves these retry set entries into the dead set, dead now; answers those moved. */
  kill(found: FailedJob[]): Awaitable<readonly FailedJob[]>;
}

export interface EntrySetsDeps {
  dispatch(): Dispatch;
  now(): number;
  /** How many deaths the dead set keeps (Sidekiq's dead_max_jobs). */
  deadMax(): number;
  /** Puts jobs of `set` back into their queues by row id, as of now, by hand (Retry now). */
  requeueRows(set: FailedSet, jobs: FailedJob[]): Awaitable<void>;
}

export function entrySetsOf(backend: JobBackend, deps: EntrySetsDeps): EntrySets {
  return isEntryAddressed(backend) ? new KeyedEntries(backend, deps) : new RowEntries(backend, deps);
}

class KeyedEntries implements EntrySets {
  constructor(
    private readonly backend: EntryAddressed,
    private readonly d: EntrySetsDeps,
  ) {}

  entries(set: FailedSet, keys: EntryKey[] | undefined): Promise<FailedJob[]> {
    return this.backend.entries(set, keys);
  }

  requeue(set: FailedSet, jobs: FailedJob[]): Promise<FailedJob[]> {
    const now = this.d.now();
    return this.backend.requeueEntries(set, jobs, now, true).then((moved) => {
      this.d.dispatch().requeued(moved, now);
      return moved;
    });
  }

  remove(set: FailedSet, found: FailedJob[]): Promise<FailedJob[]> {
    return this.backend.removeEntries(set, found);
  }

  kill(found: FailedJob[]): Promise<FailedJob[]> {
    return this.backend.killEntries(found, this.d.now(), this.d.deadMax());
  }
}

class RowEntries implements EntrySets {
  constructor(
    private readonly backend: JobBackend,
    private readonly d: EntrySetsDeps,
  ) {}

  entries(set: FailedSet, keys: EntryKey[] | undefined): Awaitable<readonly FailedJob[]> {
    if (set === 'retry') return this.d.dispatch().retries();
    return this.backend.deadByIds(keys && rowIds(keys));
  }

  requeue(set: FailedSet, jobs: FailedJob[]): Awaitable<readonly FailedJob[]> {
    const taken = set === 'retry' ? this.d.dispatch().takeRetries(jobs) : jobs;
    return after(this.d.requeueRows(set, taken), () => taken);
  }

  remove(set: FailedSet, found: FailedJob[]): Awaitable<readonly FailedJob[]> {
    if (set === 'retry') this.d.dispatch().takeRetries(found);
    return after(this.backend.deleteFailed(found.map((j) => j.id), set), (ids) => {
      const gone = new Set(ids);
      return found.filter((j) => gone.has(j.id));
    });
  }

  kill(found: FailedJob[]): Awaitable<readonly FailedJob[]> {
    const taken = this.d.dispatch().takeRetries(found);
    return after(this.backend.killRetries(taken.map((j) => j.id), this.d.now(), this.d.deadMax()), (ids) => {
      const killed = new Set(ids);
      return taken.filter((j) => killed.has(j.id));
    });
  }
}
