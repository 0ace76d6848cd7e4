// Work the job system starts and nobody awaits: its timers and the writes whose failure is only
// logged. stop() cancels the timers and waits for the writes: in flight, they would use the backend
// after it is left and the pool after it ends.
import type { Cancel, Clock } from '../clock.ts';

export class Background {
  private readonly timers: Cancel[] = [];
  /** Tracked work not yet settled. */
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly clock: Clock,
    /** Once true, timers that fire do nothing. */
    private readonly stopping: () => boolean,
    private readonly log: () => { warn(obj: unknown, msg?: string): void },
  ) {}

  /** Runs fn every `ms` on the clock (not keeping the process alive); a promise it answers is tracked. */
  every(ms: number, fn: () => unknown): void {
    this.timers.push(
      this.clock.every(ms, () => {
        if (this.stopping()) return;
        try {
          this.track(fn());
        } catch (err) {
          this.log().warn({ err }, 'job system timer failed');
        }
      }),
    );
  }

  /** Its failure is the caller's to log; here it is only settled. */
  track(v: unknown): void {
    if (!(v instanceof Promise)) return;
    const settled: Promise<unknown> = v.then(
      () => this.pending.delete(settled),
      () => this.pending.delete(settled),
    );
    this.pending.add(settled);
  }

  cancelTimers(): void {
    for (const cancel of this.timers) cancel();
  }

  /** Waits for tracked work, also work it starts meanwhile, until `deadline` (real time, epoch ms). */
  async settle(deadline: number): Promise<void> {
    while (this.pending.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.pending]), new Promise((r) => (timer = setTimeout(r, left)))]);
      clearTimeout(timer);
    }
  }
}
