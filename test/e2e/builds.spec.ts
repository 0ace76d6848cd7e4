// The builds view: a running build's trace tailed live while a runner appends to it (real runner API
// requests from the test), ANSI colours rendered as styled spans, markup in the trace shown as text
// and never run; artifacts listed and downloaded with the token; cancel.
import fs from 'node:fs';
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { makeZip, patchTrace, runnerJson, runningBuild, uploadArtifacts } from '../api/lib.ts';
import { openSignedIn, screenshot, startUiServer } from './support.ts';

let s: TestServer;
test.beforeAll(async () => {
  s = await startUiServer();
});
test.afterAll(async () => {
  await s?.close();
});

const ESC = '\u001b';
const PART1 = `${ESC}[32;1mRunning with gitlab-ci-multi-runner 1.11.5${ESC}[0;m\n$ echo "<script>window.__pwned = 1</script>"\n<script>window.__pwned = 1</script>\n`;
const PART2 = `<img src=x onerror="window.__pwned = 2">\n${ESC}[31;1mERROR: Job failed: exit code 1${ESC}[0;m\nünïcödé ✓\n`;

test('tails a running build live, colours styled, markup inert; artifacts listed and downloaded', async ({ page }, testInfo) => {
  const { build, runner } = await runningBuild(s, { name: 'rspec', commands: 'bundle exec rspec' }, 'webapp');
  const bytes1 = Buffer.from(PART1);
  expect((await patchTrace(s, build.id, { token: build.token, range: `0-${bytes1.length}`, body: bytes1 })).status).toBe(202);

  await openSignedIn(page, s, '/builds');
  const row = page.locator(`[data-testid="build-row"][data-build="${build.id}"]`);
  await expect(row.getByTestId('build-status')).toHaveText('running');
  await screenshot(page, testInfo, 'builds');
  await row.getByTestId('build-link').click();

  const trace = page.getByTestId('trace');
  await expect(trace).toContainText('Running with gitlab-ci-multi-runner 1.11.5');
  await expect(page.getByTestId('trace-live')).toBeVisible();

  // The runner sends the next part while the page is open: it appears without a reload.
  const bytes2 = Buffer.from(PART2);
  const r = await patchTrace(s, build.id, { token: build.token, range: `${bytes1.length}-${bytes1.length + bytes2.length}`, body: bytes2 });
  expect(r.status).toBe(202);
  await expect(trace).toContainText('ERROR: Job failed: exit code 1');
  await expect(trace).toContainText('ünïcödé ✓');
  await expect(page.getByTestId('trace-bytes')).toHaveText(`${bytes1.length + bytes2.length} bytes`);

  // Colours: ansi_up's classed spans, styled by the theme.
  const green = trace.locator('span.ansi-green-fg', { hasText: 'Running with' });
  await expect(green).toHaveCount(1);
  expect(await green.evaluate((e) => getComputedStyle(e).color)).toBe('rgb(74, 222, 128)');
  await expect(trace.locator('span.ansi-red-fg', { hasText: 'ERROR: Job failed' })).toHaveCount(1);
  // Markup in the trace is text: shown literally, no element created, nothing ran.
  await expect(trace).toContainText('<script>window.__pwned = 1</script>');
  await expect(trace).toContainText('<img src=x onerror="window.__pwned = 2">');
  await expect(trace.locator('script, img')).toHaveCount(0);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

  // Artifacts: the runner uploads a zip and finishes; the page lists its files and downloads it.
  const zip = await makeZip({ 'coverage/index.html': '<h1>87%</h1>', 'rspec.xml': '<testsuite/>' });
  expect((await uploadArtifacts(s, build.id, build.token, zip, { filename: 'artifacts.zip' })).status).toBe(201);
  expect((await runnerJson(`${s.url}/ci/api/v1/builds/${build.id}`, 'PUT', { token: runner.token, state: 'failed' })).status).toBe(200);
  await expect(page.locator('[data-testid="view-build"] [data-testid="build-status"]')).toHaveText('failed');
  await expect(page.getByTestId('trace-live')).toHaveCount(0);
  await expect(page.getByTestId('artifact-files')).toContainText('coverage/index.html');
  await expect(page.getByTestId('artifact-files')).toContainText('rspec.xml');
  await screenshot(page, testInfo, 'build-trace');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('artifacts-download').click()]);
  const saved = await download.path();
  expect(fs.readFileSync(saved!).equals(zip)).toBe(true);
});

test('cancel a running build from its page', async ({ page }) => {
  const { build, runner } = await runningBuild(s, { name: 'deploy' }, 'infra');
  const other = (await runningBuild(s, { name: 'lint' }, 'infra-2')).build;
  await openSignedIn(page, s, `/builds/${build.id}`);
  page.once('dialog', (d) => void d.accept());
  await page.getByTestId('build-cancel').click();
  await expect(page.locator('[data-testid="view-build"] [data-testid="build-status"]')).toHaveText('canceled');
  // The list's status filter finds it among the canceled builds, not among the running ones.
  await page.goto(`${s.url}/#/builds`);
  await page.getByTestId('filter-status').selectOption('canceled');
  await expect(page.locator(`[data-testid="build-row"][data-build="${build.id}"]`)).toBeVisible();
  await page.getByTestId('filter-status').selectOption('running');
  await expect(page.locator(`[data-testid="build-row"][data-build="${other.id}"]`)).toBeVisible();
  await expect(page.locator(`[data-testid="build-row"][data-build="${build.id}"]`)).toHaveCount(0);
  // The runner learns it from Build-Status on its next trace part.
  const r = await patchTrace(s, build.id, { token: build.token, range: '0-3', body: 'abc' });
  expect(r.headers['build-status']).toBe('canceled');
  void runner;
});

test('an archive listed after the build finished appears on its open page without a reload', async ({ page }) => {
  // The file list is written by the archive_listing job, which may run after the build's last
  // update. The server's answers are held back (files removed) until the page has shown the
  // finished build without them, which is the order that race produces.
  const { build, runner } = await runningBuild(s, { name: 'package' }, 'late-listing');
  const zip = await makeZip({ 'dist/app.tar': 'x'.repeat(100) });
  expect((await uploadArtifacts(s, build.id, build.token, zip, { filename: 'dist.zip' })).status).toBe(201);
  expect((await runnerJson(`${s.url}/ci/api/v1/builds/${build.id}`, 'PUT', { token: runner.token, state: 'success' })).status).toBe(200);
  let holding = true;
  let heldAnswers = 0;
  await page.route(`**/api/v3/sim/builds/${build.id}`, async (route) => {
    const res = await route.fetch();
    const body = (await res.json()) as { status: string; artifacts: { files?: unknown } | null };
    if (holding && body.artifacts) {
      delete body.artifacts.files;
      if (body.status === 'success') heldAnswers++;
    }
    await route.fulfill({ response: res, json: body });
  });
  await openSignedIn(page, s, `/builds/${build.id}`);
  await expect(page.locator('[data-testid="view-build"] [data-testid="build-status"]')).toHaveText('success');
  await expect(page.getByTestId('artifacts')).toContainText('The file listing appears once the server has read the archive.');
  await expect.poll(() => heldAnswers).toBeGreaterThan(0);
  holding = false;
  await expect(page.getByTestId('artifact-files')).toContainText('dist/app.tar');
});
