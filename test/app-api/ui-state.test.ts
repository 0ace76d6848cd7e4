// The UI's remembered state over real HTTP: empty at first, saved whole, kept in the data dir across
// a restart on another port, admin only, bad and oversized bodies refused with a 4xx message, and a
// poisoned file reading as nothing saved.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import { http } from '../helpers/http.ts';

const { start, close } = useServers({ monitorIntervalMs: 3_600_000 });

const put = (s: TestServer, json: unknown) => http(`${s.url}/api/app/ui-state`, { method: 'PUT', json, token: s.adminToken });
const get = (s: TestServer) => http(`${s.url}/api/app/ui-state`, { token: s.adminToken });

describe('GET/PUT /api/app/ui-state', () => {
  it('starts empty, keeps what was saved, and survives a restart on another port', async () => {
    const s = await start();
    expect((await get(s)).body).toEqual({ values: {}, updated_at: null });
    const values = { 'dashboard.range': '6h', 'queues.filter': 'mail', connection: 'embedded', tour_seen: true };
    const saved = await put(s, { values });
    expect(saved.status).toBe(200);
    expect(saved.body.values).toEqual(values);
    expect(saved.body.updated_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await get(s)).body.values).toEqual(values);
    expect(fs.statSync(path.join(s.dataDir, 'ui-state.json')).mode & 0o777).toBe(0o600);

    await close(s, { keepData: true });
    const again = await start({ dataDir: s.dataDir });
    expect(again.url).not.toBe(s.url);
    expect((await get(again)).body.values).toEqual(values);
  });

  it('is admin only', async () => {
    const s = await start();
    expect((await http(`${s.url}/api/app/ui-state`)).status).toBe(401);
    expect((await http(`${s.url}/api/app/ui-state`, { method: 'PUT', json: { values: {} }, token: 'nope' })).status).toBe(401);
  });

  it('refuses bodies that are not a values object with a 400 message', async () => {
    const s = await start();
    for (const bad of [{}, { values: [] }, { values: 'x' }, { values: null }, [1]]) {
      const r = await put(s, bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.message).toEqual(expect.any(String));
    }
    const r = await http(`${s.url}/api/app/ui-state`, { method: 'PUT', body: '{"values":', headers: { 'content-type': 'application/json' }, token: s.adminToken });
    expect(r.status).toBe(400);
  });

  it('refuses a state over --max-ui-state-kib with 413 naming the limit, keeping the old one', async () => {
    const s = await start({ maxUiStateKib: 1 });
    expect((await put(s, { values: { a: 'small' } })).status).toBe(200);
    const justOver = await put(s, { values: { a: 'x'.repeat(1100) } });
    expect(justOver.status).toBe(413);
    expect(justOver.body.message).toMatch(/max-ui-state-kib/);
    const wayOver = await put(s, { values: { a: 'x'.repeat(50_000) } });
    expect(wayOver.status).toBe(413);
    expect(wayOver.body.message).toEqual(expect.any(String));
    expect((await get(s)).body.values).toEqual({ a: 'small' });
  });

  it('reads a poisoned file as nothing saved, and a save replaces it', async () => {
    const s = await start();
    fs.writeFileSync(path.join(s.dataDir, 'ui-state.json'), '{"values": [1,2');
    expect((await get(s)).body).toEqual({ values: {}, updated_at: null });
    expect((await put(s, { values: { theme: 'dark' } })).status).toBe(200);
    expect((await get(s)).body.values).toEqual({ theme: 'dark' });
  });
});
