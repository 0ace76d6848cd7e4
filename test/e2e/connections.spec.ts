// A second real Jobscope server plays a remote GitLab: added, tested and charted through the UI.
import { test, expect } from './fixtures.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { compound, curves, enqueue, legendItem, openSignedIn, screenshot, startUiServer } from './support.ts';

let home: TestServer;
let remote: TestServer;
test.beforeAll(async () => {
  home = await startUiServer();
  remote = await startServer();
});
test.afterAll(async () => {
  await home?.close();
  await remote?.close();
});

test('a second Jobscope added as a remote GitLab connection is tested and charted', async ({ page }, testInfo) => {
  // Long jobs on the remote: 10 run, the rest wait, so its queue has a backlog while we look.
  await enqueue(remote, 'remote_only_queue', 25, 30_000);

  await openSignedIn(page, home, '/connections');
  await expect(page.getByTestId('view-connections')).toBeVisible();
  await expect(page.getByTestId('connection-row')).toHaveCount(1); // the embedded server

  const form = page.getByTestId('add-connection');
  await form.getByTestId('conn-name').fill('Remote B');
  await form.getByTestId('conn-url').fill(remote.url);
  await form.getByTestId('conn-token').fill('wrong-token');
  await form.getByTestId('conn-interval').fill('2');
  await form.getByTestId('conn-test').click();
  await expect(form.getByTestId('test-result')).toContainText('✗');
  await expect(form.getByTestId('test-result')).toContainText('401');

  await form.getByTestId('conn-token').fill(remote.adminToken);
  await form.getByTestId('conn-test').click();
  await expect(form.getByTestId('test-result')).toContainText('✓');
  await form.getByTestId('conn-add').click();

  const row = page.locator('[data-testid="connection-row"][data-connection="Remote B"]');
  await expect(row).toBeVisible();
  await expect(page.getByTestId('connections-table')).not.toContainText(remote.adminToken);
  await expect(row.getByTestId('connection-warning')).toHaveCount(0); // plain http, but to this machine

  // Plain http to another machine: warned in the form before sending, and on the saved row.
  await form.getByTestId('conn-url').fill('http://gitlab.example.com');
  await expect(form.getByTestId('conn-plain-http')).toContainText('gitlab.example.com');
  await form.getByTestId('conn-url').fill('');
  const plain = await http(`${home.url}/api/app/connections`, { json: { name: 'Plain', base_url: 'http://gitlab.example.com', private_token: 'x', enabled: false }, token: home.adminToken });
  expect(plain.status).toBe(201);
  const plainRow = page.locator('[data-testid="connection-row"][data-connection="Plain"]');
  await expect(plainRow.getByTestId('connection-warning')).toContainText('plain http');
  page.once('dialog', (d) => void d.accept());
  await plainRow.getByTestId('connection-remove').click();
  await expect(plainRow).toHaveCount(0);
  await row.getByTestId('connection-test').click();
  await expect(row.getByTestId('test-result')).toContainText('✓');
  await screenshot(page, testInfo, 'connections');

  await row.getByTestId('connection-show').click();
  await expect(page.getByTestId('view-dashboard')).toBeVisible();
  await expect(page.getByTestId('connection-picker')).toHaveValue(/.+/);
  await expect(legendItem(page, 'chart-backlog', 'remote_only_queue')).toBeVisible();
  await expect.poll(() => curves(page, 'chart-backlog').count()).toBeGreaterThanOrEqual(1);
  await expect(page.locator('[data-testid="queue-row"][data-queue="remote_only_queue"]')).toBeVisible();
  // The KPI cards now show the remote's numbers, not the home server's.
  const r = await compound(remote);
  await expect(page.getByTestId('kpi-enqueued-value')).toHaveText(r.jobs.enqueued.toLocaleString('en-US'));
  await expect(page.getByTestId('kpi-processes-value')).toHaveText(String(r.processes.length));
  expect((await compound(home)).queues.remote_only_queue).toBeUndefined();
});

test('a remote that stops answering: its failed samples are gaps in the lines, with the error shown', async ({ page }) => {
  const gone = await startServer();
  const port = new URL(gone.url).port;
  const r = await http(`${home.url}/api/app/connections`, { json: { name: 'Flaky', base_url: gone.url, private_token: gone.adminToken, interval_s: 2 }, token: home.adminToken });
  expect(r.status).toBe(201);
  await openSignedIn(page, home);
  await page.getByTestId('connection-picker').selectOption(r.body.id);
  const concurrency = curves(page, 'chart-workers').and(page.locator('[data-series="concurrency"]'));
  await expect(concurrency).toHaveAttribute('data-points', /^[1-9]\d*$/);

  await gone.close({ keepData: true }); // the remote goes away: samples fail
  await expect(page.getByTestId('last-error')).toBeVisible();
  await expect(page.getByTestId('gap-count')).toBeVisible();
  // Away long enough for the line to have a hole: a bucket of the chart (15 m in 600 points: 1.5 s)
  // with a good sample in it is drawn, so a remote back within a bucket or two left no break, and
  // the test failed when the restart was quick. Two whole buckets with none after the last good one
  // (the last bucket is still filling), as the server's history for the chart's query answers.
  await expect
    .poll(async () => {
      const to = Date.now();
      const h = await http(`${home.url}/api/app/connections/${encodeURIComponent(r.body.id)}/history?from=${to - 15 * 60_000}&to=${to}&points=600`, { token: home.adminToken });
      const c = (h.body as { totals: { concurrency: (number | null)[] } }).totals.concurrency;
      let lastGood = c.length - 1;
      while (lastGood >= 0 && c[lastGood] === null) lastGood--;
      return lastGood >= 0 && c.length - 1 - lastGood >= 3;
    })
    .toBe(true);
  const back = await startServer({ dataDir: gone.dataDir, port: Number(port) }); // and comes back
  try {
    await expect(page.getByTestId('last-error')).toHaveCount(0);
    // One line, broken where the samples failed: it starts again after the gap (two runs drawn).
    await expect.poll(async () => Number(await concurrency.getAttribute('data-segments'))).toBeGreaterThanOrEqual(2);
  } finally {
    await back.close();
  }
});
