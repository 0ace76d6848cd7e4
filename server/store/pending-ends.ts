// The ends of jobs (done, retry later, dead) as the shared job backends write them: the ends asked
// for in one turn of the event loop go in one write, and a write that fails because the engine is
// away (Redis or PostgreSQL down, restarting, frozen) is kept and tried again with backoff, and at
// once when the connection is back, until it is written. Never dropped for a restart to redo: the
// job would run twice. Each backend's write must be idempotent (an end whose answer was lost is
// written again and must change and count nothing the second time): redis/scripts/end.lua and
// pg/job-backend.ts's statements do that by ending only a job this process still holds.

const FIRST_RETRY_MS = 100;
const MOST_RETRY_MS = 5000;

interface Pending<E> {
  end: E;
  done(err?: unknown): void;
}

export interface PendingEndsDeps<E> {
  /** Writes a batch of ends at once. */
  write(batch: E[]): Promise<unknown>;
  /** Whether a failed write is the engine being away (kept and retried) rather than a bug (rejected). */
  isOutage(err: unknown): boolean;
  /** Told of each failed write of an outage, e.g. to hold back orphan recovery. */
  onOutage?(): void;
}

export class PendingEnds<E> {
  private queued: Pending<E>[] = [];
  /** Ends whose write failed for an outage, waiting for the next try. */
  private waiting: Pending<E>[] = [];
  private retryMs = FIRST_RETRY_MS;
  private timer: NodeJS.Timeout | undefined;
  private flushing = 0;
  private closed = false;

  constructor(private readonly deps: PendingEndsDeps<E>) {}

  /** Resolves once the end is written (however many outages that takes); rejects only for a non-outage error or close(). */
  end(e: E): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('the job backend has left'));
      // After this turn's microtasks: the ends of every job that finished in it are collected.
      if (this.queued.length === 0) process.nextTick(() => this.flush(this.take()));
      this.queued.push({ end: e, done: (err) => (err === undefined ? resolve() : reject(err as Error)) });
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

  /**
   * Tries the waiting ends now and resolves once none is left unwritten, or after `ms`: a read or a
   * clear of the retry and dead sets then sees the ends of jobs that finished before it was asked.
   */
  async settled(ms: number): Promise<void> {
    if (this.pending === 0) return;
    this.retryNow();
    const until = Date.now() + ms;
    while (this.pending > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  }

  /** Gives up on what is not written (the process leaves): those jobs stay claimed by it. */
  close(why: string): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const p of [...this.queued, ...this.waiting]) p.done(new Error(why));
    this.queued = [];
    this.waiting = [];
  }

  private take(): Pending<E>[] {
    const batch = this.queued;
    this.queued = [];
    return batch;
  }

  private flush(batch: Pending<E>[]): void {
    if (batch.length === 0) return;
    this.flushing += batch.length;
    this.deps.write(batch.map((p) => p.end)).then(
      () => {
        this.flushing -= batch.length;
        this.retryMs = FIRST_RETRY_MS;
        for (const p of batch) p.done();
      },
      (err: unknown) => {
        this.flushing -= batch.length;
        if (!this.deps.isOutage(err) || this.closed) {
          for (const p of batch) p.done(err ?? new Error('writing the end of a job failed'));
          return;
        }
        this.deps.onOutage?.();
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
