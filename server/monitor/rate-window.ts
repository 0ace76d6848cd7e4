// The counters' change over a window rather than since the previous sample. Sidekiq adds to
// stat:processed and stat:failed once per heartbeat (every 5 s) per process, so between two
// samples 2 s apart the change is 0 or a whole heartbeat's worth: the rate drew a sawtooth
// (0 → 15/s → 0). A window of at least two heartbeats holds about as many flushes every time.

/** At least two of Sidekiq's 5 s heartbeats, so every process flushes at least once inside. */
export const RATE_WINDOW_MS = 10_000;

interface Reading {
  t: number;
  processed: number;
  failed: number;
  /** Change since the reading before (a counter reset counts from zero). */
  processedInc: number;
  failedInc: number;
}

export interface WindowChange {
  processedInc: number;
  failedInc: number;
  /** Seconds the window spans. */
  dt: number;
}

export class RateWindow {
  private readings: Reading[] = [];

  /**
   * Takes a reading; answers the change from the newest earlier reading at least RATE_WINDOW_MS
   * older (or the oldest one while the history is younger), null when there is none to diff
   * against or the last one is more than `maxSpanMs` old (downtime: a fresh start).
   */
  add(t: number, processed: number, failed: number, maxSpanMs: number): WindowChange | null {
    const last = this.readings.at(-1);
    if (!last || t - last.t > maxSpanMs) {
      this.readings = [{ t, processed, failed, processedInc: 0, failedInc: 0 }];
      return null;
    }
    this.readings.push({ t, processed, failed, processedInc: increase(last.processed, processed), failedInc: increase(last.failed, failed) });
    let start = 0;
    for (let i = this.readings.length - 2; i >= 0; i--) {
      if (t - this.readings[i]!.t >= RATE_WINDOW_MS) {
        start = i;
        break;
      }
    }
    // Readings before the start are older than any later window needs.
    this.readings = this.readings.slice(start);
    let processedInc = 0;
    let failedInc = 0;
    for (let i = 1; i < this.readings.length; i++) {
      processedInc += this.readings[i]!.processedInc;
      failedInc += this.readings[i]!.failedInc;
    }
    return { processedInc, failedInc, dt: (t - this.readings[0]!.t) / 1000 };
  }
}

/** Counter increase between two readings; a drop means the counter restarted from zero. */
export function increase(before: number, after: number): number {
  return after >= before ? after - before : after;
}
