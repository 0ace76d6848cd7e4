// A sidekiq connection's page shows its Redis's facts (INFO: version, memory, clients, uptime) from
// a real redis-server; a user whose ACL forbids INFO sees why they are missing, the page working.
import { test, expect } from './fixtures.ts';
import { Redis } from 'ioredis';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { openSignedIn, startUiServer } from './support.ts';

let s: TestServer;
let redis: TestRedis;
test.beforeAll(async () => {
  redis = await startRedis();
  s = await startUiServer();
});
test.afterAll(async () => {
  await s?.close();
  await redis?.stop();
});

async function show(page: import('@playwright/test').Page, name: string, redisUrl: string) {
  const c = await http(`${s.url}/api/app/connections`, { json: { name, kind: 'sidekiq', redis_url: redisUrl }, token: s.adminToken });
  expect(c.status).toBe(201);
  await openSignedIn(page, s, '/connections');
  await page.locator(`[data-testid="connection-row"][data-connection="${name}"]`).getByTestId('connection-show').click();
}

test("a sidekiq connection's page shows its Redis's version, memory, clients and uptime", async ({ page }) => {
  const admin = new Redis(redis.url);
  const version = /redis_version:(\S+)/.exec(await admin.info('server'))![1]!;
  admin.disconnect();
  await show(page, 'Facts Sidekiq', redis.url);
  const card = page.getByTestId('redis-facts');
  await expect(card.getByTestId('redis-version')).toHaveText(version);
  await expect(card.getByTestId('redis-memory')).toHaveText(/^\d+\.\d MiB$/);
  await expect(card.getByTestId('redis-memory-peak')).toHaveText(/^\d+\.\d MiB$/);
  await expect(card.getByTestId('redis-clients')).toHaveText(/^[1-9]\d*$/);
  await expect(card.getByTestId('redis-uptime')).not.toHaveText('—');
});

test('a Redis user without INFO: the card says so, the rest of the page works', async ({ page }) => {
  const admin = new Redis(redis.url);
  await admin.acl('SETUSER', 'reader', 'on', '>reader-pw', '~*', '+@read', '+@connection');
  admin.disconnect();
  await show(page, 'No INFO Sidekiq', redis.url.replace('redis://', 'redis://reader:reader-pw@'));
  await expect(page.getByTestId('redis-facts-refused')).toContainText('may not run INFO');
  await expect(page.getByTestId('redis-facts-refused')).toContainText('NOPERM');
  await expect(page.getByTestId('processes-table')).toBeVisible();
  await expect(page.getByTestId('health-dot')).toHaveAttribute('data-state', 'ok');
});
