// A job's page, opened from a list row: on a sidekiq connection a dead job that a real Sidekiq 6.4
// killed (its backtrace compressed by Sidekiq itself), its arguments pretty and raw, the decoded
// backtrace and the tags; Back returns to the list's page; a queue page's size and latency at the
// top; and on this server's own job system a job of the retry set. One server for the file.
import type { Page } from '@playwright/test';
import { Redis } from 'ioredis';
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sidekiqRuby, startSidekiqApp } from '../helpers/sidekiq-oracle.ts';
import { expectAccessible, openSignedIn, screenshot, startUiServer, UI_QUIET_REFRESH_MS } from './support.ts';

test.describe.configure({ mode: 'serial' });

let s: TestServer;
let redis: TestRedis;
let deadJid = '';

test.beforeAll(async () => {
  redis = await startRedis();
  // A backoff "second" of a minute: this server's retry stays put while the page is looked at.
  s = await startUiServer({ jobBackoffUnitMs: 60_000, uiRefreshMs: UI_QUIET_REFRESH_MS });
  const push = await http(`${s.url}/api/v3/sim/jobs`, { json: { queue: 'e2e_flaky', class: 'FlakyWorker', count: 1, fail: true, retry: 5 }, token: s.adminToken });
  expect(push.status).toBe(202);

  // 30 older deaths, so the dead set has a second page.
  await sidekiqRuby(
    redis.url,
    `Sidekiq.redis { |c| 30.times { |i| c.zadd("dead", Time.now.to_f - 3600 - i, Sidekiq.dump_json("class" => "OldJob", "queue" => "old", "args" => [i], "jid" => "old%021d" % i, "error_class" => "E", "error_message" => "old")) } }
     Sidekiq::Client.push("class" => "ReportJob", "queue" => "reports", "args" => ["monthly"], "at" => Time.now.to_f + 3600)
     # As Sidekiq's client pushes (SADD queues, LPUSH), enqueued 90 s ago: its push would stamp now.
     Sidekiq.redis { |c| c.sadd("queues", "emails"); 3.times { |i| c.lpush("queue:emails", Sidekiq.dump_json("class" => "MailerJob", "queue" => "emails", "args" => ["user-#{i}@example.com", {"locale" => "en"}], "jid" => "mail%020d" % i, "retry" => true, "created_at" => Time.now.to_f - 120, "enqueued_at" => Time.now.to_f - 90)) } }`,
  );
  deadJid = (await sidekiqRuby(redis.url, `print Sidekiq::Client.push("class" => "DieJob", "queue" => "detail", "args" => [{"account" => 42, "region" => "eu"}], "retry" => 0, "backtrace" => true, "tags" => ["billing", "urgent"])`)).trim();
  const sidekiq = startSidekiqApp(redis.url, ['-q', 'detail', '-c', '1']);
  const admin = new Redis(redis.url);
  try {
    await expect.poll(() => admin.zcard('dead'), { timeout: 60_000 }).toBe(31);
  } finally {
    sidekiq.kill('SIGKILL');
    admin.disconnect();
  }
  const c = await http(`${s.url}/api/app/connections`, { json: { name: 'Shop Sidekiq', kind: 'sidekiq', redis_url: redis.url }, token: s.adminToken });
  expect(c.status).toBe(201);
  await expect.poll(async () => ((await http(`${s.url}/api/v3/sim/jobs/retries`, { token: s.adminToken })).body as unknown[]).length, { timeout: 20_000 }).toBe(1);
});
test.afterAll(async () => {
  await s?.close();
  await redis?.stop();
});

const rows = (page: Page) => page.getByTestId('job-row');

async function onSidekiq(page: Page, route: string) {
  await openSignedIn(page, s, route);
  await page.getByTestId('connection-picker').selectOption({ label: 'Shop Sidekiq' });
}

test('a dead job of a real Sidekiq opens with its class, arguments pretty and raw, decoded backtrace and tags', async ({ page }, testInfo) => {
  await onSidekiq(page, '/dead');
  const row = page.locator(`[data-testid="job-row"][data-job="${deadJid}"]`);
  await row.getByTestId('job-link').focus();
  await page.keyboard.press('Enter');

  await expect(page).toHaveURL(/#\/job\/dead\/\d+(\.\d+)?-/);
  await expect(page.getByTestId('job-class')).toHaveText('DieJob');
  await expect(page.getByTestId('job-facts')).toContainText(deadJid);
  await expect(page.getByTestId('job-retry-policy')).toHaveText('no retries: straight to Dead');
  await expect(page.getByTestId('job-died')).not.toHaveText('—');
  await expect(page.getByTestId('job-failed')).not.toHaveText('—');
  // Pretty-printed: one member a line, indented.
  await expect(page.getByTestId('job-args')).toContainText('"account": 42,\n    "region": "eu"');
  await expect(page.getByTestId('job-tags').getByRole('listitem')).toHaveText(['billing', 'urgent']);
  await expect(page.getByTestId('job-error')).toHaveText('RuntimeError: dies at once');
  const lines = page.getByTestId('job-backtrace').getByRole('listitem');
  expect(await lines.count()).toBeGreaterThan(2);
  await expect(lines.first()).toContainText(/workers\.rb:\d+:in `perform'/);
  await expectAccessible(page, 'a job page (light)');
  await screenshot(page, testInfo, 'job-detail');

  await page.getByTestId('job-raw-toggle').click();
  await expect(page.getByTestId('job-raw-toggle')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('job-raw')).toContainText('"error_backtrace":');
  await expect(page.getByTestId('job-raw')).toContainText(`"jid": "${deadJid}"`);
});

test('the job page passes axe in the dark theme too', async ({ page }) => {
  await openSignedIn(page, s, '/dead');
  await page.getByTestId('connection-picker').selectOption({ label: 'Shop Sidekiq' });
  await page.locator(`[data-testid="job-row"][data-job="${deadJid}"]`).getByTestId('job-link').click();
  await expect(page.getByTestId('job-backtrace')).toBeVisible();
  await page.getByTestId('theme-picker').selectOption('dark');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expectAccessible(page, 'a job page (dark)');
  await page.getByTestId('theme-picker').selectOption('light'); // the theme is kept by the server: the next tests' too
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
});

test('Back returns to the page of the list the job was opened from', async ({ page }) => {
  await onSidekiq(page, '/dead');
  // Page 2 held back: page 1's rows stay shown meanwhile, and the pager must not claim they are page 2's
  // (a click on a row then opened a page-1 job).
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const page2 = /\/sidekiq\/sets\/dead\?page=2&/;
  await page.route(page2, async (route) => {
    await held;
    await route.continue();
  });
  await page.getByTestId('pager-next').click();
  await expect(page.getByTestId('pager-status')).toContainText('Loading page 2 of 2');
  await expect(page.getByTestId('pager')).toHaveAttribute('aria-busy', 'true');
  release();
  await expect(page.getByTestId('pager-status')).toContainText('Page 2 of 2');
  await expect(page.getByTestId('pager')).toHaveAttribute('aria-busy', 'false');
  await page.unroute(page2);
  await expect(page).toHaveURL(/#\/dead\?page=2$/);
  const opened = await rows(page).first().getAttribute('data-job');
  await rows(page).first().getByTestId('job-link').click();
  await expect(page.getByTestId('job-class')).toHaveText('OldJob');
  await expect(page.getByTestId('job-back')).toHaveText('← Back to Dead');
  await page.getByTestId('job-back').click();
  await expect(page).toHaveURL(/#\/dead\?page=2$/);
  await expect(page.getByTestId('pager-status')).toContainText('Page 2 of 2');
  await expect(rows(page).first()).toHaveAttribute('data-job', opened!);
});

test('a sidekiq queue page shows its size and latency at the top, and its jobs open', async ({ page }) => {
  await onSidekiq(page, '/queues/emails');
  const facts = page.getByTestId('queue-facts');
  await expect(facts.getByTestId('queue-size')).toHaveText('3');
  // Enqueued 90 s before the page was read (Sidekiq's latency: from the oldest job's enqueued_at).
  await expect(facts.getByTestId('queue-latency')).toHaveText(/^\d+\s?m\b/);
  await expect(facts.getByTestId('queue-trend')).toBeVisible();
  await page.getByTestId('queue-jobs').getByTestId('job-link').first().click();
  await expect(page.getByTestId('job-class')).toHaveText('MailerJob');
  await expect(page.getByTestId('job-latency')).toHaveText(/^\d+\s?m\b/);
  await expect(page.getByTestId('job-args')).toContainText('"locale": "en"');
  await expect(page.getByTestId('job-back')).toHaveText('← Back to queue emails');
});

test("a Sidekiq's scheduled set has its tab, and a scheduled job says when it runs", async ({ page }) => {
  await onSidekiq(page, '/retries');
  await page.getByTestId('jobs-nav').getByRole('link', { name: 'Scheduled' }).click();
  await expect(page).toHaveURL(/#\/scheduled$/);
  await expect(rows(page)).toHaveCount(1);
  await expect(rows(page).first().locator('[data-col="runs_at"]')).not.toHaveText('—');
  await rows(page).first().getByTestId('job-link').click();
  await expect(page).toHaveURL(/#\/job\/schedule\//);
  await expect(page.getByTestId('job-class')).toHaveText('ReportJob');
  await expect(page.getByTestId('job-scheduled')).not.toHaveText('—');
  await expect(page.getByTestId('job-back')).toHaveText('← Back to Scheduled');
});

test("this server's own retry opens the same page", async ({ page }) => {
  await openSignedIn(page, s, '/retries');
  await page.getByTestId('connection-picker').selectOption({ label: 'This Jobscope' });
  await rows(page).first().getByTestId('job-link').click();
  await expect(page).toHaveURL(/#\/job\/retry\//);
  await expect(page.getByTestId('job-class')).toHaveText('FlakyWorker');
  await expect(page.getByTestId('job-error')).toHaveText('Error: SyntheticJob failed on purpose (fail: true)');
  await expect(page.getByTestId('job-retry-count')).toHaveText('0');
  await expect(page.getByTestId('job-retry-policy')).toHaveText('up to 5 retries');
  await expect(page.getByTestId('job-next-retry')).not.toHaveText('—');
  await expect(page.getByTestId('job-args')).toContainText('"fail": true');
  await expect(page.getByTestId('job-tags')).toHaveCount(0);
  // This server's job system schedules nothing for later: no Scheduled tab.
  await page.getByTestId('job-back').click();
  await expect(page.getByTestId('jobs-nav').getByRole('link')).toHaveText(['Queues', 'Busy', 'Retries', 'Dead']);
});

test("a job's page acts on it: Retry now, asked first, takes it out of the set and returns to the list", async ({ page }) => {
  await openSignedIn(page, s, '/retries');
  await page.getByTestId('connection-picker').selectOption({ label: 'This Jobscope' });
  await rows(page).first().getByTestId('job-link').click();
  await expect(page).toHaveURL(/#\/job\/retry\//);
  const jobUrl = page.url();
  const actions = page.getByTestId('job-actions');
  await expect(actions.getByTestId('job-retry')).toBeVisible();
  await expect(actions.getByTestId('job-kill')).toBeVisible();
  await actions.getByTestId('job-retry').click();
  await page.getByTestId('confirm-dialog').getByTestId('confirm-ok').click();
  await expect(page).toHaveURL(/#\/retries/);
  // The entry it was has left the retry set (a new failure is a new entry, with a new key).
  const key = decodeURIComponent(jobUrl.split('#/job/retry/')[1]!);
  const gone = await http(`${s.url}/api/app/connections/embedded/jobs/sets/retry/${encodeURIComponent(key)}`, { token: s.adminToken });
  expect(gone.status, JSON.stringify(gone.body)).toBe(404);
});
