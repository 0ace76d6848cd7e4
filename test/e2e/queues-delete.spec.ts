// Deleting a queue from the dashboard's queues table: a confirm first (dismissing it keeps the
// queue), then the queue and its waiting jobs are gone; a built-in queue's ✕ is marked refused and
// says the server's reason without asking or sending anything. From a queue's own page, an empty synthetic queue is deleted the same way.
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { enqueue, openSignedIn, startUiServer } from './support.ts';

let s: TestServer;
test.beforeAll(async () => {
  s = await startUiServer({ jobConcurrency: 1 });
});
test.afterAll(async () => {
  await s?.close();
});

const queueNames = async () => ((await http(`${s.url}/api/v3/sim/jobs/queues`, { token: s.adminToken })).body as { name: string }[]).map((q) => q.name);

test('a queue is deleted from the queues table after a confirm', async ({ page }) => {
  await enqueue(s, 'e2e_doomed', 5, 600_000);
  await enqueue(s, 'e2e_kept', 2, 600_000);
  await openSignedIn(page, s);
  const row = (name: string) => page.locator(`[data-testid="queue-row"][data-queue="${name}"]`);
  await expect(row('e2e_doomed')).toBeVisible();

  const asked: string[] = [];
  page.once('dialog', (d) => void (asked.push(d.message()), d.dismiss()));
  await row('e2e_kept').getByTestId('queue-delete').click();
  await expect.poll(() => asked.length).toBe(1);
  expect(asked[0]).toContain('Delete queue e2e_kept?');
  expect(await queueNames()).toContain('e2e_kept');

  page.once('dialog', (d) => void d.accept());
  await row('e2e_doomed').getByTestId('queue-delete').click();
  await expect(page.getByTestId('queue-delete-message')).toContainText('Deleted queue e2e_doomed');
  await expect(row('e2e_doomed')).toHaveCount(0);
  expect(await queueNames()).not.toContain('e2e_doomed');
  await expect(row('e2e_kept')).toBeVisible();

  // A built-in queue's ✕ follows the server's view: marked refused, and a click asks nothing, sends
  // nothing and says the server's reason.
  const builtin = row('stuck_builds').getByTestId('queue-delete');
  await expect(builtin).toHaveAttribute('data-deletable', 'false');
  await expect(builtin).toHaveAttribute('aria-disabled', 'true');
  const deletes: string[] = [];
  page.on('request', (r) => void (r.method() === 'DELETE' && deletes.push(r.url())));
  page.on('dialog', (d) => void (asked.push(d.message()), d.dismiss()));
  await builtin.click({ force: true }); // aria-disabled: Playwright would wait for it to be enabled
  await expect(page.getByTestId('queue-delete-message')).toContainText('built-in');
  expect(asked).toHaveLength(1);
  expect(deletes).toEqual([]);
  await expect(row('stuck_builds')).toBeVisible();
});

test('an empty synthetic queue is deleted from its queue page; a built-in one’s Delete is refused with the server’s reason', async ({ page }) => {
  // Its own server: the one above has its only worker busy for minutes.
  const own = await startUiServer();
  try {
    await enqueue(own, 'e2e_emptied', 1, 0);
    await expect.poll(async () => (await http(`${own.url}/api/v3/sim/jobs/queues/e2e_emptied`, { token: own.adminToken })).body.backlog).toBe(0);
    await openSignedIn(page, own, '/queues/e2e_emptied');
    await expect(page.getByTestId('queue-size')).toHaveText('0');
    const asked: string[] = [];
    page.once('dialog', (d) => void (asked.push(d.message()), d.accept()));
    await page.getByTestId('queue-page-delete').click();
    await expect(page).toHaveURL(/#\/queues$/);
    expect(asked[0]).toBe('Delete the empty queue e2e_emptied?');
    await expect(page.getByTestId('queue-list')).toContainText('stuck_builds');
    await expect(page.getByTestId('queue-list').locator('[data-queue="e2e_emptied"]')).toHaveCount(0);
    expect((await http(`${own.url}/api/v3/sim/jobs/queues/e2e_emptied`, { token: own.adminToken })).status).toBe(404);

    await page.getByTestId('queue-list').getByRole('link', { name: 'stuck_builds' }).click();
    await expect(page.getByTestId('queue-not-deletable')).toHaveText('queue "stuck_builds" is a built-in queue of Jobscope\'s own jobs and cannot be deleted');
    await expect(page.getByTestId('queue-page-delete')).toHaveAttribute('aria-disabled', 'true');
  } finally {
    await own.close();
  }
});
