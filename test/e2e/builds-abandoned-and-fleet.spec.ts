// A build whose runner died mid-build says so ("no update for N min") in the Builds list and on its
// page, and is failed or canceled from there after a confirmation; the page names its project. A
// fleet started from the Simulator runs its own builds, not another project's older ones, and its
// summary says which run it is and what became of its builds. One server for the file. The
// browser's clock is moved ahead instead of waiting minutes: when the build was last heard of is the
// server's (checked in test/api/abandoned-builds.test.ts), how long ago is the page's.
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';
import { runningBuild } from '../api/lib.ts';
import { expectAccessible, openSignedIn, startUiServer } from './support.ts';

test.describe.configure({ mode: 'serial' });

let s: TestServer;
test.beforeAll(async () => {
  s = await startUiServer();
});
test.afterAll(async () => {
  await s?.close();
});

const MIN = 60_000;

test('an abandoned build shows "no update for N min"; fail it from its page, cancel another from the list', async ({ page }) => {
  const abandoned = (await runningBuild(s, { name: 'deploy' }, 'payments')).build;
  const other = (await runningBuild(s, { name: 'lint' }, 'payments-2')).build;
  await page.clock.install({ time: Date.now() + 5 * MIN + 10_000 });

  await openSignedIn(page, s, `/builds/${abandoned.id}`);
  const view = page.getByTestId('view-build');
  await expect(view.getByTestId('build-silence')).toHaveText('no update for 5 min');
  await expect(view.getByTestId('build-project')).toHaveText('payments');
  await expect(view.getByTestId('build-project')).toHaveAttribute('href', `#/builds?project=${abandoned.project_id}`);
  // The badge and the Fail button pass axe in both themes.
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await expectAccessible(page, `a silent build's page (${colorScheme})`);
  }

  // Dismissing the question changes nothing; accepting it fails the build.
  page.once('dialog', (d) => void d.dismiss());
  await view.getByTestId('build-fail').click();
  await expect(view.getByTestId('build-status')).toHaveText('running');
  page.once('dialog', (d) => {
    expect(d.message()).toContain(`Mark build #${abandoned.id} as failed?`);
    void d.accept();
  });
  await view.getByTestId('build-fail').click();
  await expect(view.getByTestId('build-status')).toHaveText('failed');
  await expect(view.getByTestId('build-silence')).toHaveCount(0);

  await page.goto(`${s.url}/#/builds`);
  const row = page.locator(`[data-testid="build-row"][data-build="${other.id}"]`);
  await expect(row.getByTestId('build-silence')).toHaveText('no update for 5 min');
  page.once('dialog', (d) => void d.accept());
  await row.getByTestId('build-cancel').click();
  await expect(row.getByTestId('build-status')).toHaveText('canceled');
  await expect(row.getByTestId('build-silence')).toHaveCount(0);
  await expect(page.locator(`[data-testid="build-row"][data-build="${abandoned.id}"]`).getByTestId('build-status')).toHaveText('failed');
});

test('a fleet runs its own builds, leaves another project’s older one pending, and its summary counts its own', async ({ page }) => {
  const other = await createProject(s, 'billing');
  const older = (await createBuild(s, other.id, { name: 'older' })) as { id: number };
  await openSignedIn(page, s, '/simulator');
  await page.getByTestId('f-runners').fill('2');
  await page.getByTestId('f-builds').fill('3');
  await page.getByTestId('f-trace-kb').fill('2');
  await page.getByTestId('f-artifact-kb').fill('0');
  await expect(page.getByTestId('f-shared')).not.toBeChecked();
  await page.getByTestId('fleet-start').click();

  await expect(page.getByTestId('fleet-state')).toHaveText('finished', { timeout: 45_000 });
  await expect(page.getByTestId('sim-own-builds')).toHaveText('3 / 3 done');
  await expect(page.getByTestId('sim-others-taken')).toHaveCount(0);
  await expect(page.getByTestId('sim-run')).toContainText('project simulator (project runners) · 2 runners · seed 1');
  await expect(page.getByTestId('fleet-message')).toContainText('all 3 of its builds done');
  await expectAccessible(page, 'the Simulator with a finished fleet');
  const left = await http(`${s.url}/api/v3/sim/builds/${older.id}`, { token: s.adminToken });
  expect((left.body as { status: string }).status).toBe('pending');
});
