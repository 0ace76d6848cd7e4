// The start over a shared backend (Redis, PostgreSQL), which may be down, refusing or frozen: the
// first try is awaited up to START_WAIT_MS (the backend bounds the try itself), then the server
// starts DEGRADED and keeps trying in the background with a capped backoff; job routes answer 503
// meanwhile (the backend's StorageError) and the status says why. The job system begins by itself
// once the backend answers.
import type { Awaitable, RecoveredJobs, SharedJobBackend } from './backend.ts';

// From this wait doubling up to the cap: the server listens meanwhile.
const FIRST_RETRY_MS = 500;
const MOST_RETRY_MS = 10_000;
/** How long the start waits for a first answer before it goes on degraded (the try goes on meanwhile). */
const START_WAIT_MS = 3000;

export class BringUp {
  /** While the backend has not answered at start: why (the sentence the status shows). */
  notBegun: string | undefined;
  /** Ends the wait between tries at the stop. */
  private stopWake: (() => void) | null = null;

  constructor(
    private readonly backend: SharedJobBackend,
    private readonly stopping: () => boolean,
  ) {}

  /** Answers once begun or gone on degraded; `retries` receives the background tries, for the stop to await. */
  async start(begin: (kept: RecoveredJobs) => Awaitable<void>, retries: (p: Promise<void>) => void): Promise<void> {
    const backend = this.backend;
    const where = backend.reachability?.();
    this.notBegun = where ? `waiting for Redis at ${where.where}: connecting` : 'waiting for the job store: connecting';
    const first = this.tryBegin(begin);
    let timer: NodeJS.Timeout | undefined;
    const begun = await Promise.race([first, new Promise<false>((r) => (timer = setTimeout(() => r(false), START_WAIT_MS)))]);
    clearTimeout(timer);
    if (begun === true) return;
    retries(
      (async () => {
        if (await first) return;
        for (let wait = FIRST_RETRY_MS; !this.stopping(); wait = Math.min(MOST_RETRY_MS, wait * 2)) {
          // Cut short once the backend's own reconnect succeeded: the begin need not wait out the backoff.
          const until = Date.now() + wait;
          do await this.pause(Math.min(250, wait));
          while (!this.stopping() && Date.now() < until && backend.reachability?.().reason !== undefined);
          if (this.stopping() || (await this.tryBegin(begin))) return;
        }
      })(),
    );
  }

  /** Ends the wait between tries. */
  wake(): void {
    this.stopWake?.();
  }

  private async tryBegin(begin: (kept: RecoveredJobs) => Awaitable<void>): Promise<boolean> {
    let kept: RecoveredJobs;
    try {
      kept = await this.backend.recover();
    } catch (err) {
      const where = this.backend.reachability?.();
      const reason = where?.reason ?? (err instanceof Error ? err.message : String(err));
      this.notBegun = where ? `waiting for Redis at ${where.where}: ${reason}` : `waiting for the job store: ${reason}`;
      return false;
    }
    this.notBegun = undefined;
    // Answered during the stop: beginning now would start timers the stop has already cancelled.
    if (!this.stopping()) await begin(kept);
    return true;
  }

  /** Waits `ms`, or until the stop. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.stopWake = () => (clearTimeout(t), resolve());
    });
  }
}
