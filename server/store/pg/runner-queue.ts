// X-GitLab-Last-Update shared by every instance on one database (context.ts RunnerQueue). GitLab
// keeps the value in shared Redis; a per-instance value made a runner whose polls land on different
// instances never see its last_update echoed, so it never had the 204 short cut. Here the value is
// two rows of the settings table: an epoch made once per database (a database made anew starts
// another, so no value from the old one matches) and a counter.
//
// The counter is moved in the transaction that makes builds pending, by an UPDATE whose row lock is
// held to the commit: counters are then in commit order, and a value read from the row never names a
// build not yet visible to a poll. Each instance follows the row: at start, after its own creates,
// when another's build:pending is heard (domain.ts), and after a LISTEN reconnect (resync).
import crypto from 'node:crypto';
import type { Queryable } from './connect.ts';
import { PgSecrets } from './secrets.ts';

const EPOCH_KEY = 'runner_queue_epoch';
export const COUNTER_KEY = 'runner_queue_counter';

/** What this follows the rows into: context.ts RunnerQueue, whose value the runner API answers. */
export interface FollowingQueue {
  follow(epoch: string, counter: number): void;
}

/**
 * A runner's X-GitLab-Last-Update as the shared counter it names: `counter` is its counter under
 * this database's epoch, null when it names none (another epoch, or no value sent), so any take goes ahead.
 */
export interface SeenCounter {
  counter: string | null;
}

export class PgRunnerQueue {
  private constructor(
    private readonly pool: Queryable,
    private readonly epoch: string,
    private readonly queue: FollowingQueue,
  ) {}

  /** Makes the rows when missing (the first instance's win when several start at once) and follows them. */
  static async open(pool: Queryable, queue: FollowingQueue): Promise<PgRunnerQueue> {
    const secrets = new PgSecrets(pool);
    const epoch = await secrets.ensure(EPOCH_KEY, undefined, () => crypto.randomBytes(4).toString('hex'));
    await secrets.ensure(COUNTER_KEY, undefined, () => '0');
    const shared = new PgRunnerQueue(pool, epoch, queue);
    await shared.refresh();
    return shared;
  }

  /** In the transaction making builds pending: the counter moved, its row locked to the commit. Apply it after the commit (moved). */
  async tick(tx: Queryable): Promise<number> {
    const { rows } = await tx.query<{ n: string }>(`UPDATE settings SET value = (value::bigint + 1)::text WHERE key = $1 RETURNING value AS n`, [COUNTER_KEY]);
    return Number(rows[0]?.n ?? 0);
  }

  /** A counter this instance committed: runners polling here see it from now on. */
  moved(counter: number): void {
    this.queue.follow(this.epoch, counter);
  }

  /**
   * The counter a runner's X-GitLab-Last-Update names under this database's epoch, for the poll's
   * statement to compare with the row (take.ts pollBuild); null when it names none.
   */
  seen(lastUpdate: string | undefined): SeenCounter {
    const prefix = `${this.epoch}-`;
    return { counter: lastUpdate?.startsWith(prefix) ? lastUpdate.slice(prefix.length) : null };
  }

  /** The value runners are answered for `counter`, one a poll's statement read (and followed from now on). */
  answered(counter: number): string {
    this.moved(counter);
    return `${this.epoch}-${counter}`;
  }

  /** Reads the row: for changes other instances committed. */
  async refresh(): Promise<void> {
    const { rows } = await this.pool.query<{ n: string }>('SELECT value AS n FROM settings WHERE key = $1', [COUNTER_KEY]);
    this.moved(Number(rows[0]?.n ?? 0));
  }
}
