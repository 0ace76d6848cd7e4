// A virtual runner's settings with their defaults, resolved from fleet defaults and group overrides.
// Timings default faster than the real runner's 3 s ticks so demos and QA runs finish in minutes;
// set update_ms and poll_ms to 3000 for the real cadence.
import type { Behaviour, Faults } from '../contract/simulator.ts';

export interface ResolvedBehaviour {
  traceBytes: number;
  partBytes: number;
  /** Bytes per second; 0 = no limit. */
  rate: number;
  updateMs: number;
  pollMs: number;
  artifactBytes: number;
  failRate: number;
  expireIn: string;
}

export const DEFAULT_BEHAVIOUR: Required<Behaviour> = {
  trace_kb: 16,
  part_kb: 4,
  rate_kbps: 0,
  update_ms: 250,
  poll_ms: 1000,
  artifact_kb: 64,
  fail_rate: 0,
  expire_in: '',
};

export function resolveBehaviour(...layers: (Behaviour | undefined)[]): ResolvedBehaviour {
  const b: Required<Behaviour> = { ...DEFAULT_BEHAVIOUR };
  for (const layer of layers) {
    if (!layer) continue;
    for (const [k, v] of Object.entries(layer)) if (v !== undefined) (b as Record<string, unknown>)[k] = v;
  }
  return {
    traceBytes: Math.round(b.trace_kb * 1024),
    partBytes: Math.max(16, Math.round(b.part_kb * 1024)),
    rate: Math.round(b.rate_kbps * 1024),
    updateMs: b.update_ms,
    pollMs: b.poll_ms,
    artifactBytes: Math.round(b.artifact_kb * 1024),
    failRate: b.fail_rate,
    expireIn: b.expire_in,
  };
}

export function mergeFaults(...layers: (Faults | undefined)[]): Faults {
  const out: Faults = {};
  for (const layer of layers) if (layer) for (const [k, v] of Object.entries(layer)) if (v !== undefined) (out as Record<string, number>)[k] = v;
  return out;
}
