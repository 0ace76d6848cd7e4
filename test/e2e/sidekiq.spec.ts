// A Sidekiq watched through its Redis, added from the Connections view: a real redis-server seeded
// by Sidekiq's own client (Ruby), tested (wrong port first), added, its queues on the dashboard and
// its queue and dead set peeked at, read-only.
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { startRedis, freePort, type TestRedis } from '../helpers/redis.ts';
import { sidekiqRuby } from '../helpers/sidekiq-oracle.ts';
import { expectAccessible, openSignedIn, startUiServer } from './support.ts';
import { http } from '../helpers/http.ts';

let home: TestServer;
let redis: TestRedis;
test.beforeAll(async () => {
  redis = await startRedis();
  await sidekiqRuby(
    redis.url,
    `3.times { |i| Sidekiq::Client.push("class" => "MailerJob", "queue" => "emails", "args" => ["user-#{i}@example.com"]) }
     Sidekiq.redis { |c| c.zadd("dead", Time.now.to_f, Sidekiq.dump_json("class" => "ExportJob", "queue" => "exports", "args" => [42], "jid" => "c" * 24, "error_class" => "Timeout::Error", "error_message" => "export took too long", "failed_at" => Time.now.to_f - 5, "retry_count" => 25)) }`,
  );
  home = await startUiServer();
});
test.afterAll(async () => {
  await home?.close();
  await redis?.stop();
});

test('a Sidekiq is added through its Redis URL, tested, charted and peeked at', async ({ page }) => {
  test.setTimeout(150_000);
  await openSignedIn(page, home, '/connections');
  await expect(page.getByTestId('view-connections')).toBeVisible();
  await page.getByTestId('add-kind-sidekiq').check();
  const form = page.getByTestId('add-sidekiq');
  await expect(form).toBeVisible();
  await expect(page.getByTestId('add-connection')).toHaveCount(0);

  // Nothing listens there: the test says so in words.
  await form.getByTestId('sk-url').fill(`redis://127.0.0.1:${await freePort()}/0`);
  await form.getByTestId('sk-test').click();
  await expect(form.getByTestId('sidekiq-test-result')).toContainText('✗');
  await expect(form.getByTestId('sidekiq-test-result')).toContainText('connection refused');

  await form.getByTestId('sk-name').fill('Shop Sidekiq');
  await form.getByTestId('sk-url').fill(redis.url);
  await form.getByTestId('sk-test').click();
  await expect(form.getByTestId('sidekiq-test-result')).toContainText('✓ OK: 1 queues, 0 processes, 3 enqueued, 0 retries, 1 dead');
  await form.getByTestId('sk-add').click();

  const row = page.locator('[data-testid="connection-row"][data-connection="Shop Sidekiq"]');
  await expect(row).toContainText('Sidekiq (Redis)');
  await expect(row).toContainText(redis.url);
  await expect(row).toContainText('ok');

  // Peek: the dead set, then the queue.
  await row.getByTestId('connection-peek').click();
  const peek = page.getByTestId('sidekiq-peek');
  await peek.getByTestId('peek-source').selectOption('dead');
  await expect(peek.getByTestId('peek-row')).toHaveCount(1);
  await expect(peek.getByTestId('peek-row')).toContainText('ExportJob');
  await expect(peek.getByTestId('peek-row')).toContainText('Timeout::Error: export took too long');
  await peek.getByTestId('peek-source').selectOption('queue:emails');
  await expect(peek.getByTestId('peek-row')).toHaveCount(3);
  await expect(peek.getByTestId('peek-row').first()).toContainText('MailerJob');
  await expect(peek.getByTestId('peek-row').first()).toContainText('user-2@example.com');
  // One axe run covers the form and the peek panel, both on the page now (axe is slow on a loaded machine).
  await expectAccessible(page, 'the sidekiq form and peek');

  // Its queues on the dashboard.
  await row.getByTestId('connection-show').click();
  const q = page.locator('[data-testid="queue-row"][data-queue="emails"]');
  await expect(q).toBeVisible();
  await expect(q.getByTestId('queue-backlog')).toHaveText('3');
});

test("the peek's menu counts what its table lists, and the table follows the set as it grows", async ({ page }) => {
  const added = await http<{ id: string }>(`${home.url}/api/app/connections`, { token: home.adminToken, json: { kind: 'sidekiq', name: 'Counted', redis_url: redis.url } });
  expect(added.status).toBe(201);
  await openSignedIn(page, home, '/connections');
  await page.locator('[data-testid="connection-row"][data-connection="Counted"]').getByTestId('connection-peek').click();
  const peek = page.getByTestId('sidekiq-peek');
  await peek.getByTestId('peek-source').selectOption('dead');
  const caption = peek.getByTestId('peek-table').locator('caption');
  const chosen = peek.getByTestId('peek-source').locator('option:checked');
  await expect(peek.getByTestId('peek-row')).toHaveCount(1);
  await expect(caption).toHaveText('1 job');
  await expect(chosen).toHaveText('Dead (1)');
  // Two more deaths while the peek is open: the menu's count (sampled) and the table (read) move together.
  await sidekiqRuby(redis.url, `2.times { |i| Sidekiq.redis { |c| c.zadd("dead", Time.now.to_f, Sidekiq.dump_json("class" => "LateJob", "queue" => "exports", "args" => [i], "jid" => "d#{i}" * 12, "error_class" => "RuntimeError", "error_message" => "late", "failed_at" => Time.now.to_f, "retry_count" => 1)) } }`);
  await expect(peek.getByTestId('peek-row')).toHaveCount(3, { timeout: 30_000 });
  await expect(caption).toHaveText('3 jobs');
  await expect(chosen).toHaveText('Dead (3)');
});
