// A Sidekiq watched through its Redis, added from the Connections view: a real redis-server seeded
// by Sidekiq's own client (Ruby), tested (wrong port first), added, its queues on the dashboard and
// its queue and dead set peeked at, read-only; a namespace without data tests as a warning; a
// connection edited, the password asked again before it moves to another host; its Busy page.
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { startRedis, freePort, type TestRedis } from '../helpers/redis.ts';
import { sidekiqRuby } from '../helpers/sidekiq-oracle.ts';
import { expectAccessible, openSignedIn, startUiServer } from './support.ts';
import { http } from '../helpers/http.ts';
import type { ConnectionView } from '../../contract/app.ts';

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

test('a namespace without Sidekiq data tests as a warning that says where the data is', async ({ page }) => {
  await openSignedIn(page, home, '/connections');
  await page.getByTestId('add-kind-sidekiq').check();
  const form = page.getByTestId('add-sidekiq');
  await form.getByTestId('sk-url').fill(redis.url);
  await form.getByTestId('sk-namespace').fill('nope');
  await form.getByTestId('sk-test').click();
  const result = form.getByTestId('sidekiq-test-result');
  await expect(result).toHaveAttribute('data-state', 'warning');
  await expect(result).toContainText('Warning');
  await expect(result).toContainText('found no Sidekiq data under namespace "nope"');
  await expect(result).toContainText('check the namespace');
  await expect(result).toContainText('Sidekiq data was found under no namespace');
  await expect(result).not.toContainText('✓');
  await expectAccessible(page, 'the namespace warning');
  // Added anyway: the warning stays on screen instead of an empty dashboard saying it later.
  await form.getByTestId('sk-name').fill('Empty namespace');
  await form.getByTestId('sk-add').click();
  await expect(page.locator('[data-testid="connection-row"][data-connection="Empty namespace"]')).toBeVisible();
  await expect(result).toHaveAttribute('data-state', 'warning');
  await expect(result).toContainText('found no Sidekiq data under namespace "nope"');
});

test('a connection is edited: name, interval and namespace; a new host asks for the password before saving; a refusal is shown', async ({ page }) => {
  const c = await http(`${home.url}/api/app/connections`, { token: home.adminToken, json: { name: 'Edit me', kind: 'sidekiq', redis_url: redis.url, password: 'old-secret', namespace: 'nope', enabled: false } });
  expect(c.status).toBe(201);
  const id = (c.body as ConnectionView).id;
  const saved = async () => ((await http(`${home.url}/api/app/connections`, { token: home.adminToken })).body as ConnectionView[]).find((x) => x.id === id)!;
  await openSignedIn(page, home, '/connections');
  const row = () => page.locator(`[data-testid="connection-row"][data-connection="${name}"]`);
  let name = 'Edit me';
  await row().getByTestId('connection-edit').click();
  const form = page.getByTestId('edit-connection');
  await expect(form.getByTestId('edit-name')).toHaveValue('Edit me');
  await expect(form.getByTestId('edit-namespace')).toHaveValue('nope');
  await form.getByTestId('edit-name').fill('Shop (edited)');
  await form.getByTestId('edit-interval').fill('7');
  await form.getByTestId('edit-namespace').fill('');
  await form.getByTestId('edit-save').click();
  await expect(form).toHaveCount(0);
  name = 'Shop (edited)';
  await expect(row()).toContainText('7 s');
  expect(await saved()).toMatchObject({ name: 'Shop (edited)', interval_s: 7, namespace: '', has_token: true });

  await row().getByTestId('connection-edit').click();
  // What the server refuses comes back in the form, in its words.
  await form.getByTestId('edit-url').fill(redis.url.replace(/\/\d+$/, '/abc'));
  await form.getByTestId('edit-save').click();
  await expect(form.getByTestId('edit-message')).toContainText('database number');
  // Another host: the form says the password is needed before anything is sent.
  const elsewhere = `redis://localhost:${redis.port}/0`;
  await form.getByTestId('edit-url').fill(elsewhere);
  await expect(form.getByTestId('edit-secret-note')).toContainText('needs the password again');
  await expectAccessible(page, 'the edit form');
  await form.getByTestId('edit-save').click();
  await expect(form.getByTestId('edit-message')).toContainText('needs its password again: enter it');
  expect((await saved()).base_url).toBe(redis.url);
  await form.getByTestId('edit-secret').fill('new-secret');
  await form.getByTestId('edit-save').click();
  await expect(form).toHaveCount(0);
  expect(await saved()).toMatchObject({ base_url: elsewhere, has_token: true });
});

test("a sidekiq connection's Busy page: a quiet process's running job, its long arguments opened on demand", async ({ page }) => {
  await sidekiqRuby(
    redis.url,
    `id = "busy-host:77:0a1b2c"
     payload = Sidekiq.dump_json("class" => "ReportJob", "queue" => "reports", "args" => [{"ids" => (1..80).to_a}], "jid" => "e" * 24)
     Sidekiq.redis do |c|
       c.sadd("processes", id)
       c.hset(id, "info", Sidekiq.dump_json("hostname" => "busy-host", "pid" => 77, "tag" => "", "concurrency" => 2, "queues" => ["reports"], "labels" => [], "started_at" => Time.now.to_f - 60, "identity" => id), "busy", 1, "beat", Time.now.to_f, "quiet", "true")
       c.expire(id, 600)
       c.hset("#{id}:workers", "ox1", Sidekiq.dump_json("queue" => "reports", "payload" => payload, "run_at" => Time.now.to_i - 90))
     end`,
  );
  const c = await http(`${home.url}/api/app/connections`, { token: home.adminToken, json: { name: 'Busy Sidekiq', kind: 'sidekiq', redis_url: redis.url, enabled: false } });
  expect(c.status).toBe(201);
  await openSignedIn(page, home, '/busy');
  await page.getByTestId('connection-picker').selectOption({ label: 'Busy Sidekiq' });
  const row = page.locator('[data-testid="busy-row"][data-jid="eeeeeeeeeeeeeeeeeeeeeeee"]');
  await expect(row).toContainText('busy-host:77:0a1b2c');
  await expect(row.getByTestId('process-quiet')).toHaveText('quiet');
  await expect(row).toContainText('ReportJob');
  await expect(row.getByTestId('busy-running-for')).toHaveText(/^1 m \d+ s$/);
  const whole = row.locator('details');
  await expect(whole.locator('pre')).toBeHidden();
  await whole.locator('summary').click();
  await expect(whole.locator('pre')).toContainText('78,79,80]}]');
  await expectAccessible(page, 'the Busy page of a sidekiq connection');
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
