// The data dir holds build traces, artifacts, tokens (in the database) and logs;
// nobody but its owner may read them. Every folder is 0700 and every file 0600, whatever the umask,
// including data dirs that an older version left world-readable (tightened at start).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { makeZip, patchTrace, runnerJson, runningBuild, uploadArtifacts } from '../api/lib.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

// A permissive umask: modes must be set where files are made, not left to the umask.
let umask = 0;
beforeEach(() => {
  umask = process.umask(0o000);
});
afterEach(() => {
  process.umask(umask);
});

/** Every entry under root (root included) whose mode is not 0700 (folders) or 0600 (files), as "path mode". */
function looseModes(root: string): string[] {
  const out: string[] = [];
  const visit = (p: string) => {
    const st = fs.lstatSync(p);
    const mode = st.mode & 0o777;
    const want = st.isDirectory() ? 0o700 : 0o600;
    if (mode !== want) out.push(`${path.relative(root, p) || '.'} ${mode.toString(8)}`);
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) visit(path.join(p, name));
  };
  visit(root);
  return out;
}

function walk(root: string): string[] {
  const out: string[] = [];
  const visit = (p: string) => {
    out.push(path.relative(root, p) || '.');
    if (fs.lstatSync(p).isDirectory()) for (const name of fs.readdirSync(p)) visit(path.join(p, name));
  };
  visit(root);
  return out;
}

/** A build with a trace (appended and then replaced), artifacts, a log and saved settings. */
async function useEverything(s: TestServer) {
  const { runner, build } = await runningBuild(s, {}, 'modes');
  const part = Buffer.from('$ make\nok\n');
  expect((await patchTrace(s, build.id, { token: build.token, range: `0-${part.length - 1}`, body: part })).status).toBe(202);
  const zip = await makeZip({ 'out/report.txt': 'secret report' });
  expect((await uploadArtifacts(s, build.id, build.token, zip)).status).toBe(201);
  const done = await runnerJson(`${s.url}/ci/api/v1/builds/${build.id}.json`, 'PUT', { token: runner.token, state: 'success', trace: '$ make\nok\ndone\n' });
  expect(done.status).toBe(200);
  const saved = await http(`${s.url}/api/app/settings`, { method: 'PUT', json: { values: { 'max-artifact-mb': 7 } }, token: s.adminToken });
  expect(saved.status).toBe(200);
  // Unknown routes and warnings: something for the log to hold.
  expect((await http(`${s.url}/api/v3/sim/builds/999999`, { token: s.adminToken })).status).toBe(404);
}

describe('the data dir is private', () => {
  it('after a build with trace, artifacts, logs and settings, every folder is 0700 and every file 0600 (umask 000)', async () => {
    const dataDir = path.join(tempDir(), 'data');
    dirs.push(path.dirname(dataDir));
    const s = await startServer({ dataDir, logLevel: 'info' });
    await useEverything(s);
    const running = walk(dataDir);
    for (const p of ['traces', 'artifacts', 'tmp', 'logs', 'logs/jobscope.log', 'settings.json', 'jobscope.db', 'jobscope.pid']) expect(running).toContain(p);
    expect(running.some((p) => /^traces\/\d+\.log$/.test(p))).toBe(true);
    expect(running.some((p) => /^artifacts\/\d+-[0-9a-f]{16}\.bin$/.test(p))).toBe(true);
    expect(looseModes(dataDir)).toEqual([]);
    await s.close({ keepData: true });
    expect(looseModes(dataDir)).toEqual([]);
  });

  it('a data dir an older version left 0755/0644 is tightened at start', async () => {
    const dataDir = path.join(tempDir(), 'data');
    dirs.push(path.dirname(dataDir));
    const s = await startServer({ dataDir, logLevel: 'info' });
    await useEverything(s);
    await s.close({ keepData: true });
    // What an older version (umask 022, no explicit modes) left behind.
    const loosen = (p: string) => {
      const st = fs.lstatSync(p);
      fs.chmodSync(p, st.isDirectory() ? 0o755 : 0o644);
      if (st.isDirectory()) for (const name of fs.readdirSync(p)) loosen(path.join(p, name));
    };
    loosen(dataDir);
    expect(looseModes(dataDir).length).toBeGreaterThan(5);

    const again = await startServer({ dataDir, logLevel: 'info' });
    expect(looseModes(dataDir)).toEqual([]);
    // Still the same data, readable by the server that now owns it alone.
    const builds = await http(`${again.url}/api/v3/sim/builds`, { token: again.adminToken });
    expect(builds.status).toBe(200);
    const [build] = builds.body as { id: number }[];
    expect((await http(`${again.url}/api/v3/sim/builds/${build!.id}/trace`, { token: again.adminToken })).raw.toString()).toBe('$ make\nok\ndone\n');
    await again.close({ keepData: true });
  });
});
