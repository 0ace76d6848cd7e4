// Settings saved from the UI apply at the next start; flags still win; bad values are refused;
// the log is readable through the API and never holds a token.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, tempDir } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { resolveConfig } from '../../server/config.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('settings API', () => {
  it('saves a setting for the next start, refuses bad values, and flags still win', async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    let s = await startServer({ dataDir, logLevel: 'info' });
    const before = await http(`${s.url}/api/app/settings`, { token: s.adminToken });
    expect(before.status).toBe(200);
    const art = before.body.settings.find((x: { name: string }) => x.name === 'max-artifact-mb');
    expect(art).toMatchObject({ effective: 100, default: 100, saved: null, restart_required: false });

    const bad = await http(`${s.url}/api/app/settings`, { method: 'PUT', json: { values: { 'max-artifact-mb': 'lots' } }, token: s.adminToken });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/max-artifact-mb/);
    const unknown = await http(`${s.url}/api/app/settings`, { method: 'PUT', json: { values: { 'data-dir': '/etc' } }, token: s.adminToken });
    expect(unknown.status).toBe(400);

    const ok = await http(`${s.url}/api/app/settings`, { method: 'PUT', json: { values: { 'max-artifact-mb': 7 } }, token: s.adminToken });
    expect(ok.status).toBe(200);
    expect(ok.body.settings.find((x: { name: string }) => x.name === 'max-artifact-mb')).toMatchObject({ effective: 100, saved: 7, restart_required: true });
    await s.close({ keepData: true });

    expect(resolveConfig({ dataDir }, {}).maxArtifactBytes).toBe(7 * 1024 * 1024);
    expect(resolveConfig({ dataDir, maxArtifactBytes: '3' }, {}).maxArtifactBytes).toBe(3 * 1024 * 1024);
    expect(resolveConfig({ dataDir }, { JOBSCOPE_MAX_ARTIFACT_MB: '5' }).maxArtifactBytes).toBe(5 * 1024 * 1024);

    s = await startServer({ dataDir, logLevel: 'info' });
    const inst = await http(`${s.url}/api/v3/sim/instance`, { token: s.adminToken });
    expect(inst.body.limits.max_artifact_bytes).toBe(7 * 1024 * 1024);
    await s.close({ keepData: true });
  });

  it('needs an admin token', async () => {
    const s = await startServer();
    expect((await http(`${s.url}/api/app/settings`)).status).toBe(401);
    expect((await http(`${s.url}/api/app/logs`, { token: 'nope' })).status).toBe(401);
    await s.close();
  });
});

describe('log', () => {
  it('is served by the API and holds no token', async () => {
    const s = await startServer({ logLevel: 'info' });
    const proj = await http(`${s.url}/api/v3/sim/projects?private_token=${s.adminToken}`, { json: { name: 'p' } });
    expect(proj.status).toBe(201);
    // A request that fails inside a handler is logged with its URL: the token in it must be redacted.
    await http(`${s.url}/api/v3/sim/builds/999?private_token=${s.adminToken}`);
    const logs = await http(`${s.url}/api/app/logs?lines=50`, { token: s.adminToken });
    expect(logs.status).toBe(200);
    expect(logs.body.lines.some((l: { msg: string }) => /listening/i.test(l.msg))).toBe(true);
    const text = fs.readFileSync(path.join(s.dataDir, 'logs', 'jobscope.log'), 'utf8');
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain(s.adminToken);
    expect(text).not.toContain(s.registrationToken);
    expect(text).not.toContain(proj.body.runners_token);
    await s.close();
  });
});

describe('reset data', () => {
  it('restarts on an emptied data dir, keeping tokens and the address', async () => {
    const { ServerHost } = await import('../../hosts/server-host.ts');
    const dataDir = tempDir();
    dirs.push(dataDir);
    const host = new ServerHost(resolveConfig({ dataDir, port: 0, logLevel: 'silent', mode: 'test' }, {}));
    const url = await host.start();
    const token = host.server.ctx.store.adminToken;
    const reg = host.server.ctx.store.registrationToken;
    const project = await http(`${url}/api/v3/sim/projects`, { json: { name: 'p' }, token });
    await http(`${url}/api/v3/sim/projects/${project.body.id}/builds`, { json: { count: 3 }, token });
    expect((await http(`${url}/api/v3/sim/builds`, { token })).body).toHaveLength(3);

    expect((await http(`${url}/api/app/reset`, { json: { confirm: 'yes' }, token })).status).toBe(400);
    const answer = await http(`${url}/api/app/reset`, { json: { confirm: 'reset' }, token });
    expect(answer.status).toBe(202);
    let builds: unknown[] | undefined;
    for (let i = 0; i < 100 && builds === undefined; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const res = await http(`${url}/api/v3/sim/builds`, { token }).catch(() => undefined);
      if (res?.status === 200 && Array.isArray(res.body) && res.body.length === 0) builds = res.body;
    }
    expect(builds).toEqual([]);
    expect((await http(`${url}/api/v3/sim/projects`, { token })).body).toEqual([]);
    expect(host.server.ctx.store.registrationToken).toBe(reg);
    await host.close();
  });

  it('is refused by a host that cannot restart', async () => {
    const s = await startServer();
    const res = await http(`${s.url}/api/app/reset`, { json: { confirm: 'reset' }, token: s.adminToken });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/delete the data dir/);
    await s.close();
  });
});
