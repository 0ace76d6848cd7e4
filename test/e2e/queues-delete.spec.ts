// Deleting a queue from the dashboard's queues table: a confirm first (dismissing it keeps the
// queue), then the queue and its waiting jobs are gone; a built-in queue is refused with the
// server's message.
import { test, expect } from '@playwright/test';
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

  page.once('dialog', (d) => void d.accept());
  await row('stuck_builds').getByTestId('queue-delete').click();
  await expect(page.getByTestId('queue-delete-message')).toContainText('built-in');
  await expect(row('stuck_builds')).toBeVisible();
});
