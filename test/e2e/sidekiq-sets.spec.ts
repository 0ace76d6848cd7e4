// Retries, Scheduled and Dead of a Sidekiq watched through its Redis, without Sidekiq Web: cards
// with the latest sizes and a trend, a chart of the three, and columns of the CSV export.
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sidekiqRuby } from '../helpers/sidekiq-oracle.ts';
import { curves, openSignedIn, startUiServer } from './support.ts';

let s: TestServer;
let redis: TestRedis;
test.beforeAll(async () => {
  redis = await startRedis();
  // Two jobs waiting to be retried, one scheduled an hour ahead, three dead.
  await sidekiqRuby(
    redis.url,
    `Sidekiq::Client.push("class" => "ReportJob", "queue" => "reports", "args" => [1], "at" => Time.now.to_f + 3600)
     Sidekiq.redis do |c|
       2.times { |i| c.zadd("retry", Time.now.to_f + 60, Sidekiq.dump_json("class" => "MailerJob", "queue" => "emails", "args" => [i], "jid" => "r#{i}" * 12, "error_class" => "Net::ReadTimeout", "error_message" => "slow", "retry_count" => 1)) }
       3.times { |i| c.zadd("dead", Time.now.to_f, Sidekiq.dump_json("class" => "ExportJob", "queue" => "exports", "args" => [i], "jid" => "d#{i}" * 12, "error_class" => "Timeout::Error", "error_message" => "too long", "retry_count" => 25)) }
     end`,
  );
  s = await startUiServer();
});
test.afterAll(async () => {
  await s?.close();
  await redis?.stop();
});

// A GitLab's metrics API reports no retry, scheduled or dead sets (this server's own job system now
// does, so the connection here is a GitLab one: this same server read through its metrics API).
test('a connection without Sidekiq’s sets shows no such cards', async ({ page }) => {
  const c = await http(`${s.url}/api/app/connections`, { json: { name: 'Metrics only', base_url: s.url, private_token: s.adminToken, interval_s: 2 }, token: s.adminToken });
  expect(c.status).toBe(201);
  await openSignedIn(page, s);
  await page.getByTestId('connection-picker').selectOption({ label: 'Metrics only' });
  await expect(page.getByTestId('kpi-processed')).toBeVisible();
  await expect(page.getByTestId('kpi-retry')).toHaveCount(0);
  await expect(page.getByTestId('chart-sets')).toHaveCount(0);
});

test('a Sidekiq connection’s dashboard shows Retries, Scheduled and Dead, charted and exported', async ({ page }) => {
  const c = await http(`${s.url}/api/app/connections`, { json: { name: 'Sets Sidekiq', kind: 'sidekiq', redis_url: redis.url }, token: s.adminToken });
  expect(c.status).toBe(201);
  await openSignedIn(page, s, '/connections');
  await page.locator('[data-testid="connection-row"][data-connection="Sets Sidekiq"]').getByTestId('connection-show').click();

  await expect(page.getByTestId('kpi-retry-value')).toHaveText('2');
  await expect(page.getByTestId('kpi-scheduled-value')).toHaveText('1');
  await expect(page.getByTestId('kpi-dead-value')).toHaveText('3');
  await expect(page.getByTestId('kpi-dead').locator('svg.sparkline')).toBeVisible();
  for (const name of ['retries', 'scheduled', 'dead']) await expect(curves(page, 'chart-sets').and(page.locator(`[data-series="${name}"]`))).toHaveCount(1);

  const id = ((c.body as { id: string }).id);
  const csv = await http(`${s.url}/api/app/connections/${id}/export.csv?from=${Date.now() - 600_000}&to=${Date.now() + 60_000}`, { token: s.adminToken });
  expect(csv.status, JSON.stringify(csv.body)).toBe(200);
  const [head, first] = String(csv.body).split('\r\n');
  const cols = head!.split(',');
  expect(cols).toEqual(expect.arrayContaining(['retries', 'scheduled', 'dead']));
  const cells = first!.split(',');
  expect([cells[cols.indexOf('retries')], cells[cols.indexOf('scheduled')], cells[cols.indexOf('dead')]]).toEqual(['2', '1', '3']);
});
