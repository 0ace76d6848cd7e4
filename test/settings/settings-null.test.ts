// `null` in PUT /api/app/settings removes a saved value, as the contract says; the request
// validator must not coerce it (nor a boolean or a number) into another type first.
// Found by the model-based test (test/reliability/model): saving null answered 400 `got ""`.
import fs from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { startServer, tempDir } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

it('null removes a saved setting, and values keep their JSON type', async () => {
  const dataDir = tempDir();
  dirs.push(dataDir);
  const s = await startServer({ dataDir });
  const put = (values: Record<string, unknown>) => http(`${s.url}/api/app/settings`, { method: 'PUT', json: { values }, token: s.adminToken });
  const saved = (body: { settings: { name: string; saved: unknown }[] }, name: string) => body.settings.find((x) => x.name === name)?.saved;
  try {
    const set = await put({ 'history-days': 3, 'max-trace-mb': 2 });
    expect(set.status).toBe(200);
    expect(saved(set.body, 'history-days')).toBe(3);

    const removed = await put({ 'history-days': null });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(saved(removed.body, 'history-days')).toBeNull();
    expect(saved(removed.body, 'max-trace-mb')).toBe(2);
    expect(JSON.parse(fs.readFileSync(`${dataDir}/settings.json`, 'utf8'))).toEqual({ 'max-trace-mb': 2 });

    // A boolean stays a boolean (a flag setting), not the string "true".
    const demo = await put({ fsync: true });
    expect(demo.status).toBe(200);
    expect(saved(demo.body, 'fsync')).toBe(true);
  } finally {
    await s.close();
  }
});

it('an array or object value is refused, not unwrapped into a scalar', async () => {
  const s = await startServer();
  try {
    for (const value of [[1], ['debug'], { a: 1 }]) {
      const key = Array.isArray(value) && typeof value[0] === 'string' ? 'log-level' : 'max-trace-mb';
      const r = await http(`${s.url}/api/app/settings`, { method: 'PUT', json: { values: { [key]: value } }, token: s.adminToken });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.message).toMatch(/expected a string, number, boolean or null/);
    }
    const saved = await http(`${s.url}/api/app/settings`, { token: s.adminToken });
    expect(JSON.stringify(saved.body)).not.toMatch(/"saved":\s*1\b/);
  } finally {
    await s.close();
  }
});
