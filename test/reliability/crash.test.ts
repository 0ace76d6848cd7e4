// kill -9 of a child-process server while trace streams, artifact uploads (and jobs, when the job
// system is there) are in flight, ten times over, each time restarting on the same data dir and
// checking that everything the server acknowledged is there, byte-exact, and nothing partial shows.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { afterAll, expect, test } from 'vitest';
import { json, patchTrace, prng, type Rng, rangeEnd, request, seedOf, spawnServer, uploadArtifact, type ChildServer } from './support.ts';

const SEED = seedOf('crash', 20261122);
const CYCLES = 10;
const STREAMS = 6;
const UPLOADS_PER_CYCLE = 3;
const ADMIN = 'crash-admin-token-0123456789';
const REG = 'crash-registration-token';

interface Stream {
  id: number;
  token: string;
  content: Buffer;
  /** Highest length the server acknowledged (a 202's Range). */
  acked: number;
  /** Next byte this client will send. */
  offset: number;
  /** Its own generator, so concurrent streams do not make the main sequence timing-dependent. */
  rng: Rng;
}
interface Upload {
  id: number;
  token: string;
  content: Buffer;
  state: 'acked' | 'unsent' | 'unknown' | 'refused';
  cycle: number;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-crash-'));
let server: ChildServer | undefined;
afterAll(async () => {
  await server?.kill9();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const start = () => spawnServer(['--port', '0', '--data-dir', dataDir, '--admin-token', ADMIN, '--registration-token', REG, '--log-level', 'error']);
const admin = { 'private-token': ADMIN };

test(`${CYCLES} kill -9 cycles lose no acknowledged trace byte or artifact and never show a partial one`, async () => {
  const rng = prng(SEED);
  server = await start();
  let base = server.url;

  const project = await json(`${base}/api/v3/sim/projects`, 'POST', { name: 'crash' }, admin);
  expect(project.status).toBe(201);
  const runner = await json(`${base}/ci/api/v1/runners/register.json`, 'POST', { token: REG, description: 'crash' });
  expect(runner.status).toBe(201);
  const total = STREAMS + CYCLES * UPLOADS_PER_CYCLE;
  const created = await json(`${base}/api/v3/sim/projects/${project.body.id}/builds`, 'POST', { count: total, commands: 'echo crash' }, admin);
  expect(created.status).toBe(201);

  const take = async () => {
    const r = await json(`${base}/ci/api/v1/builds/register.json`, 'POST', { token: runner.body.token });
    expect(r.status).toBe(201);
    return { id: r.body.id as number, token: r.body.token as string };
  };

  const streams: Stream[] = [];
  for (let i = 0; i < STREAMS; i++) {
    const b = await take();
    streams.push({ ...b, content: rng.text(rng.int(1, 3) * 1024 * 1024), acked: 0, offset: 0, rng: prng(SEED + 1 + i) });
  }
  // The job system (when this build has one): jobs enqueued with a 202 must all be processed in the end,
  // those cut off by a kill running again after the restart.
  const jobStats = async () => (await json(`${base}/api/v3/sidekiq/job_stats`, 'GET', undefined, admin)).body?.jobs as { processed: number } | undefined;
  const probe = await json(`${base}/api/v3/sim/jobs`, 'POST', { queue: 'crash', count: 1, duration_ms: 1 }, admin);
  const haveJobs = probe.status === 202;
  let jobsAcked = haveJobs ? 1 : 0;
  const processedBefore = haveJobs ? ((await jobStats())?.processed ?? 0) - 1 : 0;
  const uploads: Upload[] = [];
  let resumedFrom416 = 0;
  let acknowledgedParts = 0;
  let partialSeen = 0;

  const verify = async (cycle: number) => {
    for (const s of streams) {
      const r = await request(`${base}/api/v3/sim/builds/${s.id}/trace`, { headers: admin });
      expect(r.status, `cycle ${cycle}: trace of build ${s.id}`).toBe(200);
      expect(r.body.length, `cycle ${cycle}: build ${s.id} lost acknowledged bytes`).toBeGreaterThanOrEqual(s.acked);
      expect(r.body.equals(s.content.subarray(0, r.body.length)), `cycle ${cycle}: build ${s.id} trace is not a prefix of what was sent`).toBe(true);
    }
    for (const u of uploads) {
      const r = await request(`${base}/ci/api/v1/builds/${u.id}/artifacts`, { headers: { 'build-token': u.token } });
      const what = `cycle ${cycle}: artifact of build ${u.id} (${u.state}, ${u.content.length} bytes, uploaded in cycle ${u.cycle})`;
      if (u.state === 'acked') {
        expect(r.status, what).toBe(200);
        expect(r.body.equals(u.content), what).toBe(true);
      } else if (u.state === 'unsent' || u.state === 'refused') {
        expect(r.status, what).toBe(404);
      } else {
        // The body reached the server but the answer did not come back: whole or absent, never partial.
        expect([200, 404], what).toContain(r.status);
        if (r.status === 200) expect(r.body.equals(u.content), what).toBe(true);
      }
    }
    // A restart clears abandoned temp files, and no archive file is left that no build points at.
    const layout = { tmp: path.join(dataDir, 'tmp'), artifacts: path.join(dataDir, 'artifacts') };
    expect(fs.readdirSync(layout.tmp), `cycle ${cycle}: temp files left`).toEqual([]);
    const present = (await json(`${base}/api/v3/sim/builds?project_id=${project.body.id}&limit=1000`, 'GET', undefined, admin)).body as { artifacts: unknown }[];
    expect(fs.readdirSync(layout.artifacts).length, `cycle ${cycle}: unreferenced archive files`).toBe(present.filter((b) => b.artifacts).length);
  };

  /**
   * Streams trace parts until the server goes away or the content is all acknowledged. Parts of
   * 256 B..8 KiB while kills land mid-stream; `scale` makes them larger once no kill comes.
   */
  const runStream = async (s: Stream, agent: http.Agent, until: () => boolean, scale = 1) => {
    while (s.acked < s.content.length && !until()) {
      const len = Math.min(s.rng.int(256, 8192) * scale, s.content.length - s.offset);
      const part = s.content.subarray(s.offset, s.offset + len);
      let r;
      try {
        r = await patchTrace(base, s.id, s.token, s.offset, part, agent);
      } catch {
        return; // the server died: this part is unacknowledged
      }
      if (r.status === 202) {
        const end = rangeEnd(r.headers);
        expect(end).toBe(s.offset + len);
        s.acked = s.offset = end;
        acknowledgedParts++;
      } else if (r.status === 416) {
        // The server has a different length than we think (a part written but not answered before a kill).
        const end = rangeEnd(r.headers);
        expect(end, `416 Range below acknowledged length for build ${s.id}`).toBeGreaterThanOrEqual(s.acked);
        s.offset = s.acked = end;
        resumedFrom416++;
      } else {
        throw new Error(`trace PATCH for build ${s.id}: ${r.status} ${r.body.toString()}`);
      }
    }
  };

  for (let cycle = 0; cycle < CYCLES; cycle++) {
    if (cycle > 0) await verify(cycle);
    const agent = new http.Agent({ keepAlive: true, maxSockets: STREAMS * 2 });
    let killed = false;
    // After a restart the client still believes in its own offset: the first PATCH may get a 416.
    const streaming = streams.map((s) => runStream(s, agent, () => killed));
    const cycleUploads: Promise<void>[] = [];
    for (let i = 0; i < UPLOADS_PER_CYCLE; i++) {
      const b = await take();
      const u: Upload = { ...b, content: rng.bytes(rng.int(64, 3 * 1024) * 1024), state: 'unsent', cycle };
      uploads.push(u);
      // The first upload of a cycle stalls halfway, so every kill lands mid-body at least once;
      // the others start at random moments and may finish, or not, before the kill.
      const stall = i === 0 ? rng.int(1, u.content.length - 1) : undefined;
      if (i > 0) await new Promise((res) => setTimeout(res, rng.int(0, 150)));
      const h = uploadArtifact(base, u.id, u.token, u.content, { chunk: rng.int(4, 64) * 1024, stallAfter: stall });
      cycleUploads.push(
        h.done.then(
          (r) => {
            expect(r.status, `upload for build ${u.id}: ${r.body.toString().slice(0, 200)}`).toBe(201);
            u.state = 'acked';
          },
          () => void (u.state = h.sentAll() ? 'unknown' : 'unsent'),
        ),
      );
      // While it uploads, a reader must never see part of it.
      cycleUploads.push(
        (async () => {
          while (u.state === 'unsent' && !killed) {
            const r = await request(`${base}/ci/api/v1/builds/${u.id}/artifacts`, { headers: { 'build-token': u.token } }).catch(() => undefined);
            if (r && r.status === 200 && !r.body.equals(u.content)) partialSeen++;
            await new Promise((res) => setTimeout(res, 5));
          }
        })(),
      );
    }
    if (haveJobs) {
      cycleUploads.push(
        (async () => {
          while (!killed) {
            const n = rng.int(5, 40);
            const r = await json(`${base}/api/v3/sim/jobs`, 'POST', { queue: 'crash', count: n, duration_ms: rng.int(5, 60) }, admin).catch(() => undefined);
            if (r?.status === 202) jobsAcked += n;
            await new Promise((res) => setTimeout(res, 20));
          }
        })(),
      );
    }
    await new Promise((res) => setTimeout(res, rng.int(50, 500)));
    killed = true;
    await server.kill9();
    await Promise.all([...streaming, ...cycleUploads]);
    agent.destroy();
    expect(partialSeen, 'a partial artifact was served during an upload').toBe(0);
    server = await start();
    base = server.url;
  }

  await verify(CYCLES);
  // Every stream finishes from where the server says it is. No kill comes any more, so the rest goes
  // in parts 32 times as large: it is most of the content (~2,500 of ~3,200 parts in a loaded run).
  const agent = new http.Agent({ keepAlive: true, maxSockets: STREAMS });
  await Promise.all(streams.map((s) => runStream(s, agent, () => false, 32)));
  agent.destroy();
  for (const s of streams) {
    const r = await request(`${base}/api/v3/sim/builds/${s.id}/trace`, { headers: admin });
    expect(r.body.equals(s.content), `build ${s.id}: finished trace differs`).toBe(true);
  }
  let jobsNote = 'no job system in this build';
  if (haveJobs) {
    // Every acknowledged job is processed at least once (a run cut off by a kill runs again).
    let queue: { backlog: number } | undefined;
    for (let i = 0; i < 200; i++) {
      const qs = (await json(`${base}/api/v3/sim/jobs/queues`, 'GET', undefined, admin)).body as { name: string; backlog: number }[];
      queue = qs.find((q) => q.name === 'crash');
      const busy = ((await json(`${base}/api/v3/sidekiq/process_metrics`, 'GET', undefined, admin)).body.processes as { busy: number }[]).reduce((a, p) => a + p.busy, 0);
      if (queue?.backlog === 0 && busy === 0) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(queue?.backlog, 'crash queue never drained').toBe(0);
    const processed = ((await jobStats())?.processed ?? 0) - processedBefore;
    expect(processed, `${jobsAcked} jobs acknowledged, only ${processed} processed`).toBeGreaterThanOrEqual(jobsAcked);
    const dead = (await json(`${base}/api/v3/sim/jobs/dead`, 'GET', undefined, admin)).body as { queue: string }[];
    expect(dead.filter((j) => j.queue === 'crash')).toEqual([]);
    jobsNote = `jobs: ${jobsAcked} acknowledged, ${processed} runs (${processed - jobsAcked} re-runs after kills or builtin jobs)`;
  }
  const states = uploads.map((u) => u.state);
  console.log(
    `[crash] ${CYCLES} cycles: ${acknowledgedParts} trace parts acknowledged, ${resumedFrom416} resumed from a 416, ` +
      `uploads: ${states.filter((s) => s === 'acked').length} acked, ${states.filter((s) => s === 'unsent').length} cut mid-body, ${states.filter((s) => s === 'unknown').length} unanswered; ${jobsNote}`,
  );
  expect(states.filter((s) => s === 'acked').length, 'no upload was ever acknowledged: the cycle is too short to test anything').toBeGreaterThan(0);
  expect(states.filter((s) => s === 'unsent').length, 'stalled uploads').toBeGreaterThanOrEqual(CYCLES);
  expect(await server.stop()).toBe(0);
  server = undefined;
}, 400_000);
