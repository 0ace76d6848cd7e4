// `serve --redis` shared with a Sidekiq app (real redis-server, ruby-sidekiq's client): the Queues
// list shows each queue's origin, and a queue page's Delete follows the server's `deletable` field:
// refused (aria-disabled, the server's reason shown and as its description) on an app's queue
// holding jobs, offered on Jobscope's queues, and offered once the app has taken its jobs. A
// refused Delete asks nothing and sends nothing. (Built-in queues: queues-delete.spec.ts.)
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sidekiqRuby } from '../helpers/sidekiq-oracle.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { enqueue, expectAccessible, openSignedIn, screenshot, startUiServer } from './support.ts';

type QueueView = { name: string; origin: string; deletable: boolean; delete_refusal: string | null };

let redis: TestRedis;
let s: TestServer;
test.beforeAll(async () => {
  redis = await startRedis();
  s = await startUiServer({ redisUrl: redis.url, jobConcurrency: 1, jobPollMs: 50 });
});
test.afterAll(async () => {
  await s?.close();
  await redis?.stop();
});

const view = async (name: string) => (await http(`${s.url}/api/v3/sim/jobs/queues/${name}`, { token: s.adminToken })).body as QueueView;
const row = (page: Page, name: string) => page.locator(`[data-testid="queue-list-row"][data-queue="${name}"]`);
const deleteButton = (page: Page) => page.getByTestId('queue-page-delete');

test('the Queues list shows each queue’s origin', async ({ page }) => {
  await enqueue(s, 'e2e_ours', 3, 600_000);
  await sidekiqRuby(redis.url, 'Sidekiq::Client.push_bulk("class" => "MailJob", "queue" => "app-mail", "args" => [[1], [2]])');
  await openSignedIn(page, s, '/queues');
  await expect(row(page, 'app-mail').getByTestId('queue-origin')).toHaveText('Sidekiq app');
  await expect(row(page, 'app-mail')).toContainText('the app’s jobs');
  await expect(row(page, 'e2e_ours').getByTestId('queue-origin')).toHaveText('Jobscope');
  await expect(row(page, 'stuck_builds').getByTestId('queue-origin')).toHaveText('Jobscope');
  await expectAccessible(page, 'the Queues list with a Sidekiq app’s queue');
});

test('an app’s queue with jobs: Delete refused with the server’s reason, asks and sends nothing; offered once the app has taken its jobs', async ({ page }, testInfo) => {
  await sidekiqRuby(redis.url, 'Sidekiq::Client.push_bulk("class" => "MailJob", "queue" => "app-reports", "args" => [[1], [2]])');
  const reports = await view('app-reports');
  expect(reports).toMatchObject({ origin: 'sidekiq_app', deletable: false });
  const asked: string[] = [];
  page.on('dialog', (d) => void (asked.push(d.message()), d.accept()));
  const deletes: string[] = [];
  page.on('request', (r) => void (r.method() === 'DELETE' && deletes.push(r.url())));

  await openSignedIn(page, s, '/queues/app-reports');
  await expect(page.getByTestId('queue-facts').getByTestId('queue-origin')).toHaveText('Sidekiq app');
  await expect(page.getByTestId('queue-not-deletable')).toHaveText(reports.delete_refusal!);
  await expect(deleteButton(page)).toHaveAttribute('aria-disabled', 'true');
  await expect(deleteButton(page)).toHaveAccessibleDescription(reports.delete_refusal!);
  // Still reachable by keyboard (a disabled button would not be), but it does nothing.
  await deleteButton(page).focus();
  await page.keyboard.press('Enter');
  await deleteButton(page).click({ force: true }); // force: Playwright waits for an aria-disabled button to be enabled
  await expectAccessible(page, 'an app’s queue page, Delete refused');
  await screenshot(page, testInfo, 'queue-page-sidekiq-app');
  expect(asked).toEqual([]);
  expect(deletes).toEqual([]);
  expect(Number(await sidekiqRuby(redis.url, 'print Sidekiq::Queue.new("app-reports").size'))).toBe(2);

  // What the app's fetch does: the jobs leave the list, the name stays in `queues`. The page's next
  // refresh of the view offers Delete, which only forgets the empty queue, and says so.
  await sidekiqRuby(redis.url, 'Sidekiq.redis { |c| 2.times { c.rpop("queue:app-reports") } }');
  await expect(deleteButton(page)).toHaveAttribute('aria-disabled', 'false');
  await expect(page.getByTestId('queue-not-deletable')).toHaveCount(0);
  await deleteButton(page).click();
  await expect(page).toHaveURL(/#\/queues$/);
  expect(asked).toEqual(['Forget the empty queue app-reports of a Sidekiq app? The app’s next push lists it again.']);
  expect((await http(`${s.url}/api/v3/sim/jobs/queues/app-reports`, { token: s.adminToken })).status).toBe(404);
});

test('a queue Jobscope created offers Delete even when a Sidekiq app pushes to it too', async ({ page }) => {
  await enqueue(s, 'e2e_shared', 1, 600_000);
  await sidekiqRuby(redis.url, 'Sidekiq::Client.push("class" => "MailJob", "queue" => "e2e_shared", "args" => [1])');
  expect(await view('e2e_shared')).toMatchObject({ origin: 'jobscope', deletable: true, delete_refusal: null });
  await openSignedIn(page, s, '/queues/e2e_shared');
  await expect(page.getByTestId('queue-facts').getByTestId('queue-origin')).toHaveText('Jobscope');
  await expect(deleteButton(page)).toHaveAttribute('aria-disabled', 'false');
  await expect(page.getByTestId('queue-not-deletable')).toHaveCount(0);
});
