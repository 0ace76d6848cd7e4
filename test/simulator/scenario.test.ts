// Scenarios: validation with messages that name the field, export → import round trip, and the
// same over the app API (including starting a fleet from one).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportScenario, groupsOf, parseScenario, ScenarioError } from '../../simulator/scenario.ts';
import { parseFaultList } from '../../simulator/faults.ts';
import type { Scenario } from '../../contract/simulator.ts';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { registerRunner } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

const SAMPLE: Scenario = {
  name: 'mixed fleet',
  seed: 99,
  builds: 6,
  defaults: { trace_kb: 2, part_kb: 0.5, update_ms: 0, poll_ms: 20, artifact_kb: 2 },
  faults: { wrong_range: 0.2 },
  runners: [
    { name: 'linux', count: 2, tags: ['docker'], run_untagged: true, behaviour: { fail_rate: 0.5 } },
    { name: 'flaky', count: 1, faults: { drop_trace: 0.3, die: 0 } },
  ],
};

function problems(input: unknown): string[] {
  try {
    parseScenario(input);
  } catch (err) {
    if (err instanceof ScenarioError) return err.problems;
    throw err;
  }
  return [];
}

describe('scenario validation', () => {
  it('accepts a valid scenario and resolves groups, behaviour and faults', () => {
    const s = parseScenario(JSON.stringify(SAMPLE));
    const g = groupsOf(s);
    expect(g.map((x) => [x.name, x.count, x.tags, x.runUntagged])).toEqual([
      ['linux', 2, ['docker'], true],
      ['flaky', 1, [], true],
    ]);
    expect(g[0]!.behaviour).toMatchObject({ traceBytes: 2048, partBytes: 512, failRate: 0.5, updateMs: 0 });
    expect(g[1]!.behaviour.failRate).toBe(0);
    expect(g[0]!.faults).toEqual({ wrong_range: 0.2 });
    expect(g[1]!.faults).toEqual({ wrong_range: 0.2, drop_trace: 0.3, die: 0 });
  });

  it('names each wrong field and what it expects', () => {
    expect(problems('{not json')).toEqual([expect.stringMatching(/^not JSON: /)]);
    expect(problems([])).toEqual([expect.stringMatching(/JSON object with at least "runners"/)]);
    expect(problems({})).toContainEqual(expect.stringMatching(/^\/runners: Expected required property/));
    const p = problems({ seed: -1, runners: [{ count: 0, tags: 'a,b', behaviour: { fail_rate: 2 } }], faults: { meteor: 0.1 } });
    expect(p).toContainEqual('/seed: Expected integer to be greater or equal to 0 (got -1)');
    expect(p).toContainEqual('/runners/0/count: Expected integer to be greater or equal to 1 (got 0)');
    expect(p).toContainEqual(expect.stringMatching(/^\/runners\/0\/tags: Expected array/));
    expect(p).toContainEqual('/runners/0/behaviour/fail_rate: Expected number to be less or equal to 1 (got 2)');
    expect(p).toContainEqual(expect.stringMatching(/^\/faults\/meteor: Unexpected property/));
    expect(problems({ runners: [{ name: 'a' }, { name: 'a' }] })).toEqual(['/runners: the group name "a" is used twice; names must differ']);
    expect(problems({ runners: [{ run_untagged: false }] })).toEqual([expect.stringMatching(/run_untagged false needs tags/)]);
    expect(problems({ runners: [{ count: 3, tokens: ['a'] }] })).toEqual(['/runners/0/tokens: 1 tokens for 3 runners']);
  });

  it('round-trips: export, import, export gives the same scenario, without runner tokens', () => {
    const exported = exportScenario(parseScenario({ ...SAMPLE, runners: [...SAMPLE.runners, { name: 'own', tokens: ['secret1', 'secret2'] }] }));
    expect(JSON.stringify(exported)).not.toContain('secret');
    expect(exported.runners[2]).toEqual({ name: 'own', count: 2 });
    expect(exported.defaults).toMatchObject({ trace_kb: 2, rate_kbps: 0, expire_in: '' });
    const again = exportScenario(parseScenario(JSON.stringify(exported)));
    expect(again).toEqual(exported);
  });

  it('accepts the example in docs/simulator.md', () => {
    const doc = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/simulator.md'), 'utf8');
    const example = /## Scenario format\n\n```json\n([\s\S]*?)```/.exec(doc)![1]!;
    const s = parseScenario(example);
    expect(groupsOf(s).map((g) => g.count)).toEqual([8, 2, 1]);
  });

  it('parses fault lists as the CLI takes them', () => {
    expect(parseFaultList('wrong_range, drop-trace=0.3')).toEqual({ wrong_range: 0.1, drop_trace: 0.3 });
    expect(Object.keys(parseFaultList('all=0.2'))).toHaveLength(9);
    expect(() => parseFaultList('meteor')).toThrow(/unknown fault "meteor"; known faults: wrong_range/);
    expect(() => parseFaultList('die=2')).toThrow(/between 0 and 1/);
  });
});

describe('scenarios over the app API', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => s.close());
  const api = (p: string, o: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app/sim${p}`, { token: s.adminToken, ...o });

  it('validates an import: 200 with the normalized scenario, or 400 listing the problems', async () => {
    const ok = await api('/scenario/validate', { json: SAMPLE });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual(exportScenario(SAMPLE));
    const bad = await api('/scenario/validate', { json: { runners: [{ count: 'many' }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/invalid scenario: \/runners\/0\/count: Expected integer \(got "many"\)/);
    const text = await api('/scenario/validate', { body: '{oops', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(400);
    expect(text.body.message).toMatch(/not JSON/);
  });

  it('starts a fleet from a scenario and exports the same scenario back', async () => {
    const start = await api('/fleet', { json: { scenario: SAMPLE } });
    expect(start.status).toBe(201);
    expect(start.body.runners.map((r: { name: string }) => r.name)).toEqual(['linux-1', 'linux-2', 'flaky']);
    expect(start.body.seed).toBe(99);
    const busy = await api('/fleet', { json: { runners: 1 } });
    expect(busy.status).toBe(409);
    await waitFor('the fleet to finish', async () => (await api('/fleet')).body.state === 'finished', 10_000);
    const st = (await api('/fleet')).body;
    expect(st.state).toBe('finished');
    expect(st.totals.builds_done).toBe(6);
    expect(st.protocol_broken).toBe(false);
    const exported = await api('/scenario');
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-disposition')).toMatch(/jobscope-scenario\.json/);
    expect(exported.body).toEqual(exportScenario(SAMPLE));
    // The export is a file the CLI accepts as it is.
    const file = path.join(tempDir(), 'scenario.json');
    fs.writeFileSync(file, JSON.stringify(exported.body));
    expect(parseScenario(fs.readFileSync(file, 'utf8'))).toEqual(exported.body);
  });

  it('acts as already registered runners given by token, and leaves them registered', async () => {
    const tokens = [(await registerRunner(s)).token, (await registerRunner(s)).token];
    const r = await api('/fleet', {
      json: { scenario: { builds: 4, defaults: { trace_kb: 1, update_ms: 0, poll_ms: 20, artifact_kb: 1 }, runners: [{ name: 'own', tokens }] } },
    });
    expect(r.status).toBe(201);
    await waitFor('the fleet to finish', async () => (await api('/fleet')).body.state === 'finished', 10_000);
    const st = (await api('/fleet')).body;
    expect(st.totals.builds_done).toBe(4);
    expect(st.runners.map((x: { name: string }) => x.name)).toEqual(['own-1', 'own-2']);
    const runners = await http(`${s.url}/api/v3/sim/runners`, { token: s.adminToken });
    expect(runners.body.map((x: { id: number }) => x.id).length).toBeGreaterThanOrEqual(2);
    const register = await api('/journal?path=runners/register&limit=100');
    expect(register.body.entries.filter((e: { runner: string }) => e.runner.startsWith('own'))).toEqual([]);
  });

  it('refuses a bad scenario at start with the field named', async () => {
    const r = await api('/fleet', { json: { scenario: { runners: [{ behaviour: { trace_kb: -1 } }] } } });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/\/scenario\/runners\/0\/behaviour\/trace_kb/);
  });
});
