// Scenarios: a fleet described as JSON. Validated against the TypeBox schema in contract/simulator.ts
// with messages that name the field and say what is expected, turned into fleet options, and
// written back out (defaults filled in) so an export re-imports to the same fleet.
import { Value } from '@sinclair/typebox/value';
import { Scenario, type StartFleet } from '../contract/simulator.ts';
import { DEFAULT_BEHAVIOUR, mergeFaults, resolveBehaviour } from './behaviour.ts';
import type { RunnerGroupSpec } from './fleet.ts';

export class ScenarioError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid scenario: ${problems.join('; ')}`);
  }
}

/** Parses (when given text) and validates; throws ScenarioError listing every problem found. */
export function parseScenario(input: unknown): Scenario {
  let value = input;
  if (typeof input === 'string' || Buffer.isBuffer(input)) {
    try {
      value = JSON.parse(input.toString());
    } catch (err) {
      throw new ScenarioError([`not JSON: ${(err as Error).message}`]);
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ScenarioError(['a scenario is a JSON object with at least "runners": [...]']);
  const problems: string[] = [];
  for (const e of Value.Errors(Scenario, value)) {
    const where = e.path === '' ? '(top level)' : e.path;
    const msg = `${where}: ${e.message}${e.value !== undefined && typeof e.value !== 'object' ? ` (got ${JSON.stringify(e.value)})` : ''}`;
    if (!problems.includes(msg)) problems.push(msg);
    if (problems.length >= 20) break;
  }
  if (problems.length) throw new ScenarioError(problems);
  const s = value as Scenario;
  for (const [i, g] of s.runners.entries()) {
    if (g.tokens && g.count !== undefined && g.tokens.length < g.count) problems.push(`/runners/${i}/tokens: ${g.tokens.length} tokens for ${g.count} runners`);
    if (g.run_untagged === false && !g.tags?.length) problems.push(`/runners/${i}: run_untagged false needs tags, or the runner can take no build`);
  }
  const names = s.runners.map((g, i) => g.name ?? `group-${i + 1}`);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) problems.push(`/runners: the group name "${dup}" is used twice; names must differ`);
  if (problems.length) throw new ScenarioError(problems);
  return s;
}

export function groupsOf(s: Scenario): RunnerGroupSpec[] {
  return s.runners.map((g, i) => ({
    name: g.name ?? (s.runners.length === 1 ? 'sim' : `group-${i + 1}`),
    count: g.count ?? g.tokens?.length ?? 1,
    tags: g.tags ?? [],
    runUntagged: g.run_untagged ?? !(g.tags && g.tags.length),
    tokens: g.tokens,
    behaviour: resolveBehaviour(s.defaults, g.behaviour),
    faults: mergeFaults(s.faults, g.faults),
  }));
}

/** A start form (runner count, behaviour, faults) as a scenario, so every start can be exported. */
export function scenarioOfForm(f: StartFleet): Scenario {
  if (f.scenario) return f.scenario;
  return {
    version: 1,
    name: 'fleet',
    seed: f.seed ?? 1,
    ...(f.builds !== undefined ? { builds: f.builds } : {}),
    defaults: { ...DEFAULT_BEHAVIOUR, ...(f.behaviour ?? {}) },
    ...(f.faults ? { faults: f.faults } : {}),
    ...(f.shared !== undefined ? { shared: f.shared } : {}),
    runners: [{ name: 'sim', count: f.runners ?? 1, ...(f.tags?.length ? { tags: f.tags } : {}) }],
  };
}

/** The scenario with its defaults written out, for export; runner tokens are left out (secrets). */
export function exportScenario(s: Scenario): Scenario {
  return {
    version: 1,
    ...(s.name !== undefined ? { name: s.name } : {}),
    seed: s.seed ?? 1,
    ...(s.builds !== undefined ? { builds: s.builds } : {}),
    ...(s.create_builds !== undefined ? { create_builds: s.create_builds } : {}),
    ...(s.build_template ? { build_template: s.build_template } : {}),
    defaults: { ...DEFAULT_BEHAVIOUR, ...(s.defaults ?? {}) },
    ...(s.faults && Object.keys(s.faults).length ? { faults: s.faults } : {}),
    runners: s.runners.map(({ tokens, ...g }) => ({ ...g, ...(tokens ? { count: g.count ?? tokens.length } : {}) })),
    ...(s.verify !== undefined ? { verify: s.verify } : {}),
    ...(s.shared !== undefined ? { shared: s.shared } : {}),
  };
}
