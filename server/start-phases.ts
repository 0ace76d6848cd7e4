// Where a server's start spends its time, phase by phase, so "server ready" (bench/startup.ts) can
// be read as the parts a change moves rather than one total that the machine's load moves 3×.
// `serve` prints the line once it listens; the bench reads it from there.

export interface StartPhase {
  name: string;
  ms: number;
}

export class StartPhases {
  readonly list: StartPhase[] = [];
  private last: number;

  /** `since`: when the first phase began; by default the process's start (performance's time origin). */
  constructor(since = 0) {
    this.last = since;
  }

  /** Ends the phase running now, named `name`. */
  end(name: string): void {
    const now = performance.now();
    this.list.push({ name, ms: now - this.last });
    this.last = now;
  }

  /** e.g. "modules 180 ms, store 75 ms, routes 40 ms, services 4 ms, listen 1 ms" */
  toString(): string {
    return this.list.map((p) => `${p.name} ${Math.round(p.ms)} ms`).join(', ');
  }
}
