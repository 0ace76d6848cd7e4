// The virtual runner speaks the runner API as gitlab-ci-multi-runner 1.11.5 does
// (shared/spec/real-runner-requests.md): request shapes, last_update, cancel handling, the switch
// to full-trace PUTs after a 404, failed scripts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../../simulator/journal.ts';
import type { JournalEntry } from '../../contract/simulator.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';
import { fleetOn, proxy } from './support.ts';
import { sleep } from '../helpers/wait.ts';

const hdr = (e: JournalEntry, list: 'request_headers' | 'response_headers', name: string) => e[list].find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
const json = (e: JournalEntry) => JSON.parse(e.request_body.text!);

describe('virtual runner protocol', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => s.close());

  it('registers, polls with info and echoes X-GitLab-Last-Update, runs a build in the captured order', async () => {
    const journal = new Journal({ capacity: 1000, bodyBytes: 100_000 });
    const fleet = fleetOn(s, { runners: 1, builds: 1, journal, createBuilds: false, behaviour: { poll_ms: 30 } });
    await fleet.start();
    // Idle first: empty polls, then a build appears.
    while (journal.query({ path: 'builds/register', limit: 100 }).length < 3) await sleep(20);
    const project = await createProject(s, 'proto');
    await createBuild(s, project.id, { commands: 'echo one\nmake test', options: { artifacts: { paths: ['out/'], name: 'proto', expire_in: '2 days' } } });
    await fleet.finished;
    expect(fleet.status().violations).toEqual([]);
    const all = journal.query({ runner: 'sim-1', limit: 1000 });

    const reg = all[0]!;
    expect([reg.method, reg.path]).toEqual(['POST', '/ci/api/v1/runners/register.json']);
    expect(hdr(reg, 'request_headers', 'User-Agent')).toBe('gitlab-ci-multi-runner 1.11.5 (1-11-stable; go1.19.8; linux/amd64)');
    expect(hdr(reg, 'request_headers', 'Accept')).toBe('application/json');
    expect(json(reg)).toEqual({
      info: { name: 'gitlab-ci-multi-runner', version: '1.11.5', revision: 'cbfcb5c8', platform: 'linux', architecture: 'amd64', features: { variables: false, image: false, services: false, features: false, cache: false } },
      token: s.registrationToken,
      description: 'sim-1',
      run_untagged: true,
    });

    const polls = all.filter((e) => e.path === '/ci/api/v1/builds/register.json');
    expect(json(polls[0]!).info.executor).toBe('shell');
    expect(json(polls[0]!).last_update).toBeUndefined();
    expect(polls[0]!.status).toBe(204);
    // Each poll echoes the header of the answer before it.
    expect(json(polls[1]!).last_update).toBe(hdr(polls[0]!, 'response_headers', 'x-gitlab-last-update'));
    const took = polls.find((p) => p.status === 201)!;
    const buildId = took.build_id ?? JSON.parse(took.response_body.text!).id;

    const forBuild = all.filter((e) => e.id > took.id && e.runner === 'sim-1' && e.path.includes(`/builds/${buildId}`));
    const seq = forBuild.map((e) => `${e.method} ${e.path.replace(`/builds/${buildId}`, '/builds/N')}`);
    expect(seq[0]).toBe('PUT /ci/api/v1/builds/N.json');
    expect(json(forBuild[0]!)).toMatchObject({ state: 'running' });
    expect(json(forBuild[0]!).trace).toBeUndefined();
    const patches = forBuild.filter((e) => e.method === 'PATCH');
    expect(patches.length).toBeGreaterThan(2);
    let at = 0;
    for (const p of patches) {
      const [a, b] = hdr(p, 'request_headers', 'Content-Range')!.split('-').map(Number);
      expect(a).toBe(at);
      expect(b! - a!).toBe(p.request_body.size);
      expect(hdr(p, 'response_headers', 'range')).toBe(`0-${b}`);
      at = b!;
    }
    const upload = forBuild.find((e) => e.method === 'POST')!;
    expect(upload.path).toBe(`/ci/api/v1/builds/${buildId}/artifacts?expire_in=2+days`);
    expect(hdr(upload, 'request_headers', 'Transfer-Encoding')).toBe('chunked');
    expect(hdr(upload, 'request_headers', 'Content-Length')).toBeUndefined();
    expect(upload.request_body.text ?? Buffer.from(upload.request_body.base64!, 'base64').toString('latin1')).toMatch(
      /^--[0-9a-f]{60}\r\nContent-Disposition: form-data; name="file"; filename="proto\.zip"\r\nContent-Type: application\/octet-stream\r\n\r\nPK/,
    );
    const last = forBuild.filter((e) => e.method === 'PUT').at(-1)!;
    expect(json(last).state).toBe('success');
    expect(Buffer.byteLength(json(last).trace)).toBe(at);
    expect(forBuild.findIndex((e) => e === upload)).toBeLessThan(forBuild.findIndex((e) => e === last));
    expect(json(last).trace).toContain('\x1b[32;1m$ echo one\x1b[0;m\none\n');
    // The verification download goes as artifacts-downloader sends it.
    const down = forBuild.find((e) => e.method === 'GET')!;
    expect(hdr(down, 'request_headers', 'User-Agent')).toBe('Go-http-client/1.1');
    expect(hdr(down, 'request_headers', 'Build-Token')).toBeDefined();
    // And at the end the runner unregisters with a JSON DELETE body.
    const del = all.at(-1)!;
    expect([del.method, del.path, del.status]).toEqual(['DELETE', '/ci/api/v1/runners/delete', 200]);
  });

  it('stops on Build-Status: canceled: PUT failed with the trace so far, and no upload', async () => {
    const journal = new Journal({ capacity: 1000, bodyBytes: 100_000 });
    const fleet = fleetOn(s, { runners: 1, builds: 1, journal, behaviour: { trace_kb: 16, part_kb: 0.5, update_ms: 60 } });
    await fleet.start();
    let st = fleet.status();
    while (!(st.runners[0]!.build_id && journal.query({ method: 'PATCH', limit: 1 }).length)) {
      await sleep(20);
      st = fleet.status();
    }
    const id = st.runners[0]!.build_id!;
    expect((await http(`${s.url}/api/v3/sim/builds/${id}/cancel`, { method: 'POST', token: s.adminToken })).status).toBe(200);
    await fleet.finished;
    st = fleet.status();
    expect(st.totals).toMatchObject({ builds_done: 1, canceled: 1, success: 0 });
    const mine = journal.query({ build_id: id, limit: 1000 });
    const seen = mine.find((e) => e.method === 'PATCH' && hdr(e, 'response_headers', 'build-status') === 'canceled')!;
    expect(seen).toBeDefined();
    const after = mine.filter((e) => e.id > seen.id && e.runner === 'sim-1');
    expect(after.map((e) => e.method)).toEqual(['PUT']);
    expect(json(after[0]!).state).toBe('failed');
    expect(json(after[0]!).trace.length).toBeGreaterThan(0);
    expect(mine.some((e) => e.path.includes('/artifacts'))).toBe(false);
  });

  it('after a 404 on PATCH sends the full trace in every tick’s PUT, and a failed script skips the upload', async () => {
    const p = await proxy(s.url, () => ({ answer: { status: 404, headers: { 'Content-Type': 'application/json' } } }));
    try {
      const journal = new Journal({ capacity: 1000, bodyBytes: 100_000 });
      const fleet = fleetOn(s, { runners: 1, builds: 2, journal, target: p.url, behaviour: { trace_kb: 3, part_kb: 1, fail_rate: 0.5 }, seed: 11 });
      await fleet.start();
      await fleet.finished;
      const st = fleet.status();
      expect(st.violations).toEqual([]);
      expect(st.totals.builds_done).toBe(2);
      const puts = journal.query({ method: 'PUT', runner: 'sim-1', limit: 1000 });
      const withTrace = puts.filter((e) => json(e).state === 'running' && json(e).trace !== undefined);
      expect(withTrace.length).toBeGreaterThan(1);
      // Each full-trace PUT carries more than the one before it (the trace grows).
      const lens = withTrace.filter((e) => e.build_id === withTrace[0]!.build_id).map((e) => json(e).trace.length);
      expect(lens).toEqual([...lens].sort((a, b) => a - b));
      // Only one PATCH per build: after its 404 the runner stops patching.
      const patches = journal.query({ method: 'PATCH', limit: 1000 });
      expect(new Set(patches.map((e) => e.build_id)).size).toBe(patches.length);
      // Final states: the seeded fail_rate fails exactly the builds without an upload.
      const finals = puts.filter((e) => ['success', 'failed'].includes(json(e).state));
      for (const f of finals) {
        const uploaded = journal.query({ build_id: f.build_id!, method: 'POST', limit: 10 }).length > 0;
        expect(uploaded).toBe(json(f).state === 'success');
        if (json(f).state === 'failed') expect(json(f).trace).toContain('ERROR: Build failed: exit status 1');
      }
      expect(st.totals.success + st.totals.failed).toBe(2);
      expect(st.totals.traces_verified).toBe(2);
    } finally {
      await p.close();
    }
  });
});
