// The fleet form's fields as typed (strings) and their conversion to the StartFleet body.
// Numbers are checked here only for being numbers; ranges are the server's to judge, so the
// message a user sees for a bad value is the contract's, naming the field.
import type { FaultKind, Faults, StartFleet } from '../../api/simulator.ts';

/** Every fault kind of the contract; the type check below fails when the contract gains one. */
export const FAULT_KINDS = ['wrong_range', 'stale_range', 'invalid_token', 'drop_trace', 'drop_upload', 'slow_dribble', 'duplicate_part', 'out_of_order', 'die'] as const;
type Missing = Exclude<FaultKind, (typeof FAULT_KINDS)[number]>;
const _allFaults: Missing extends never ? true : never = true;
void _allFaults;

export const FAULT_HELP: Record<FaultKind, string> = {
  wrong_range: 'a trace part sent with a Content-Range that does not continue the trace (per part)',
  stale_range: 'a trace part that resends a range the server already has (per part)',
  invalid_token: 'a request with a wrong build token (per build)',
  drop_trace: 'the connection dropped in the middle of a trace part (per part)',
  drop_upload: 'the connection dropped in the middle of the artifacts upload (per build)',
  slow_dribble: 'a trace part sent a few bytes at a time (per part)',
  duplicate_part: 'the same trace part sent twice (per part)',
  out_of_order: 'two trace parts sent in the wrong order (per part)',
  die: 'the runner dies mid-build and never finishes it (per build)',
};

export interface FleetFormState {
  runners: string;
  tags: string;
  builds: string;
  trace_kb: string;
  part_kb: string;
  rate_kbps: string;
  artifact_kb: string;
  fail_rate: string;
  faults: Partial<Record<FaultKind, boolean>>;
  fault_rate: string;
  seed: string;
  target_url: string;
  registration_token: string;
  admin_token: string;
  /** Shared runners (any project's builds) instead of runners of the fleet's project. */
  shared: boolean;
}

export const INITIAL_FORM: FleetFormState = {
  runners: '4',
  tags: '',
  builds: '20',
  trace_kb: '16',
  part_kb: '4',
  rate_kbps: '0',
  artifact_kb: '64',
  fail_rate: '0',
  faults: {},
  fault_rate: '0.05',
  seed: '1',
  target_url: '',
  registration_token: '',
  admin_token: '',
  shared: false,
};

export class FormError extends Error {}

function numberOf(label: string, v: string, integer = false): number | undefined {
  const s = v.trim();
  if (s === '') return undefined;
  const n = Number(s);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) throw new FormError(`${label}: "${v}" is not ${integer ? 'a whole number' : 'a number'}.`);
  return n;
}

/** Target, tokens: shared by the form and the scenario mode. */
export function targetPart(f: FleetFormState): Pick<StartFleet, 'target_url' | 'registration_token' | 'admin_token'> {
  return {
    ...(f.target_url.trim() ? { target_url: f.target_url.trim() } : {}),
    ...(f.registration_token.trim() ? { registration_token: f.registration_token.trim() } : {}),
    ...(f.admin_token.trim() ? { admin_token: f.admin_token.trim() } : {}),
  };
}

export function startBodyOf(f: FleetFormState): StartFleet {
  const behaviour: NonNullable<StartFleet['behaviour']> = {};
  const put = (k: keyof typeof behaviour, label: string, v: string) => {
    const n = numberOf(label, v);
    if (n !== undefined) (behaviour as Record<string, number>)[k] = n;
  };
  put('trace_kb', 'Trace size', f.trace_kb);
  put('part_kb', 'Part size', f.part_kb);
  put('rate_kbps', 'Trace rate', f.rate_kbps);
  put('artifact_kb', 'Artifact size', f.artifact_kb);
  put('fail_rate', 'Failure rate', f.fail_rate);
  const chosen = FAULT_KINDS.filter((k) => f.faults[k]);
  const p = numberOf('Fault probability', f.fault_rate) ?? 0.05;
  const faults: Faults = {};
  for (const k of chosen) faults[k] = p;
  const tags = f.tags.split(',').map((t) => t.trim()).filter(Boolean);
  const runners = numberOf('Runners', f.runners, true);
  const builds = numberOf('Builds', f.builds, true);
  const seed = numberOf('Seed', f.seed, true);
  return {
    ...(runners !== undefined ? { runners } : {}),
    ...(builds !== undefined ? { builds } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(tags.length ? { tags } : {}),
    behaviour,
    ...(chosen.length ? { faults } : {}),
    ...(f.shared ? { shared: true } : {}),
    ...targetPart(f),
  };
}
