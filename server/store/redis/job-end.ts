// Recording the end of jobs taken from Redis (ack, retry later, kill), so that an outage loses no
// end and a retried write never counts twice:
// - one script per batch: for each job, LREM from the working list; ONLY if that removed the entry
//   are its counters added and its retry or dead entry written. A reply lost with the connection
//   (the write done, the answer never read) is retried, finds no entry and does nothing.
// - an end that fails because Redis is away stays pending and is retried with backoff (capped) and
//   at once when the connection is ready again; its job keeps its slot and stays in the heartbeat's
//   workers meanwhile, as it is still in the working list. Never dropped for a restart to redo.
import type { JobCounters } from '../../jobs/types.ts';
import { isRedisOutage } from './outage.ts';

export interface JobEnd {
  raw: string;
  counters: JobCounters;
  /** The retry or dead entry written with the end, if any. */
  set?: { key: 'retry' | 'dead'; score: number; payload: string; keep: number };
}

interface Pending extends JobEnd {
  done(err?: unknown): void;
}

export interface EndWriterDeps {
  /** Runs end.lua (args as above), its failures for an outage told apart by isRedisOutage. */
  run(args: string[]): Promise<unknown>;
  /** ARGV[1..3] of the script now. */
  head(): string[];
}

const FIRST_RETRY_MS = 100;
const MOST_RETRY_MS = 5000;

/** Ends asked for in one turn of the event loop are written in one script call; outages retried. */
export class EndWriter {
  private queued: Pending[] = [];
  /** Ends whose write failed for an outage, waiting for the next try. */
  private waiting: Pending[] = [];
  private retryMs = FIRST_RETRY_MS;
  private timer: NodeJS.Timeout | undefined;
  private flushing = 0;
  private closed = false;

  constructor(private readonly deps: EndWriterDeps) {}

  /** Resolves once the end is in Redis (however many outages that takes); rejects only for a non-outage error or close(). */
  end(e: JobEnd): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('the job backend has left'));
      // After this turn's microtasks: the ends of every job that finished in it are collected.
      if (this.queued.length === 0) process.nextTick(() => this.flush(this.take()));
      this.queued.push({ ...e, done: (err) => (err === undefined ? resolve() : reject(err as Error)) });
    });
  }

  /** How many ends are not yet written. */
  get pending(): number {
    return this.queued.length + this.waiting.length + this.flushing;
  }

  /** The connection is ready again: try the waiting ends now instead of at the backoff's end. */
  retryNow(): void {
    if (this.waiting.length === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.retryMs = FIRST_RETRY_MS;
    const batch = this.waiting;
    this.waiting = [];
    this.flush(batch);
  }

  /** Gives up on what is not written (the process leaves): those jobs stay in the working list. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const p of [...this.queued, ...this.waiting]) p.done(new Error('the job backend left before Redis came back; the job stays in its working list'));
    this.queued = [];
    this.waiting = [];
  }

  private take(): Pending[] {
    const batch = this.queued;
    this.queued = [];
    return batch;
  }

  private flush(batch: Pending[]): void {
    if (batch.length === 0) return;
    const args = [...this.deps.head()];
    for (const p of batch) {
      args.push(p.raw, String(p.counters.processed), String(p.counters.failed), p.set?.key ?? '', String(p.set?.score ?? 0), p.set?.payload ?? '', String(p.set?.keep ?? 0));
    }
    this.flushing += batch.length;
    this.deps.run(args).then(
      () => {
        this.flushing -= batch.length;
        this.retryMs = FIRST_RETRY_MS;
        for (const p of batch) p.done();
      },
      (err: unknown) => {
        this.flushing -= batch.length;
        if (!isRedisOutage(err) || this.closed) {
          for (const p of batch) p.done(err ?? new Error('Redis script failed'));
          return;
        }
        this.waiting.push(...batch);
        if (this.timer === undefined) {
          const wait = this.retryMs;
          this.retryMs = Math.min(MOST_RETRY_MS, this.retryMs * 2);
          this.timer = setTimeout(() => {
            this.timer = undefined;
            const again = this.waiting;
            this.waiting = [];
            this.flush(again);
          }, wait);
        }
      },
    );
  }
}
