// The last answer's bytes, kept while the system is unchanged: a dashboard or a GitLab polling
// compound_metrics of an idle or slow system asks for the same 160 KB again and again (1,000
// queues, 500 processes), and writing it cost ~1 ms of string building and the UTF-8 encoding of
// the text twice (its length, then the socket write) per call, and 160 KB of garbage each time.
// Whether anything changed is read from everything an answer is made of, without allocating:
// each queue (the object, its backlog and latency now), each process (the object, its version,
// which moves whenever anything but busy does, and busy) and the counters.
import type { MetricsView } from '../metrics/source.ts';

export class AnswerMemo {
  private readonly refs: unknown[] = [];
  private readonly nums: number[] = [];
  private bytes: Buffer | undefined;

  constructor(private readonly write: (view: MetricsView, now: number) => string | Buffer) {}

  answer(view: MetricsView, now: number): Buffer {
    const changed = this.record(view, now);
    if (changed || this.bytes === undefined) {
      const answer = this.write(view, now);
      this.bytes = typeof answer === 'string' ? Buffer.from(answer, 'utf8') : answer;
    }
    return this.bytes;
  }

  /** Stores this moment's inputs over the last ones; true when any differs. */
  private record(view: MetricsView, now: number): boolean {
    const { refs, nums } = this;
    let r = 0;
    let n = 0;
    let changed = false;
    const ref = (x: unknown) => {
      if (refs[r] !== x) {
        refs[r] = x;
        changed = true;
      }
      r++;
    };
    const num = (x: number) => {
      // Object.is: NaN equals itself, and -0 differs from 0 (JSON prints both as 0 anyway).
      if (!Object.is(nums[n], x)) {
        nums[n] = x;
        changed = true;
      }
      n++;
    };
    for (const q of view.queues()) {
      ref(q);
      num(q.backlog);
      num(q.latency(now));
    }
    for (const p of view.processes()) {
      ref(p);
      num(p.version);
      num(p.busy);
    }
    const { processed, failed } = view.counters();
    num(processed);
    num(failed);
    if (refs.length !== r || nums.length !== n) {
      refs.length = r;
      nums.length = n;
      changed = true;
    }
    return changed;
  }
}
