// A seeded PRNG (mulberry32): the same seed gives the same fleet, logs, faults and demo load, run
// after run. Written by hand because it is five lines and Math.random cannot be seeded.
// In common/ because both the server (demo load, through server/util/prng.ts) and the simulator use
// it and the simulator may not import server/: one generator, one sequence per seed.
export class Prng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /**
   * Fills `into` with a byte per draw, the very bytes `(next() * 256) | 0` would give, and leaves the
   * state where that many next() calls would. One loop on a signed local copy of the state: V8 keeps
   * it in a register, where next()'s unsigned one does not fit a small integer (2-4x slower per byte;
   * the reliability tests draw ~160 MiB of bodies).
   */
  fill(into: Uint8Array): void {
    let s = this.state | 0;
    for (let i = 0; i < into.length; i++) {
      s = (s + 0x6d2b79f5) | 0;
      let t = Math.imul(s ^ (s >>> 15), s | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      // The draw's top byte: (u / 2^32 * 256) | 0 is u >>> 24 exactly.
      into[i] = (t ^ (t >>> 14)) >>> 24;
    }
    this.state = s >>> 0;
  }
  int(min: number, maxInclusive: number): number {
    return min + Math.floor(this.next() * (maxInclusive - min + 1));
  }
  chance(p: number | undefined): boolean {
    return p !== undefined && p > 0 && this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  /** A derived generator, so one runner's draws do not shift another's. */
  fork(salt: number): Prng {
    return new Prng((Math.imul(this.state ^ salt, 2654435761) + salt) >>> 0);
  }
}

/** The same generator as a plain function: a seeded stand-in for Math.random. */
export function seededRandom(seed: number): () => number {
  const p = new Prng(seed);
  return () => p.next();
}
