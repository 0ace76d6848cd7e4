// Two `jobscope serve --database` processes behind a round-robin proxy, the simulator's
// fleet through the proxy: every request may reach either instance, so a build handed out by one is
// PATCHed, uploaded to and finished on both. Then the same with one instance killed with SIGKILL
// mid-stream: runners carry on through the other, no build is handed out twice and no acknowledged
// trace byte or upload is lost.
// Both on one data dir, as a deployment shares it: each instance takes its own slot in it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { startRoundRobinProxy, type RoundRobinProxy } from '../helpers/round-robin-proxy.ts';
import { tempDir, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { spawnServer, type ChildServer } from '../reliability/support.ts';
import { jobscopeNodeArgs } from '../helpers/cli-process.ts';
import { fleetOn, unzip } from './support.ts';

const ADMIN = 'admin-token-of-the-round-robin-test';
const REG = 'registration-token-of-the-round-robin';
const RUNNERS = 8;
const BUILDS = 48;

type BuildView = { id: number; status: string; runner_id: number | null; trace_length: number; artifacts: { filename: string; size: number } | null };

async function buildsOf(url: string, afterId: number): Promise<BuildView[]> {
  const r = await http<BuildView[]>(`${url}/api/v3/sim/builds?limit=1000`, { token: ADMIN });
  expect(r.status).toBe(200);
  return r.body.filter((b) => b.id > afterId);
}

async function expectArtifact(url: string, id: number): Promise<void> {
  const art = await http(`${url}/api/v3/sim/builds/${id}/artifacts`, { token: ADMIN });
  expect(art.status, `artifacts of ${id} from ${url}`).toBe(200);
  const files = await unzip(art.raw);
  expect([...files.keys()].sort()).toEqual(['out/', 'out/data.bin', 'out/result.txt']);
  expect(files.get('out/result.txt')!.toString()).toContain(`artifacts of build ${id}`);
}

describe.skipIf(postgresMissing() !== null)('two serve --database instances behind a round-robin proxy', () => {
  const cluster = usePostgres({ database: 'jobscope_rr' });
  const dataDir = tempDir();
  let a: ChildServer;
  let b: ChildServer;
  let proxy: RoundRobinProxy;
  const target = () => ({ url: proxy.url, adminToken: ADMIN, registrationToken: REG }) as TestServer;

  beforeAll(async () => {
    const start = (dir: string) =>
      spawnServer(['--port', '0', '--data-dir', dir, '--database', cluster.url, '--admin-token', ADMIN, '--registration-token', REG, '--log-level', 'warn']);
    // The bundle once, before two starts would each build it (into the same temporary file).
    await jobscopeNodeArgs();
    // Both at once: the schema is made under an advisory lock, the second start waits for the first.
    [a, b] = await Promise.all([start(dataDir), start(dataDir)]);
    proxy = await startRoundRobinProxy([a.url, b.url]);
    // One folder, two slots in it.
    expect(fs.readdirSync(path.join(dataDir, 'instances')).filter((f) => f.endsWith('.pid')).sort()).toHaveLength(2);
  }, 60_000);
  afterAll(async () => {
    await proxy?.close();
    await Promise.all([b?.stop(), a?.stop()]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('finish every build, byte-exact, with intact artifacts, each handed out once', async () => {
    const fleet = fleetOn(target(), { runners: RUNNERS, builds: BUILDS, seed: 11 });
    await fleet.start();
    await fleet.finished;
    const st = fleet.status();
    // double_handout, trace_lost and ack_mismatch are violations the runners report.
    expect(st.violations).toEqual([]);
    expect(st.totals.builds_done).toBe(BUILDS);
    expect(st.totals.success).toBe(BUILDS);
    expect(st.totals.traces_verified).toBe(2 * BUILDS);
    expect(st.totals.artifacts_verified).toBe(BUILDS);
    expect(st.errors_by_kind).toEqual({});
    // Alternation really spread the work: each instance answered close to half.
    const [toA, toB] = proxy.served;
    expect(Math.min(toA!, toB!) / (toA! + toB!)).toBeGreaterThan(0.4);
    expect(proxy.refused).toEqual([0, 0]);

    // Both instances list the same builds, all finished, and serve each artifact whichever took it.
    const [fromA, fromB] = await Promise.all([buildsOf(a.url, 0), buildsOf(b.url, 0)]);
    expect(fromA).toHaveLength(BUILDS);
    expect(fromB).toEqual(fromA);
    expect(fromA.every((x) => x.status === 'success' && x.artifacts !== null && x.trace_length > 1000)).toBe(true);
    for (const x of fromA.filter((_, i) => i % 12 === 0)) {
      await expectArtifact(a.url, x.id);
      await expectArtifact(b.url, x.id);
    }
  });

  it('carry on through the other instance when one is killed with SIGKILL mid-stream', async () => {
    const before = Math.max(0, ...(await buildsOf(a.url, 0)).map((x) => x.id));
    const fleet = fleetOn(target(), { runners: RUNNERS, builds: BUILDS, seed: 12 });
    await fleet.start();
    // Mid-stream: a third of the builds done and runners with builds under way.
    for (;;) {
      const st = fleet.status();
      if (st.totals.builds_done >= BUILDS / 3 && st.runners.some((r) => r.build_id !== null)) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    await b.kill9();
    const cutAtKill = () => proxy.cut;

    // A poll B took but never answered leaves its build running with no runner: GitLab's runner
    // drops it the same way, and the fleet would wait for it forever. Once nothing is pending and no
    // runner holds a build, twice in a row with the same builds, what is left is such builds.
    let lost: number[] = [];
    let seenIdle = '';
    while (fleet.state !== 'finished') {
      const st = fleet.status();
      const held = st.runners.some((r) => r.build_id !== null);
      const now = await buildsOf(a.url, before);
      const idle = !held && now.every((x) => x.status !== 'pending');
      const key = idle ? JSON.stringify([st.totals.builds_done, now.filter((x) => x.status === 'running').map((x) => x.id)]) : '';
      if (idle && key === seenIdle) {
        lost = now.filter((x) => x.status === 'running').map((x) => x.id);
        await fleet.stop();
        break;
      }
      seenIdle = key;
      await Promise.race([fleet.finished, new Promise((r) => setTimeout(r, 100))]);
    }

    const st = fleet.status();
    // A runner's own check of an upload (a GET) cut at the kill is reported as a violation without an
    // answer (status 0, the socket's error). Only those, no more than the requests cut, and each of those
    // archives is checked again below: a mismatch or an answer other than 200 is still a failure.
    const unanswered = st.violations.filter((v) => v.kind === 'artifact_mismatch' && /could not be downloaded back: [^\d]/.test(v.message));
    expect(st.violations.filter((v) => !unanswered.includes(v))).toEqual([]);
    expect(unanswered.length).toBeLessThanOrEqual(cutAtKill());
    expect(proxy.refused[1]).toBeGreaterThan(0);
    // Every build a runner saw through to the end succeeded and was verified byte for byte. A final
    // PUT that B took before it died and that was sent again to A finds the build finished: the
    // runner calls that canceled, and it can only follow a request cut at the kill.
    expect(st.totals.failed + st.totals.abandoned).toBe(0);
    expect(st.totals.success + st.totals.canceled).toBe(st.totals.builds_done);
    expect(st.totals.canceled).toBeLessThanOrEqual(cutAtKill());
    // A trace check cut at the kill is counted as an error (verify_http_0) rather than a violation.
    expect(st.totals.traces_verified + (st.errors_by_kind.verify_http_0 ?? 0)).toBe(2 * st.totals.success);
    expect(st.errors_by_kind.verify_http_0 ?? 0).toBeLessThanOrEqual(cutAtKill());
    expect(st.totals.artifacts_verified + unanswered.length).toBe(st.totals.success);
    expect(st.totals.builds_done + lost.length).toBe(BUILDS);
    expect(lost.length).toBeLessThanOrEqual(cutAtKill());

    const after = await buildsOf(a.url, before);
    expect(after).toHaveLength(BUILDS);
    for (const x of after) {
      if (lost.includes(x.id)) {
        // Handed out and never answered: nothing of it was ever acknowledged to a runner.
        expect(x.status).toBe('running');
        expect(x.trace_length).toBe(0);
      } else {
        expect(x.status, `build ${x.id}`).toBe('success');
        expect(x.artifacts, `build ${x.id}`).not.toBeNull();
        expect(x.trace_length).toBeGreaterThan(1000);
      }
    }
    const recheck = new Set([...unanswered.map((v) => v.build_id!), ...after.filter((y) => !lost.includes(y.id)).filter((_, i) => i % 15 === 0).map((y) => y.id)]);
    for (const id of recheck) await expectArtifact(a.url, id);
  });
});
