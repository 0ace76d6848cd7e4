// Time as a dependency: the job system, the demo load and the metrics read the clock they are given,
// so a test can move time forward by an hour in one call instead of waiting for it.

export type Cancel = () => void;

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Runs fn once after `ms`; never keeps the process alive. */
  after(ms: number, fn: () => void): Cancel;
  /** Runs fn every `ms` until cancelled; never keeps the process alive. */
  every(ms: number, fn: () => void): Cancel;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
  every(ms, fn) {
    const t = setInterval(fn, ms);
    t.unref();
    return () => clearInterval(t);
  },
};

interface Timer {
  at: number;
  seq: number;
  /** 0 for a one-shot timer. */
  period: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told: `advance(ms)` runs every timer due on the way, in time order,
 * each seeing `now()` at its own due time (as real timers would).
 */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start = Date.now()) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): Cancel {
    return this.add(ms, 0, fn);
  }

  every(ms: number, fn: () => void): Cancel {
    // A zero period would make advance() spin forever; real intervals are clamped to 1 ms too.
    return this.add(ms, Math.max(1, ms), fn);
  }

  /** Timers not yet run or cancelled. */
  get pending(): number {
    return this.timers.filter((x) => !x.cancelled).length;
  }

  /** Moves time forward by `ms`, running what falls due; a timer that throws stops the advance. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`advance(${ms}): time only moves forward`);
    const end = this.t + ms;
    for (;;) {
      const next = this.nextDue(end);
      if (!next) break;
      this.t = next.at;
      if (next.period > 0) next.at += next.period;
      else next.cancelled = true;
      next.fn();
    }
    this.t = end;
    this.timers = this.timers.filter((x) => !x.cancelled);
  }

  private nextDue(end: number): Timer | undefined {
    let best: Timer | undefined;
    for (const x of this.timers) {
      if (x.cancelled || x.at > end) continue;
      if (!best || x.at < best.at || (x.at === best.at && x.seq < best.seq)) best = x;
    }
    return best;
  }

  private add(ms: number, period: number, fn: () => void): Cancel {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, period, fn, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }
}
