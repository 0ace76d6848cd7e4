// Group commit for `builds/register`. Every poll that hands out a build is a write (and one that
// records contact may be); one SQLite transaction each made a WAL commit per poll, several 4 KiB
// pages appended per commit, and that commit cost more than the rest of the poll. Polls that reach
// this point in the same event-loop turn are handled in ONE transaction instead, in arrival order
// (each still takes the oldest pending build it may, so exactly-once and oldest-first hold as
// before), and every answer waits until COMMIT has returned: an acknowledged build is in the WAL,
// in the kernel, as the durability rule asks.
import type { Store } from '../store/index.ts';
import type { Build } from '../store/builds.ts';
import type { Runner, RunnerInfo } from '../store/runners.ts';

interface Poll {
  runner: Runner;
  info: RunnerInfo | undefined;
  take: boolean;
  resolve(build: Build | undefined): void;
  reject(err: unknown): void;
}

export class DispatchBatch {
  private queue: Poll[] = [];
  private scheduled = false;

  constructor(private readonly store: Store) {}

  /**
   * Records the runner's contact and, when `take`, hands it the oldest pending build it may take.
   * Resolves once the batch's transaction has committed (undefined: nothing for this runner).
   */
  poll(runner: Runner, info: RunnerInfo | undefined, take: boolean): Promise<Build | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ runner, info, take, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // The check phase runs right after the poll phase that read this turn's requests.
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const polls = this.queue;
    this.queue = [];
    const { db, runners, builds } = this.store;
    let results: (Build | undefined)[];
    try {
      results = db.tx(() =>
        polls.map((p) => {
          // Paused or deleted by a request that ran after this poll authenticated it.
          if (!runners.stillActive(p.runner)) return undefined;
          runners.touch(p.runner, p.info);
          return p.take ? builds.take(p.runner) : undefined;
        }),
      );
    } catch (err) {
      for (const p of polls) p.reject(err);
      return;
    }
    polls.forEach((p, i) => p.resolve(results[i]));
  };
}
