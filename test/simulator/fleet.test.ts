// A fleet of 20 virtual runners against a real Jobscope: 200 builds, every trace byte-exact, every
// artifact round-tripping — first clean, then with every fault turned on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { Journal } from '../../simulator/journal.ts';
import { FAULT_KINDS } from '../../contract/simulator.ts';
import { fleetOn, unzip } from './support.ts';

type BuildView = { id: number; status: string; runner_id: number | null; trace_length: number; artifacts: { filename: string; size: number } | null };

async function allBuilds(s: TestServer): Promise<BuildView[]> {
  const r = await http<BuildView[]>(`${s.url}/api/v3/sim/builds?limit=1000`, { token: s.adminToken });
  expect(r.status).toBe(200);
  return r.body;
}

describe('a fleet of 20 runners, 200 builds, no faults', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => s.close());

  it('finishes every build with byte-exact traces and artifacts that round-trip', async () => {
    const fleet = fleetOn(s, { runners: 20, builds: 200 });
    await fleet.start();
    await fleet.finished;
    const st = fleet.status();
    expect(st.violations).toEqual([]);
    expect(st.protocol_broken).toBe(false);
    expect(st.totals.builds_done).toBe(200);
    expect(st.totals.success).toBe(200);
    // Each build: the PATCHed trace checked before the final PUT, the full trace after it.
    expect(st.totals.traces_verified).toBe(400);
    expect(st.totals.artifacts_verified).toBe(200);
    expect(st.errors_by_kind).toEqual({});
    // Work was shared: every runner took builds.
    expect(st.runners.every((r) => r.counters.builds > 0)).toBe(true);

    const builds = await allBuilds(s);
    expect(builds).toHaveLength(200);
    expect(builds.every((b) => b.status === 'success' && b.artifacts !== null && b.trace_length > 1000)).toBe(true);
    expect(new Set(builds.map((b) => b.runner_id)).size).toBe(20);

    // Independent spot checks, with yauzl rather than the simulator's own verification.
    for (const b of builds.filter((_, i) => i % 50 === 0)) {
      const trace = await http(`${s.url}/api/v3/sim/builds/${b.id}/trace`, { token: s.adminToken });
      const text = trace.raw.toString('utf8');
      expect(text.startsWith('\x1b[0KRunning with gitlab-ci-multi-runner 1.11.5 (cbfcb5c8)\n')).toBe(true);
      expect(text).toContain('\x1b[32;1m$ npm test\x1b[0;m');
      expect(text.endsWith('\x1b[32;1mBuild succeeded\x1b[0;m\n')).toBe(true);
      const art = await http(`${s.url}/api/v3/sim/builds/${b.id}/artifacts`, { token: s.adminToken });
      expect(art.status).toBe(200);
      const files = await unzip(art.raw);
      expect([...files.keys()].sort()).toEqual(['out/', 'out/data.bin', 'out/result.txt']);
      expect(files.get('out/result.txt')!.toString()).toContain(`artifacts of build ${b.id}`);
      expect(art.raw.length).toBeGreaterThan(5 * 1024);
    }
    // The self-registered runners unregistered at the end.
    const runners = await http<unknown[]>(`${s.url}/api/v3/sim/runners`, { token: s.adminToken });
    expect(runners.body).toHaveLength(0);
  });
});

describe('the same fleet with every fault turned on', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => s.close());

  it('still ends with correct data, and the faults and the server’s answers are in the journal', async () => {
    const journal = new Journal({ capacity: 50000, bodyBytes: 512 });
    const faults = Object.fromEntries(FAULT_KINDS.map((k) => [k, k === 'die' ? 0.05 : 0.15]));
    const fleet = fleetOn(s, { runners: 20, builds: 200, faults, journal, seed: 7 });
    await fleet.start();
    await fleet.finished;
    const st = fleet.status();
    expect(st.violations).toEqual([]);
    expect(st.totals.builds_done).toBe(200);
    expect(st.totals.success + st.totals.abandoned).toBe(200);
    expect(st.totals.abandoned).toBeGreaterThan(0);
    expect(st.totals.traces_verified).toBe(2 * st.totals.success);
    expect(st.totals.artifacts_verified).toBe(st.totals.success);
    expect(st.totals.status_416).toBeGreaterThan(0);
    for (const kind of FAULT_KINDS) expect(st.faults_by_kind[kind], kind).toBeGreaterThan(0);

    // What the server answered to each fault: wrong starts are 416, wrong tokens 403, drops unanswered.
    expect(Object.keys(st.fault_answers.wrong_range!)).toEqual(['416']);
    expect(Object.keys(st.fault_answers.stale_range!)).toEqual(['416']);
    expect(Object.keys(st.fault_answers.out_of_order!)).toEqual(['416']);
    expect(Object.keys(st.fault_answers.duplicate_part!)).toEqual(['416']);
    expect(Object.keys(st.fault_answers.invalid_token!)).toEqual(['403']);
    expect(Object.keys(st.fault_answers.slow_dribble!)).toEqual(['202']);
    expect(Object.keys(st.fault_answers.drop_trace!)).toEqual(['0']);
    expect(Object.keys(st.fault_answers.drop_upload!)).toEqual(['0']);

    // Every fault is visible in the journal, tagged, with the request and the answer.
    expect(journal.dropped).toBe(0);
    for (const kind of FAULT_KINDS.filter((k) => k !== 'die')) {
      const tagged = journal.query({ fault: kind, limit: 10000 });
      expect(tagged.length, kind).toBeGreaterThan(0);
    }
    const wrong = journal.query({ fault: 'wrong_range', limit: 1 })[0]!;
    expect(wrong.status).toBe(416);
    expect(wrong.response_headers.some(([k]) => k.toLowerCase() === 'range')).toBe(true);
    const dropped = journal.query({ fault: 'drop_trace', limit: 1 })[0]!;
    expect(dropped.status).toBe(0);
    expect(dropped.error).toMatch(/dropped/);
    // After a 416 the runner resent from the server's Range, as the real runner does.
    const i416 = journal.query({ status: '416', method: 'PATCH', limit: 10000 }).find((e) => e.fault === 'wrong_range')!;
    const after = journal.query({ since_id: i416.id, build_id: i416.build_id!, method: 'PATCH', limit: 10000 })[0]!;
    const range = i416.response_headers.find(([k]) => k.toLowerCase() === 'range')![1];
    const contentRange = after.request_headers.find(([k]) => k === 'Content-Range')![1];
    expect(contentRange.split('-')[0]).toBe(range.split('-')[1]);

    // On the server: finished builds succeeded; the ones whose runner died are still running.
    const builds = await allBuilds(s);
    expect(builds.filter((b) => b.status === 'success')).toHaveLength(st.totals.success);
    expect(builds.filter((b) => b.status === 'running')).toHaveLength(st.totals.abandoned);
  });
});
