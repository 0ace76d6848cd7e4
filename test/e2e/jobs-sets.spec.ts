// Queues, retries and the dead set from the UI, as Sidekiq Web offers them: a queue opened from the
// dashboard shows its next jobs paged; a dead job retried from the Dead page leaves the dead set and
// waits in its queue; a retry is deleted (and the rest retried now) from the Retries page; on a
// GitLab connection the pages say they are not available instead of offering actions, and on a
// sidekiq connection (a real redis-server seeded by Sidekiq's own client) they list read-only; the
// Busy page lists the job running now; the dashboard counts the retry and dead sets.
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis } from '../helpers/redis.ts';
import { sidekiqRuby } from '../helpers/sidekiq-oracle.ts';
import { expectAccessible, openSignedIn, screenshot, startUiServer, UI_QUIET_REFRESH_MS } from './support.ts';

let s: TestServer;

type Listed = { key: string; id: number; queue: string; class: string };
const api = (path: string) => http(`${s.url}/api/v3/sim${path}`, { token: s.adminToken });
const dead = async () => (await api('/jobs/dead')).body as Listed[];
const retries = async () => (await api('/jobs/retries')).body as Listed[];
const backlog = async (queue: string) => (await api(`/jobs/queues/${queue}`)).body.backlog as number;

async function push(body: Record<string, unknown>) {
  const r = await http(`${s.url}/api/v3/sim/jobs`, { json: body, token: s.adminToken });
  if (r.status !== 202) throw new Error(`enqueue: ${r.status} ${JSON.stringify(r.body)}`);
}

test.beforeAll(async () => {
  // One worker, and a backoff "second" of a minute: a retry waits 15+ minutes, so it stays put.
  // The pages here show what is there when they load, or refetch after the test's own retry and
  // delete: no test waits for the server to change a list by itself, so no refresh every second.
  s = await startUiServer({ jobConcurrency: 1, jobBackoffUnitMs: 60_000, uiRefreshMs: UI_QUIET_REFRESH_MS });
  await push({ queue: 'e2e_dead', class: 'DeadWorker', count: 3, fail: true, retry: 0 });
  await push({ queue: 'e2e_retry', class: 'RetryWorker', count: 2, fail: true, retry: 5 });
  await expect.poll(async () => [(await dead()).length, (await retries()).length], { timeout: 20_000 }).toEqual([3, 2]);
  // Then the only worker is kept busy, so whatever is enqueued or retried next waits where the UI can see it.
  await push({ queue: 'e2e_block', duration_ms: 600_000 });
  await expect.poll(() => backlog('e2e_block')).toBe(0);
  await push({ queue: 'e2e_next', class: 'NextJob', count: 30, duration_ms: 5 });
  // The dashboard's queue rows are the last sample's (every 500 ms), read once at this pace.
  await expect.poll(async () => (await http(`${s.url}/api/app/connections/embedded/current`, { token: s.adminToken })).body?.queues?.e2e_next?.backlog).toBe(30);
});
test.afterAll(async () => {
  await s?.close();
});

const rows = (page: Page) => page.getByTestId('job-row');

test('a queue opened from the dashboard shows its size and next jobs, paged', async ({ page }, testInfo) => {
  await openSignedIn(page, s);
  await page.locator('[data-testid="queue-row"][data-queue="e2e_next"]').getByTestId('queue-link').click();
  await expect(page).toHaveURL(/#\/queues\/e2e_next$/);
  await expect(page.getByTestId('queue-size')).toHaveText('30');
  const table = page.getByTestId('queue-jobs');
  await expect(table.getByTestId('job-row')).toHaveCount(25);
  await expect(table.getByTestId('job-row').first().locator('[data-col="class"]')).toHaveText('NextJob');
  await expect(table.getByTestId('job-row').first().locator('[data-col="args"]')).toHaveText('{"duration_ms":5}');
  await expect(page.getByTestId('pager-status')).toHaveText('Page 1 of 2 · 30 jobs');
  const firstPage = await table.getByTestId('job-row').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job')));
  await screenshot(page, testInfo, 'queue');

  await page.getByTestId('pager-next').click();
  await expect(page.getByTestId('pager-status')).toHaveText('Page 2 of 2 · 30 jobs');
  await expect(table.getByTestId('job-row')).toHaveCount(5);
  const secondPage = await table.getByTestId('job-row').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job')));
  expect(new Set([...firstPage, ...secondPage]).size).toBe(30);
  // The order workers take them: ids ascending (pushed in one batch).
  expect([...firstPage, ...secondPage].map(Number)).toEqual([...firstPage, ...secondPage].map(Number).sort((a, b) => a - b));
});

// The a11y suite walks the menu's views; these pages are reached from the Queues page's tabs and rows.
test('the queue, Retries and Dead pages pass axe in light and dark', async ({ page }) => {
  test.setTimeout(240_000);
  await openSignedIn(page, s);
  for (const theme of ['light', 'dark'] as const) {
    await page.evaluate((t) => localStorage.setItem('jobscope.theme', t), theme);
    await page.reload();
    await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
    for (const [route, ready] of [['/queues/e2e_next', 'queue-jobs'], ['/retries', 'job-set'], ['/dead', 'job-set']] as const) {
      await page.evaluate((r) => (location.hash = r), route);
      await expect(page.getByTestId(ready).getByTestId('job-row').first()).toBeVisible();
      await expectAccessible(page, `${route} (${theme})`);
    }
  }
});

test('the embedded dashboard has Retries, Scheduled and Dead cards', async ({ page }) => {
  await openSignedIn(page, s);
  await expect(page.getByTestId('kpi-retry-value')).toHaveText('2');
  await expect(page.getByTestId('kpi-scheduled-value')).toHaveText('0');
  await expect(page.getByTestId('kpi-dead-value')).toHaveText('3');
});

test('the Busy page lists the job running now with its class and how long it has run; Pause holds it still', async ({ page }, testInfo) => {
  await openSignedIn(page, s, '/busy');
  const row = page.getByTestId('busy-table').getByTestId('busy-row');
  await expect(row).toHaveCount(1);
  await expect(row.locator('td').nth(2)).toHaveText('e2e_block');
  await expect(row.locator('td').nth(3)).toHaveText('SyntheticJob');
  await expect(row.locator('td').nth(4)).toHaveText('{"duration_ms":600000}');
  await expect(page.getByTestId('busy-summary')).toHaveText('1 job running · 1 process read');
  const runningFor = row.getByTestId('busy-running-for');
  await expect(runningFor).toHaveText(/^\d+ (s|m \d+ s)$/);
  // Refresh asks again: the job has run longer since.
  const first = await runningFor.textContent();
  await expect.poll(async () => {
    await page.getByTestId('busy-refresh').click();
    return runningFor.textContent();
  }, { timeout: 20_000 }).not.toBe(first);
  await screenshot(page, testInfo, 'busy');
  await page.getByTestId('busy-live-toggle').click();
  await expect(page.getByTestId('busy-state')).toContainText('Paused since');
  await expect(page.getByTestId('busy-refresh')).toBeDisabled();
  for (const theme of ['light', 'dark'] as const) {
    await page.evaluate((t) => localStorage.setItem('jobscope.theme', t), theme);
    await page.reload();
    await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
    await expect(row).toHaveCount(1);
    await expectAccessible(page, `/busy (${theme})`);
  }
});

test('a dead job retried from the Dead page leaves the dead set and waits in its queue', async ({ page }, testInfo) => {
  await openSignedIn(page, s, '/dead');
  await expect(rows(page)).toHaveCount(3);
  await expect(rows(page).first().locator('[data-col="error"]')).toContainText('Error: SyntheticJob failed on purpose');
  await screenshot(page, testInfo, 'dead');
  // A row of a set is its entry's key, `<score>-<id>` here (SQLite); the queue page lists the job by id.
  const key = (await rows(page).first().getAttribute('data-job'))!;
  const id = key.slice(key.indexOf('-') + 1);
  await rows(page).first().getByTestId('select-job').check();
  await page.getByTestId('retry-selected').click();
  await expect(page.getByTestId('job-set-message')).toHaveText('Retried 1 job: back in their queues.');
  await expect(rows(page)).toHaveCount(2);
  await expect(page.locator(`[data-testid="job-row"][data-job="${key}"]`)).toHaveCount(0);
  expect((await dead()).map((j) => j.key)).not.toContain(key);

  // It waits in its queue behind the busy worker: its queue page lists it.
  await page.locator('[data-testid="job-row"]').first().locator('[data-col="queue"] a').click();
  await expect(page).toHaveURL(/#\/queues\/e2e_dead$/);
  await expect(page.getByTestId('queue-jobs').locator(`[data-testid="job-row"][data-job="${id}"]`)).toBeVisible();
});

test('a retry is deleted from the Retries page; the rest are retried now with select-all', async ({ page }, testInfo) => {
  await openSignedIn(page, s, '/dead');
  await page.getByTestId('jobs-nav').getByRole('link', { name: 'Retries' }).click();
  await expect(page).toHaveURL(/#\/retries$/);
  await expect(rows(page)).toHaveCount(2);
  await expect(rows(page).first().locator('[data-col="retries"]')).toHaveText('0'); // Sidekiq's count after the first failure
  await expect(rows(page).first().locator('[data-col="next_retry"]')).not.toHaveText('—');
  await screenshot(page, testInfo, 'retries');
  const [doomed, kept] = await rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job')!));

  await page.locator(`[data-testid="job-row"][data-job="${doomed}"]`).getByTestId('select-job').check();
  await page.getByTestId('delete-selected').click();
  await expect(page.getByTestId('confirm-dialog')).toContainText('Delete 1 job from the retry set?');
  await page.getByTestId('confirm-ok').click();
  await expect(page.getByTestId('job-set-message')).toHaveText('Deleted 1 job.');
  await expect(rows(page)).toHaveCount(1);
  expect((await retries()).map((j) => j.key)).toEqual([kept]);

  await page.getByTestId('select-all').check();
  await page.getByTestId('retry-selected').click();
  await expect(page.getByTestId('job-set-message')).toHaveText('Retried 1 job now.');
  await expect(page.getByTestId('job-set')).toContainText('No job is waiting for a retry.');
  await expect(rows(page)).toHaveCount(0);
  expect(await retries()).toEqual([]);
  expect(await backlog('e2e_retry')).toBe(1); // waiting behind the busy worker, not deleted
});

test('on a GitLab connection the pages say they are not available and offer no action', async ({ page }) => {
  const c = await http(`${s.url}/api/app/connections`, { json: { name: 'Remote GitLab', base_url: 'http://127.0.0.1:9/', private_token: 'remote-token-123' }, token: s.adminToken });
  expect(c.status).toBe(201);
  await openSignedIn(page, s, '/dead');
  await expect(rows(page).first()).toBeVisible();
  await page.getByTestId('connection-picker').selectOption({ label: 'Remote GitLab' });
  for (const route of ['/dead', '/retries', '/queues/e2e_next']) {
    await page.evaluate((r) => (location.hash = r), route);
    await expect(page.getByTestId('jobs-unavailable')).toContainText('not available for “Remote GitLab”');
    await expect(page.getByTestId('retry-selected')).toHaveCount(0);
    await expect(page.getByTestId('job-row')).toHaveCount(0);
  }
  await page.getByTestId('connection-picker').selectOption({ label: 'This Jobscope' });
  await expect(page.getByTestId('jobs-unavailable')).toHaveCount(0);
  await expect(page.getByTestId('queue-size')).toHaveText('30');
});

test('on a sidekiq connection the pages list its queue, retries and dead jobs read-only', async ({ page }) => {
  const redis = await startRedis();
  try {
    await sidekiqRuby(
      redis.url,
      `3.times { |i| Sidekiq::Client.push("class" => "MailerJob", "queue" => "emails", "args" => ["user-#{i}@example.com"]) }
       Sidekiq.redis { |c| c.zadd("retry", Time.now.to_f + 3600, Sidekiq.dump_json("class" => "SyncJob", "queue" => "sync", "args" => [7], "jid" => "r" * 24, "error_class" => "Net::ReadTimeout", "error_message" => "read timed out", "failed_at" => Time.now.to_f - 60, "retry_count" => 2)) }
       Sidekiq.redis { |c| c.zadd("dead", Time.now.to_f, Sidekiq.dump_json("class" => "ExportJob", "queue" => "exports", "args" => [42], "jid" => "d" * 24, "error_class" => "Timeout::Error", "error_message" => "export took too long", "failed_at" => Time.now.to_f - 5, "retry_count" => 25)) }`,
    );
    const c = await http(`${s.url}/api/app/connections`, { json: { name: 'Shop Sidekiq', kind: 'sidekiq', redis_url: redis.url }, token: s.adminToken });
    expect(c.status).toBe(201);
    await openSignedIn(page, s, '/retries');
    await page.getByTestId('connection-picker').selectOption({ label: 'Shop Sidekiq' });

    await expect(page.locator('[data-testid="job-row"][data-job="rrrrrrrrrrrrrrrrrrrrrrrr"]')).toBeVisible();
    await expect(rows(page).first().locator('[data-col="error"]')).toHaveText('Net::ReadTimeout: read timed out');
    await expect(rows(page).first().locator('[data-col="retries"]')).toHaveText('2');
    await expect(page.getByTestId('read-only-note')).toContainText('Read-only');
    for (const id of ['select-job', 'select-all', 'retry-selected', 'delete-selected', 'retry-all', 'delete-all']) await expect(page.getByTestId(id)).toHaveCount(0);

    await page.getByTestId('jobs-nav').getByRole('link', { name: 'Dead' }).click();
    await expect(page.locator('[data-testid="job-row"][data-job="dddddddddddddddddddddddd"]')).toBeVisible();
    await expect(rows(page).first().locator('[data-col="error"]')).toHaveText('Timeout::Error: export took too long');
    await expect(page.getByTestId('retry-selected')).toHaveCount(0);

    await page.getByTestId('jobs-nav').getByRole('link', { name: 'Queues' }).click();
    await page.getByTestId('queue-list').getByRole('link', { name: 'emails' }).click();
    await expect(page.getByTestId('queue-size')).toHaveText('3');
    await expect(page.getByTestId('queue-jobs').getByTestId('job-row')).toHaveCount(3);
    await expect(page.getByTestId('queue-jobs').getByTestId('job-row').first().locator('[data-col="class"]')).toHaveText('MailerJob');
    await expect(page.getByTestId('queue-page-delete')).toHaveCount(0);
  } finally {
    await redis.stop();
  }
});

test('on a sidekiq connection whose changes are allowed (asked first), a dead job is retried from its row and Sidekiq finds it queued', async ({ page }) => {
  const redis = await startRedis();
  try {
    await sidekiqRuby(
      redis.url,
      `Sidekiq.redis do |c|
         %w[e f].each_with_index { |l, i| c.zadd("dead", Time.now.to_f - i, Sidekiq.dump_json("class" => "ExportJob", "queue" => "exports", "args" => [i], "jid" => l * 24, "error_class" => "Timeout::Error", "error_message" => "too long", "retry_count" => 25)) }
       end
       Sidekiq::Client.push("class" => "ReportJob", "queue" => "reports", "args" => [9], "jid" => "g" * 24, "at" => Time.now.to_f + 3600)`,
    );
    const c = await http(`${s.url}/api/app/connections`, { json: { name: 'Ops Sidekiq', kind: 'sidekiq', redis_url: redis.url }, token: s.adminToken });
    expect(c.status).toBe(201);
    await openSignedIn(page, s, '/connections');
    const row = page.locator('[data-testid="connection-row"][data-connection="Ops Sidekiq"]');
    await expect(row.getByTestId('changes-read-only')).toBeVisible();
    await row.getByTestId('connection-allow-changes').click();
    await expect(page.getByTestId('confirm-dialog')).toContainText('Let Jobscope change Ops Sidekiq');
    await page.getByTestId('confirm-ok').click();
    await expect(row.getByTestId('changes-allowed')).toBeVisible();
    expect(((await http(`${s.url}/api/app/connections`, { token: s.adminToken })).body as { name: string; allow_changes: boolean }[]).find((x) => x.name === 'Ops Sidekiq')!.allow_changes).toBe(true);

    await page.evaluate(() => (location.hash = '/dead'));
    await page.getByTestId('connection-picker').selectOption({ label: 'Ops Sidekiq' });
    const retried = page.locator(`[data-testid="job-row"][data-job="${'e'.repeat(24)}"]`);
    await expect(retried).toBeVisible();
    await expect(page.getByTestId('read-only-note')).toHaveCount(0);
    await retried.getByTestId('job-retry').click();
    await expect(page.getByTestId('confirm-dialog')).toContainText('back into its queue now');
    await expectAccessible(page, 'the confirm dialog of a job action');
    await page.getByTestId('confirm-ok').click();
    await expect(retried).toHaveCount(0);
    await expect(page.locator(`[data-testid="job-row"][data-job="${'f'.repeat(24)}"]`)).toBeVisible();
    await expectAccessible(page, 'a dead set with actions');

    const seen = JSON.parse(
      await sidekiqRuby(redis.url, `require "json"; puts JSON.generate(queued: Sidekiq::Queue.new("exports").find_job("${'e'.repeat(24)}")&.item, dead: Sidekiq::DeadSet.new.map(&:jid))`),
    ) as { queued: { retry_count: number } | null; dead: string[] };
    expect(seen.queued?.retry_count).toBe(24);
    expect(seen.dead).toEqual(['f'.repeat(24)]);

    // The scheduled set, beside Retries and Dead: a job killed from its row is dead for Sidekiq.
    await page.getByTestId('jobs-nav').getByRole('link', { name: 'Scheduled' }).click();
    const scheduled = page.locator(`[data-testid="job-row"][data-job="${'g'.repeat(24)}"]`);
    await expect(scheduled.locator('[data-col="class"]')).toHaveText('ReportJob');
    await expect(scheduled.locator('[data-col="runs_at"]')).not.toHaveText('—');
    await scheduled.getByTestId('job-kill').click();
    await page.getByTestId('confirm-ok').click();
    await expect(page.getByTestId('job-set')).toContainText('No job is scheduled.');
    expect(await sidekiqRuby(redis.url, `puts Sidekiq::DeadSet.new.map(&:jid).sort.join(",")`)).toBe(`${'f'.repeat(24)},${'g'.repeat(24)}\n`);
  } finally {
    await redis.stop();
  }
});
