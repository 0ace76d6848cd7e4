// Fault injection: which fault (if any) a virtual runner commits at each opportunity, drawn from
// its own seeded PRNG so a scenario misbehaves the same way on every run, and a tally of what the
// server answered to each kind.
import { FAULT_KINDS, type FaultKind, type Faults } from '../contract/simulator.ts';
import type { Prng } from '../common/prng.ts';

/** Faults a runner may commit on one trace part; the others are decided once per build. */
export const PART_FAULTS = ['wrong_range', 'stale_range', 'drop_trace', 'slow_dribble', 'duplicate_part', 'out_of_order'] as const satisfies readonly FaultKind[];
export type PartFault = (typeof PART_FAULTS)[number];

export class FaultPlan {
  constructor(
    private readonly rates: Faults,
    private readonly prng: Prng,
  ) {}

  get any(): boolean {
    return Object.values(this.rates).some((r) => (r ?? 0) > 0);
  }

  /** At most one fault per part, each with its own probability, checked in a fixed order. */
  forPart(): PartFault | null {
    for (const kind of PART_FAULTS) if (this.prng.chance(this.rates[kind])) return kind;
    return null;
  }

  forBuild(kind: 'invalid_token' | 'drop_upload' | 'die'): boolean {
    return this.prng.chance(this.rates[kind]);
  }
}

/** `wrong_range,drop_trace=0.3` → { wrong_range: 0.1, drop_trace: 0.3 }; unknown names are an error. */
export function parseFaultList(text: string, defaultRate = 0.1): Faults {
  const out: Record<string, number> = {};
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [name, value] = item.split('=').map((s) => s.trim()) as [string, string | undefined];
    const kind = name.replace(/-/g, '_');
    if (kind === 'all') {
      for (const k of FAULT_KINDS) out[k] = value === undefined ? defaultRate : Number(value);
      continue;
    }
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
      throw new Error(`unknown fault "${name}"; known faults: ${FAULT_KINDS.join(', ')} (or "all"), each optionally =rate between 0 and 1`);
    }
    const rate = value === undefined ? defaultRate : Number(value);
    if (!Number.isFinite(rate) || rate < 0 || rate > 1) throw new Error(`fault "${name}": rate must be between 0 and 1, got "${value}"`);
    out[kind] = rate;
  }
  for (const [k, v] of Object.entries(out)) if (!Number.isFinite(v) || v < 0 || v > 1) throw new Error(`fault "${k}": rate must be between 0 and 1`);
  return out as Faults;
}

/** Per fault kind, how often the server answered each status ("0" = no answer). */
export class FaultTally {
  readonly byKind: Record<string, number> = {};
  readonly answers: Record<string, Record<string, number>> = {};
  record(kind: string, status: number): void {
    const a = (this.answers[kind] ??= {});
    a[String(status)] = (a[String(status)] ?? 0) + 1;
  }
  injected(kind: string): void {
    this.byKind[kind] = (this.byKind[kind] ?? 0) + 1;
  }
}
