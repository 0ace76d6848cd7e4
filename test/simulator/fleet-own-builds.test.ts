// A fleet that creates its builds runs them: its runners register with its project's runners token
// (GitLab's project runners) and leave other projects' older pending builds alone; with `shared`
// they take any project's, and keep going until each of its own was taken. Its summary says what
// became of its own builds and how many others it took, as the server has them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';
import { fleetOn } from './support.ts';

type Listed = { id: number; status: string; project_id: number };

describe('a fleet’s own builds', () => {
  let s: TestServer;
  let other: { id: number };
  const otherBuilds = async () => (await http<Listed[]>(`${s.url}/api/v3/sim/builds?project_id=${other.id}&limit=1000`, { token: s.adminToken })).body;

  beforeAll(async () => {
    s = await startServer();
    // Older than anything a fleet creates: a shared runner's dispatch would offer them first.
    other = await createProject(s, 'payments');
    for (let i = 0; i < 5; i++) await createBuild(s, other.id, { name: `older-${i}` });
  });
  afterAll(async () => s?.close());

  it('by default runs only its project’s builds, all of them, and says so', async () => {
    const fleet = fleetOn(s, { runners: 3, builds: 10 });
    await fleet.start();
    await fleet.finished;
    const st = fleet.status();
    expect(st.project).toBe('simulator');
    expect(st.shared).toBe(false);
    expect(st.own).toEqual({ created: 10, taken: 10, success: 10, failed: 0, canceled: 0, running: 0, pending: 0 });
    expect(st.others_taken).toBe(0);
    expect(st.totals.builds_done).toBe(10);
    expect(st.message).toBe('all 10 of its builds done');
    expect((await otherBuilds()).map((b) => b.status)).toEqual(Array(5).fill('pending'));
  });

  it('shared: takes any project’s builds, runs every one of its own, and counts the others apart', async () => {
    const fleet = fleetOn(s, { runners: 2, builds: 4, shared: true });
    await fleet.start();
    await fleet.finished;
    const st = fleet.status();
    expect(st.shared).toBe(true);
    expect(st.own).toMatchObject({ created: 4, taken: 4, success: 4, pending: 0, running: 0 });
    const othersRun = (await otherBuilds()).filter((b) => b.status !== 'pending').length;
    expect(othersRun).toBeGreaterThan(0);
    expect(st.others_taken).toBe(othersRun);
    expect(st.totals.builds_done).toBe(4 + othersRun);
    expect(st.message).toBe(`all 4 of its builds done; also took ${othersRun} builds it did not create`);
  });
});
