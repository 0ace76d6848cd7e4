// Builds and projects from the UI alone: a project created in the Projects view
// with its runners token copyable, builds created from the "New build" form with variables, tags
// and artifacts, the server's validation errors shown beside the field, a runner (real runner API
// requests from the test) finishing one while the list updates without a reload, retry and cancel
// from a list row and from a build's page.
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import type { BuildView, ProjectView } from '../../contract/control.ts';
import { registerRunner, requestBuild } from '../helpers/fixtures.ts';
import { control, runnerJson } from '../api/lib.ts';
import { openSignedIn, screenshot, startUiServer } from './support.ts';

let s: TestServer;
test.beforeAll(async () => {
  s = await startUiServer();
});
test.afterAll(async () => {
  await s?.close();
});

const row = (page: Page, id: number) => page.locator(`[data-testid="build-row"][data-build="${id}"]`);

/** A marker on the window: still there at the end means the page was never reloaded. */
async function markPage(page: Page) {
  await page.evaluate(() => ((window as unknown as { __sameDocument?: number }).__sameDocument = 1));
}
async function expectSamePage(page: Page) {
  expect(await page.evaluate(() => (window as unknown as { __sameDocument?: number }).__sameDocument)).toBe(1);
}

test('create a project and builds from the UI; a runner finishes one live; retry and cancel', async ({ page, context }, testInfo) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.url });
  await openSignedIn(page, s, '/projects');

  // --- Projects: create, list, copy the runners token
  const projects = page.getByTestId('view-projects');
  await expect(projects.getByRole('heading', { name: 'Projects' })).toBeVisible();
  await projects.getByLabel('Project name').fill('webapp');
  await projects.getByRole('button', { name: 'Create project' }).click();
  const projectRow = projects.locator('[data-testid="project-row"]', { hasText: 'webapp' });
  await expect(projectRow).toHaveCount(1);
  const stored = ((await control(s, '/projects')).body as ProjectView[]).find((p) => p.name === 'webapp')!;
  expect(stored).toBeDefined();
  await expect(projectRow.getByTestId('runners-token')).toHaveText(stored.runners_token);
  await projectRow.getByRole('button', { name: 'Copy the runners token of webapp' }).click();
  await expect(projects.getByRole('status')).toContainText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(stored.runners_token);
  await screenshot(page, testInfo, 'projects');

  // --- New build: the form sends everything, three builds at once
  await page.getByRole('navigation').getByRole('link', { name: 'Builds' }).click();
  await markPage(page);
  const builds = page.getByTestId('view-builds');
  await builds.getByRole('button', { name: 'New build' }).click();
  const form = page.getByTestId('new-build-form');
  await form.getByLabel('Project').selectOption({ label: 'webapp' });
  await form.getByLabel('Name', { exact: true }).fill('rspec');
  await form.getByLabel('Stage').fill('verify');
  await form.getByLabel('Ref', { exact: true }).fill('main');
  await form.getByLabel('Commands').fill('bundle install\nbundle exec rspec');
  await form.getByRole('button', { name: 'Add variable' }).click();
  await form.getByLabel('Key of variable 1').fill('RAILS_ENV');
  await form.getByLabel('Value of variable 1').fill('test');
  await form.getByRole('button', { name: 'Add variable' }).click();
  await form.getByLabel('Key of variable 2').fill('DEPLOY_KEY');
  await form.getByLabel('Value of variable 2').fill('s3cr3t');
  await form.getByLabel('Public variable 2').uncheck();
  await form.getByLabel('Tags').fill('docker, linux');
  await form.getByLabel('Artifacts paths').fill('coverage/\nlog/');
  await form.getByLabel('Artifacts expire in').fill('1 week');
  await form.getByLabel('Count').fill('3');

  // A value the server refuses: its message appears beside the field, in words, and nothing is created.
  await form.getByText('More fields').click();
  await form.getByLabel('SHA', { exact: true }).fill('not-hex');
  await form.getByRole('button', { name: 'Create builds' }).click();
  const shaError = form.getByTestId('field-error-sha');
  await expect(shaError).toHaveText('SHA must be 8 to 64 hexadecimal characters (0-9, a-f)');
  await expect(form.getByLabel('SHA', { exact: true })).toHaveAttribute('aria-invalid', 'true');
  expect((await control(s, '/builds')).body).toEqual([]);
  await form.getByLabel('SHA', { exact: true }).fill('');
  await form.getByRole('button', { name: 'Create builds' }).click();
  await expect(page.getByTestId('new-build-result')).toHaveText(/Created 3 builds: #1, #2, #3/);
  await expect(shaError).toHaveCount(0);

  for (const id of [1, 2, 3]) await expect(row(page, id).getByTestId('build-status')).toHaveText('pending');
  const created = (await control(s, '/builds/1')).body as BuildView;
  expect(created).toMatchObject({
    name: 'rspec',
    stage: 'verify',
    ref: 'main',
    commands: 'bundle install\nbundle exec rspec',
    variables: [
      { key: 'RAILS_ENV', value: 'test', public: true },
      { key: 'DEPLOY_KEY', value: 's3cr3t', public: false },
    ],
    tag_list: ['docker', 'linux'],
    options: { artifacts: { paths: ['coverage/', 'log/'], expire_in: '1 week' } },
    project_id: stored.id,
  });
  await screenshot(page, testInfo, 'builds-new');

  // --- A runner takes the oldest and finishes it: the row follows without a reload
  const runner = await registerRunner(s, stored.runners_token, { tag_list: 'docker,linux' });
  const taken = await requestBuild(s, runner.token);
  expect(taken.status).toBe(201);
  expect(taken.body.id).toBe(1);
  await expect(row(page, 1).getByTestId('build-status')).toHaveText('running');
  expect((await runnerJson(`${s.url}/ci/api/v1/builds/1`, 'PUT', { token: runner.token, state: 'success' })).status).toBe(200);
  await expect(row(page, 1).getByTestId('build-status')).toHaveText('success');
  await expect(row(page, 1).getByTestId('build-duration')).not.toHaveText('—');

  // --- Retry from the row: a new pending build; the finished one stays
  await expect(row(page, 1).getByRole('button', { name: 'Cancel build #1' })).toHaveCount(0);
  await row(page, 1).getByRole('button', { name: 'Retry build #1' }).click();
  await expect(row(page, 4).getByTestId('build-status')).toHaveText('pending');
  await expect(row(page, 1).getByTestId('build-status')).toHaveText('success');
  expect((await control(s, '/builds/4')).body).toMatchObject({ name: 'rspec', tag_list: ['docker', 'linux'], variables: created.variables });

  // --- Cancel a pending one from its row; a pending build offers no retry
  await expect(row(page, 2).getByRole('button', { name: 'Retry build #2' })).toHaveCount(0);
  page.once('dialog', (d) => void d.accept());
  await row(page, 2).getByRole('button', { name: 'Cancel build #2' }).click();
  await expect(row(page, 2).getByTestId('build-status')).toHaveText('canceled');
  expect(((await control(s, '/builds/2')).body as BuildView).status).toBe('canceled');
  await expectSamePage(page);

  // --- Retry from a build's page: it opens the new build
  await row(page, 2).getByTestId('build-link').click();
  await expect(page.locator('[data-testid="view-build"] h2')).toContainText('#2 rspec');
  await page.getByTestId('view-build').getByRole('button', { name: 'Retry build #2' }).click();
  await expect(page.locator('[data-testid="view-build"] h2')).toContainText('#5 rspec');
  await expect(page.locator('[data-testid="view-build"] [data-testid="build-status"]')).toHaveText('pending');
  expect(page.url()).toMatch(/#\/builds\/5$/);
  page.once('dialog', (d) => void d.accept());
  await page.getByTestId('view-build').getByRole('button', { name: 'Cancel build #5' }).click();
  await expect(page.locator('[data-testid="view-build"] [data-testid="build-status"]')).toHaveText('canceled');
  await expectSamePage(page);
});

test('the form shows each refusal beside its field, in words, and creates nothing', async ({ page }) => {
  const project = (await control(s, '/projects', { method: 'POST', json: { name: 'refusals' } })).body as ProjectView;
  const before = ((await control(s, '/builds?limit=1000')).body as BuildView[]).length;
  await openSignedIn(page, s, '/builds');
  await page.getByTestId('view-builds').getByRole('button', { name: 'New build' }).click();
  const form = page.getByTestId('new-build-form');
  await form.getByLabel('Project').selectOption({ label: 'refusals' });

  await form.getByLabel('Count').fill('10001');
  await form.getByRole('button', { name: 'Create builds' }).click();
  await expect(form.getByTestId('field-error-count')).toHaveText('Count must be at most 10000');

  await form.getByLabel('Count').fill('1');
  await form.getByLabel('Depends on').fill('1, first');
  await form.getByRole('button', { name: 'Create builds' }).click();
  await expect(form.getByTestId('field-error-depends_on')).toHaveText('Depends on takes build ids (numbers); "first" is not one');
  await expect(form.getByTestId('field-error-count')).toHaveCount(0);
  // A build that does not exist: the server's refusal, beside the same field.
  await form.getByLabel('Depends on').fill('999999');
  await form.getByRole('button', { name: 'Create builds' }).click();
  await expect(form.getByTestId('field-error-depends_on')).toHaveText('Depends on names build 999999 that does not exist; name existing builds of this project');

  // Options that are not JSON never reach the server: the form says so itself.
  await form.getByLabel('Depends on').fill('');
  await form.getByText('More fields').click();
  await form.getByLabel('Other options (JSON)').fill('{"image": ');
  await form.getByRole('button', { name: 'Create builds' }).click();
  await expect(form.getByTestId('field-error-options')).toContainText('not JSON');
  expect(((await control(s, '/builds?limit=1000')).body as BuildView[]).length).toBe(before);

  // Fixed, it goes through: one build, and the answer links to it.
  await form.getByLabel('Other options (JSON)').fill('{"image": "ruby:2.3"}');
  await form.getByRole('button', { name: 'Create builds' }).click();
  await expect(page.getByTestId('new-build-result')).toContainText('Created build #');
  const newest = ((await control(s, `/builds?project_id=${project.id}`)).body as BuildView[])[0]!;
  expect(newest.options).toEqual({ image: 'ruby:2.3' });

  // A project's name in the Projects view opens its builds, filtered to it.
  await page.getByRole('navigation').getByRole('link', { name: 'Projects' }).click();
  await page.getByTestId('view-projects').getByRole('link', { name: 'refusals' }).click();
  await expect(page.getByTestId('filter-project')).toHaveValue(String(project.id));
  await expect(row(page, newest.id)).toBeVisible();
  await expect(page.getByTestId('build-row')).toHaveCount(1);
});
