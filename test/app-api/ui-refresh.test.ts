// --ui-refresh-ms reaches the UI through /api/app/status (renderer/app/pace.tsx reads it there):
// 0 unless set, so a person's UI keeps its own paces; a test server's value as given.
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe('GET /api/app/status ui_refresh_ms', () => {
  it('is 0 by default', async () => {
    s = await startServer();
    const r = await http(`${s.url}/api/app/status`, { token: s.adminToken });
    expect(r.status).toBe(200);
    expect(r.body.ui_refresh_ms).toBe(0);
  });

  it('is the --ui-refresh-ms a server was started with', async () => {
    s = await startServer({ uiRefreshMs: 250 });
    const r = await http(`${s.url}/api/app/status`, { token: s.adminToken });
    expect(r.body.ui_refresh_ms).toBe(250);
  });

  it('refuses a value past a minute', async () => {
    await expect(startServer({ uiRefreshMs: 60_001 })).rejects.toThrow(/ui-refresh-ms|uiRefreshMs/i);
  });
});
