// The Simulator and Runner console views against a real embedded server: a fleet started from the
// form finishes its builds (seen in the fleet status and the Builds view), its journal filters and
// exports as HAR and curl; a running build's trace grows on screen while a slow virtual runner
// streams it; the console provokes a 416 and shows its Range header, and an artifact uploaded
// through the console downloads byte for byte.
import fs from 'node:fs';
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';
import { makeZip } from '../api/lib.ts';
import { curves, openSignedIn, screenshot, startUiServer } from './support.ts';

let s: TestServer;
test.beforeEach(async () => {
  s = await startUiServer();
});
test.afterEach(async () => {
  await s?.close();
});

type Build = { id: number; status: string };
async function builds(): Promise<Build[]> {
  const r = await http(`${s.url}/api/v3/sim/builds?limit=100`, { token: s.adminToken });
  expect(r.status).toBe(200);
  return r.body as Build[];
}

test('a fleet started from the form finishes its builds despite a fault; journal filtered, exported as HAR, copied as curl; scenario round trip', async ({ page }, testInfo) => {
  await openSignedIn(page, s, '/simulator');
  await expect(page.getByTestId('fleet-state')).toHaveText('idle');
  await page.getByTestId('f-runners').fill('3');
  await page.getByTestId('f-builds').fill('6');
  await page.getByTestId('f-trace-kb').fill('6');
  await page.getByTestId('f-part-kb').fill('2');
  await page.getByTestId('f-artifact-kb').fill('8');
  await page.getByTestId('f-seed').fill('42');
  // One fault on: parts sent at a Content-Range past the trace's end, which the server must refuse
  // with 416 and a Range the runner follows, so every build still ends byte-exact.
  await page.getByTestId('fault-wrong_range').check();
  await page.getByTestId('f-fault-rate').fill('0.3');
  await page.getByTestId('fleet-start').click();

  await expect(page.getByTestId('sim-runner')).toHaveCount(3);
  await expect(page.getByTestId('fleet-state')).toHaveText('finished', { timeout: 45_000 });
  await expect(page.getByTestId('sim-builds-done')).toHaveText('6 / 6');
  await expect(page.getByTestId('sim-success')).toHaveText('6 / 0');
  // Traces are checked at each phase of a build (so at least once each), artifacts once each.
  await expect(page.getByTestId('sim-verified')).toHaveText(/^([6-9]|\d\d+) \/ 6$/);
  await expect(page.getByTestId('protocol-broken')).toHaveCount(0);
  const count = async (id: string) => Number((await page.getByTestId(id).textContent())?.replace(/,/g, ''));
  expect(await count('sim-faults')).toBeGreaterThan(0);
  expect(await count('sim-416')).toBeGreaterThan(0);
  await expect(page.getByTestId('fault-answers')).toContainText(/wrong_range\s*416 ×\d+/);
  const stored = await builds();
  expect(stored).toHaveLength(6);
  expect(stored.every((b) => b.status === 'success')).toBe(true);
  await expect.poll(() => curves(page, 'chart-builds-per-min', 'area').count()).toBe(1);

  // The journal: the injected faults, each refused with 416.
  const rows = page.getByTestId('journal-row');
  await page.getByTestId('jf-fault').selectOption('wrong_range');
  await expect(rows.first()).toBeVisible();
  await expect(page.locator('[data-testid="journal-row"]:not([data-status="416"])')).toHaveCount(0);
  await expect(rows.first()).toContainText('wrong_range');
  await page.getByTestId('jf-fault').selectOption('');

  // Filtered to accepted trace parts: only PATCHes of trace.txt answered 202.
  await page.getByTestId('jf-method').selectOption('PATCH');
  await page.getByTestId('jf-path').fill('trace.txt');
  await page.getByTestId('jf-status').fill('202');
  await expect(rows.first()).toBeVisible();
  await expect(page.locator('[data-testid="journal-row"]:not([data-method="PATCH"])')).toHaveCount(0);
  await expect(page.locator('[data-testid="journal-row"]:not([data-status="202"])')).toHaveCount(0);
  const shown = await rows.count();
  expect(shown).toBeGreaterThanOrEqual(6 * 3); // 6 KiB in parts of at most 2 KiB, per build

  await rows.first().click();
  await expect(page.getByTestId('journal-detail')).toContainText('Content-Range');
  await page.getByTestId('journal-curl').click();
  const curl = page.getByTestId('curl-text');
  await expect(curl).toHaveValue(/^curl -sS -i -X PATCH '?http:\/\/127\.0\.0\.1:\d+\/ci\/api\/v1\/builds\/\d+\/trace\.txt/);
  await expect(curl).toHaveValue(/Content-Range: \d+-\d+/);
  await expect(page.getByTestId('curl-status')).toBeVisible();
  // Tokens are hidden unless asked for: in the detail, and in the command.
  await expect(curl).toHaveValue(/'Build-Token: \[REDACTED\]'/);
  await expect(page.locator('[data-testid="journal-detail"] [data-header="build-token"] td')).toHaveText('[REDACTED]');
  await page.getByTestId('journal-secrets').check();
  await expect(page.locator('[data-testid="journal-detail"] [data-header="build-token"] td')).not.toHaveText('[REDACTED]');
  await page.getByTestId('journal-curl').click();
  await expect(curl).not.toHaveValue(/REDACTED/);
  await page.getByTestId('journal-secrets').uncheck();
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, testInfo, 'simulator');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('journal-har').click()]);
  const har = JSON.parse(fs.readFileSync((await download.path())!, 'utf8')) as { log: { entries: { request: { method: string; url: string }; response: { status: number } }[] } };
  expect(har.log.entries.length).toBeGreaterThanOrEqual(shown);
  for (const e of har.log.entries) {
    expect(e.request.method).toBe('PATCH');
    expect(e.request.url).toContain('/trace.txt');
    expect(e.response.status).toBe(202);
  }

  // The Builds view lists the fleet's builds as finished.
  await page.getByTestId('nav-builds').click();
  await expect(page.getByTestId('build-row')).toHaveCount(6);
  await expect(page.locator('[data-testid="build-row"] [data-testid="build-status"]', { hasText: 'success' })).toHaveCount(6);

  // The same fleet as a scenario: exported, edited, imported (a broken file is refused with the
  // contract's reasons) and started again.
  await page.getByTestId('nav-simulator').click();
  await page.getByTestId('mode-scenario').click();
  const [exported] = await Promise.all([page.waitForEvent('download'), page.getByTestId('scenario-export').click()]);
  const scenario = JSON.parse(fs.readFileSync((await exported.path())!, 'utf8'));
  expect(scenario).toMatchObject({ version: 1, seed: 42, builds: 6, runners: [{ count: 3 }], faults: { wrong_range: 0.3 } });
  expect(scenario.defaults).toMatchObject({ trace_kb: 6, part_kb: 2, artifact_kb: 8, fail_rate: 0 });
  const file = (name: string, value: unknown) => ({ name, mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(value)) });
  await page.getByTestId('scenario-file').setInputFiles(file('bad.json', { runners: [], seed: -1 }));
  await expect(page.getByTestId('fleet-note')).toContainText('bad.json is not a valid scenario');
  await page.getByTestId('scenario-file').setInputFiles(file('small.json', { ...scenario, builds: 2, faults: undefined, runners: [{ ...scenario.runners[0], count: 1 }] }));
  await expect(page.getByTestId('scenario-json')).toContainText('"builds": 2');
  await page.getByTestId('fleet-start').click();
  await expect(page.getByTestId('sim-runner')).toHaveCount(1);
  await expect(page.getByTestId('fleet-state')).toHaveText('finished', { timeout: 30_000 });
  await expect(page.getByTestId('sim-builds-done')).toHaveText('2 / 2');
  expect(await builds()).toHaveLength(8);
});

test('a running build opened from the fleet tails its trace live while the virtual runner streams it; Stop ends the fleet', async ({ page }) => {
  await openSignedIn(page, s, '/simulator');
  await page.getByTestId('f-runners').fill('1');
  await page.getByTestId('f-builds').fill('2');
  await page.getByTestId('f-trace-kb').fill('24');
  await page.getByTestId('f-part-kb').fill('1');
  await page.getByTestId('f-rate').fill('3'); // KiB/s: about 8 s of streaming
  await page.getByTestId('f-artifact-kb').fill('4');
  await page.getByTestId('fleet-start').click();

  await page.getByTestId('sim-runner-build').click();
  await expect(page.getByTestId('view-build')).toBeVisible();
  await expect(page.getByTestId('trace-live')).toBeVisible();
  const size = async () => Number(/(\d+)/.exec((await page.getByTestId('trace-bytes').textContent()) ?? '')?.[1] ?? 0);
  await expect.poll(size).toBeGreaterThan(0);
  const first = await size();
  await expect.poll(size).toBeGreaterThan(first);
  await expect(page.locator('[data-testid="view-build"] [data-testid="build-status"]')).toHaveText('success', { timeout: 30_000 });
  // What the page shows is the whole stored trace.
  const id = Number(/#\/builds\/(\d+)/.exec(page.url())?.[1]);
  const r = await fetch(`${s.url}/api/v3/sim/builds/${id}/trace`, { headers: { 'PRIVATE-TOKEN': s.adminToken } });
  const stored = Buffer.from(await r.arrayBuffer());
  expect(stored.length).toBeGreaterThan(first);
  await expect(page.getByTestId('trace-bytes')).toHaveText(`${stored.length.toLocaleString('en-US')} bytes`);

  // The runner takes the second build; Stop ends the fleet with it unfinished.
  await page.getByTestId('nav-simulator').click();
  await expect(page.getByTestId('fleet-state')).toHaveText('running');
  await expect(page.getByTestId('fleet-start')).toBeDisabled();
  await expect(page.getByTestId('sim-runner-state')).toHaveText('running');
  await page.getByTestId('fleet-stop').click();
  await expect(page.getByTestId('fleet-state')).toHaveText('finished');
  await expect(page.getByTestId('sim-success')).toHaveText('1 / 1'); // the interrupted build is reported failed
  expect((await builds()).map((b) => b.status).sort()).toEqual(['failed', 'success']);
  await expect(page.getByTestId('sim-runner-state')).toHaveText('stopped');
  await expect(page.getByTestId('fleet-start')).toBeEnabled();
});

test('runner console: register, take a build, a 416 with its Range, upload, download the same bytes, delete', async ({ page }, testInfo) => {
  const project = await createProject(s, 'console');
  await createBuild(s, project.id, { name: 'by-hand' });

  await openSignedIn(page, s, '/runner-console');
  await expect(page.getByTestId('c-reg-token')).toHaveValue(s.registrationToken);
  const newest = page.getByTestId('exchange').first();

  // Before registering, the console refuses and says what to do.
  await page.getByTestId('c-request-build').click();
  await expect(newest.getByTestId('exchange-error')).toContainText('register first');

  await page.getByTestId('c-register').click();
  await expect(newest).toHaveAttribute('data-step', 'register');
  await expect(newest.getByTestId('exchange-status')).toHaveText(/^201/);
  await expect(page.getByTestId('cs-runner-token')).not.toContainText('register first');

  await page.getByTestId('c-request-build').click();
  await expect(newest).toHaveAttribute('data-step', 'request build');
  await expect(newest.getByTestId('exchange-status')).toHaveText(/^201/);
  const buildId = Number(await page.getByTestId('cs-build').textContent());
  expect(buildId).toBeGreaterThan(0);

  const body = '$ make test\nok\n';
  await page.getByTestId('c-trace-body').fill(body);
  await page.getByTestId('c-send-trace').click();
  await expect(newest.getByTestId('exchange-status')).toHaveText(/^202/);
  await expect(page.getByTestId('cs-trace-length')).toHaveText(`${body.length} bytes`);

  // A part that does not continue the trace: 416, and Range says where the server's trace ends.
  await page.getByTestId('c-range').fill('3-9');
  await page.getByTestId('c-send-trace').click();
  await expect(newest.getByTestId('exchange-status')).toHaveText(/^416/);
  await expect(newest.locator('[data-testid="exchange-request"] tr[data-header="content-range"] td')).toHaveText('3-9');
  await expect(newest.locator('[data-testid="response-headers"] tr[data-header="range"] td')).toHaveText(`0-${body.length}`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, testInfo, 'runner-console');

  const zip = await makeZip({ 'report/index.html': '<h1>ok</h1>', 'coverage.txt': 'x'.repeat(5000) });
  await page.getByTestId('c-file').setInputFiles({ name: 'artifacts.zip', mimeType: 'application/zip', buffer: zip });
  await page.getByTestId('c-upload').click();
  await expect(newest).toHaveAttribute('data-step', 'upload');
  await expect(newest.getByTestId('exchange-status')).toHaveText(/^201/);

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('c-download').click()]);
  expect(fs.readFileSync((await download.path())!).equals(zip)).toBe(true);
  await expect(newest.getByTestId('exchange-status')).toHaveText(/^200/);

  await page.getByTestId('c-state').selectOption('success');
  await page.getByTestId('c-update').click();
  await expect(newest).toHaveAttribute('data-step', 'update');
  await expect(newest.getByTestId('exchange-status')).toHaveText(/^200/);
  expect((await builds()).find((b) => b.id === buildId)?.status).toBe('success');

  await page.getByTestId('c-delete').click();
  await expect(newest).toHaveAttribute('data-step', 'delete artifacts');
  await expect(newest.getByTestId('exchange-status')).toHaveText(/^20\d/);
  const gone = await http(`${s.url}/api/v3/sim/builds/${buildId}/artifacts`, { token: s.adminToken });
  expect(gone.status).toBe(404);
});
