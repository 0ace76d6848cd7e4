// A Sidekiq process quieted with TSTP, watched through its Redis: the Processes table marks it
// quiet, and the Busy card's utilization leaves its threads out, as spare capacity it is not; the
// other one is quieted from the table (the connection allows changes); a process that stopped is
// listed as gone without a busy bar.
import type { ChildProcess } from 'node:child_process';
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { startQuietPair } from '../helpers/quiet-sidekiq.ts';
import { expectAccessible, openSignedIn, startUiServer } from './support.ts';

let s: TestServer;
let redis: TestRedis;
const workers: ChildProcess[] = [];
test.beforeAll(async () => {
  redis = await startRedis();
  s = await startUiServer();
});
test.afterAll(async () => {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await s?.close();
  await redis?.stop();
});

test('a quiet process is marked quiet and its threads are not counted as capacity', async ({ page }) => {
  test.setTimeout(90_000);
  const { working } = await startQuietPair(redis.url, workers);
  const c = await http(`${s.url}/api/app/connections`, { json: { name: 'Quiet Sidekiq', kind: 'sidekiq', redis_url: redis.url, interval_s: 2 }, token: s.adminToken });
  expect(c.status).toBe(201);
  // Changes allowed: the table offers quiet and stop (the axe run below covers those buttons too).
  expect((await http(`${s.url}/api/app/connections/${(c.body as { id: string }).id}`, { method: 'PATCH', json: { allow_changes: true }, token: s.adminToken })).status).toBe(200);

  await openSignedIn(page, s, '/connections');
  await page.locator('[data-testid="connection-row"][data-connection="Quiet Sidekiq"]').getByTestId('connection-show').click();
  const rows = page.getByTestId('process-row');
  await expect(rows).toHaveCount(2);
  const quietRow = rows.filter({ hasText: 'to-quiet' });
  await expect(quietRow.getByTestId('process-quiet')).toHaveText('quiet');
  await expect(rows.filter({ hasText: 'working' }).getByTestId('process-quiet')).toHaveCount(0);
  await expect(page.getByTestId('kpi-busy-value')).toHaveText('0 / 2');
  await expect(page.getByTestId('kpi-quiet')).toContainText('1 quiet');
  // One axe run covers the quiet marker and the Redis card beside it.
  await expect(page.getByTestId('redis-version')).not.toHaveText('—');
  await expectAccessible(page, 'the quiet marker and the Redis card');

  // Quiet from the table, asked first: Sidekiq's heartbeat reads the signal and the row says quiet.
  const workingRow = rows.filter({ hasText: 'working' });
  await expect(quietRow.getByTestId('process-quiet-button')).toHaveCount(0);
  await workingRow.getByTestId('process-quiet-button').click();
  await expect(page.getByTestId('confirm-dialog')).toContainText('takes no new ones');
  await page.getByTestId('confirm-ok').click();
  await expect(workingRow.getByTestId('process-quiet')).toHaveText('quiet', { timeout: 30_000 });

  // A process that stops (TERM removes it from `processes`) stays listed as gone, with no busy bar.
  working.kill('SIGTERM');
  const gone = page.getByTestId('process-gone');
  await expect(gone).toHaveCount(1);
  await expect(gone).toContainText('working');
  await expect(gone.getByRole('meter')).toHaveCount(0);
  await expect(quietRow.getByRole('meter')).toHaveCount(1);
});
