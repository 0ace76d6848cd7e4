// For differential tests of two store adapters (test/store/pg-adapters.test.ts, pg-builds.test.ts):
// answers made comparable, and calls reduced to what they answered or that they threw.
//
// Tokens are random on each side, so they are compared as labels: the n-th token first seen on one
// side must be the n-th first seen on the other, wherever it appears again.
export class TokenLabels {
  private readonly labels = new Map<string, string>();

  /**
   * @param tokenKeys the fields whose string values are tokens (or their digests)
   * @param dropped fields of a record one adapter carries and the other does not (nothing reads them)
   */
  constructor(
    private readonly tokenKeys: ReadonlySet<string>,
    private readonly dropped: (record: object, key: string) => boolean = () => false,
  ) {}

  label(token: string): string {
    let l = this.labels.get(token);
    if (!l) {
      l = `token#${this.labels.size + 1}`;
      this.labels.set(token, l);
    }
    return l;
  }

  /** The answer with tokens as labels, Maps as their entries and Sets sorted. */
  norm(v: unknown): unknown {
    if (v instanceof Map) return { map: [...v.entries()] };
    if (v instanceof Set) return { set: [...v].sort() };
    if (Array.isArray(v)) return v.map((x) => this.norm(x));
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v)
          .filter(([k]) => !this.dropped(v, k))
          .map(([k, x]) => [k, this.tokenKeys.has(k) && typeof x === 'string' ? this.label(x) : this.norm(x)]),
      );
    }
    return v;
  }
}

export type Outcome = { ok: unknown } | { threw: true };

/** What a call answered, or that it threw (which error is the adapter's own: both must throw, not the same). */
export async function outcome(fn: () => unknown): Promise<Outcome> {
  try {
    return { ok: await fn() };
  } catch {
    return { threw: true };
  }
}
