// The Runners view, as GitLab's admin Runners page: the registration token and the
// register command for this server, copied to the clipboard; two runners registered over HTTP, listed
// with what they sent (version, platform), online, tags and builds; pausing one makes its poll get no
// build (GitLab: 404) until it is resumed; deleting the other (after a confirm) revokes its token.
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { createBuild, createProject, registerRunner, requestBuild } from '../helpers/fixtures.ts';
import { openSignedIn, screenshot, startUiServer } from './support.ts';

const INFO = { name: 'gitlab-ci-multi-runner', version: '1.11.5', revision: 'cbfcb5c8', platform: 'linux', architecture: 'amd64' };

let s: TestServer;
test.beforeAll(async () => {
  s = await startUiServer();
});
test.afterAll(async () => {
  await s?.close();
});

const runnerIds = async () => ((await http(`${s.url}/api/v3/sim/runners`, { token: s.adminToken })).body as { id: number }[]).map((r) => r.id);
const buildStatus = async (id: number) => ((await http(`${s.url}/api/v3/sim/builds/${id}`, { token: s.adminToken })).body as { status: string }).status;

test('runners: register command, list, pause and resume, delete', async ({ page, context }, testInfo) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.url });
  const project = await createProject(s, 'e2e-runners');
  const shared = await registerRunner(s, s.registrationToken, { description: 'e2e-shared', tag_list: 'docker, linux', info: INFO });
  const mine = await registerRunner(s, project.runners_token, { description: 'e2e-project', tag_list: 'e2e-only' });

  await openSignedIn(page, s, '/runners');
  await expect(page.getByTestId('view-runners')).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Runners', level: 2 })).toBeVisible();

  // The token and the command for this server, ready to paste.
  await expect(page.getByTestId('registration-token')).toHaveText(s.registrationToken);
  const command = page.getByTestId('register-command');
  await expect(command).toHaveValue(new RegExp(`^gitlab-ci-multi-runner register --non-interactive`));
  await page.getByTestId('register-tags').fill('docker, e2e');
  const text = await command.inputValue();
  expect(text).toContain(`--url ${s.url}/ci `);
  expect(text).toContain(`--registration-token ${s.registrationToken} `);
  expect(text).toContain('--executor shell');
  expect(text).toContain('--description jobscope-runner');
  expect(text).toContain('--tag-list docker,e2e');
  await page.getByTestId('copy-command').click();
  await expect(page.getByTestId('copy-status')).toHaveText('Copied the command to the clipboard.');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toBe(text);
  expect(copied).toContain(s.registrationToken);
  expect(copied).toContain(`${s.url}/ci`);

  // Both runners, with what they sent.
  const row = (id: number) => page.locator(`[data-testid="runner-row"][data-runner="${id}"]`);
  await expect(row(shared.id).getByTestId('runner-description')).toHaveText('e2e-shared');
  await expect(row(shared.id).getByTestId('runner-kind')).toHaveText('shared');
  await expect(row(shared.id).getByTestId('runner-version')).toHaveText('1.11.5 (cbfcb5c8)');
  await expect(row(shared.id).getByTestId('runner-platform')).toHaveText('linux/amd64');
  await expect(row(shared.id).getByTestId('runner-tags')).toContainText('docker');
  await expect(row(shared.id).getByTestId('runner-tags')).toContainText('linux');
  await expect(row(shared.id).getByTestId('runner-contact')).toHaveAttribute('data-online', 'yes');
  await expect(row(shared.id).getByTestId('runner-contact')).toContainText('online');
  await expect(row(mine.id).getByTestId('runner-kind')).toHaveText('project e2e-runners');
  await expect(row(mine.id).getByTestId('runner-version')).toHaveText('—');
  await expect(row(mine.id).getByTestId('runner-tags')).toContainText('e2e-only');
  await expect(row(mine.id).getByTestId('runner-contact')).toContainText('online');
  await expect(row(shared.id).getByTestId('runner-builds')).toHaveText('0');
  await screenshot(page, testInfo, 'runners');
  await page.getByTestId('theme-picker').selectOption('dark');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await screenshot(page, testInfo, 'runners-dark');

  // Pause: the runner's poll gets no build, the build stays pending.
  const build = await createBuild(s, project.id, { tag_list: ['docker'] });
  await row(shared.id).getByTestId('runner-toggle').click();
  await expect(row(shared.id).getByTestId('runner-state')).toHaveText('paused');
  await expect(page.getByTestId('runner-message')).toContainText(`Paused runner #${shared.id}`);
  await expect(row(shared.id).getByTestId('runner-toggle')).toHaveText('Resume');
  expect((await requestBuild(s, shared.token, { info: INFO })).status).toBe(404);
  expect(await buildStatus(build.id)).toBe('pending');

  // Resume: the next poll takes the build, and the list counts it.
  await row(shared.id).getByTestId('runner-toggle').click();
  await expect(row(shared.id).getByTestId('runner-state')).toHaveText('active');
  const got = await requestBuild(s, shared.token, { info: INFO });
  expect(got.status).toBe(201);
  expect((got.body as { id: number }).id).toBe(build.id);
  await expect(row(shared.id).getByTestId('runner-builds')).toHaveText('1');

  // Delete the other, after a confirm; dismissing keeps it.
  const asked: string[] = [];
  page.once('dialog', (d) => void (asked.push(d.message()), d.dismiss()));
  await row(mine.id).getByTestId('runner-delete').click();
  await expect.poll(() => asked.length).toBe(1);
  expect(asked[0]).toContain(`Delete runner #${mine.id} (e2e-project)?`);
  expect(await runnerIds()).toContain(mine.id);
  page.once('dialog', (d) => void d.accept());
  await row(mine.id).getByTestId('runner-delete').click();
  await expect(page.getByTestId('runner-message')).toContainText(`Deleted runner #${mine.id}`);
  await expect(row(mine.id)).toHaveCount(0);
  expect(await runnerIds()).not.toContain(mine.id);
  expect((await requestBuild(s, mine.token)).status).toBe(403);
  await expect(row(shared.id)).toBeVisible();
});

test('runners: the view is in the menu and keyboard-operable', async ({ page }) => {
  await openSignedIn(page, s);
  await page.getByRole('link', { name: 'Runners' }).click();
  await expect(page.getByTestId('view-runners')).toBeVisible();
  // The keyboard reaches the copy button (Shift+Tab back from the next field), with a visible focus ring.
  await expect(page.getByTestId('registration-token')).toHaveText(s.registrationToken);
  const copyToken = page.getByTestId('copy-token');
  await page.getByTestId('register-description').focus();
  await page.keyboard.press('Shift+Tab');
  await expect(copyToken).toBeFocused();
  const outline = await copyToken.evaluate((el) => getComputedStyle(el).outlineStyle);
  expect(outline).not.toBe('none');
});

test('runners: at 1024×700 the command and the table fit the window (no sideways scrolling)', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await registerRunner(s, s.registrationToken, { description: 'a runner with a rather long description for the narrow window', tag_list: 'docker, linux, ruby, postgres', info: INFO });
  await openSignedIn(page, s, '/runners');
  await expect(page.getByTestId('runner-row').first()).toBeVisible();
  const overflow = await page.evaluate(() => {
    const wide = (el: Element | null) => (el ? el.scrollWidth - el.clientWidth : -1);
    return {
      page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      table: wide(document.querySelector('[data-testid="runners-table"]')?.parentElement ?? null),
    };
  });
  expect(overflow.page).toBeLessThanOrEqual(0);
  expect(overflow.table).toBeLessThanOrEqual(0);
  await screenshot(page, testInfo, 'runners-1024');
});

test('runners: where the clipboard is refused (the desktop shell denies it), the text is selected for Ctrl+C', async ({ page }) => {
  // As in the desktop window, which denies every web permission: writeText rejects.
  await page.addInitScript(() => {
    Object.defineProperty(navigator, 'clipboard', { value: { writeText: () => Promise.reject(new DOMException('denied', 'NotAllowedError')) } });
  });
  await openSignedIn(page, s, '/runners');
  await expect(page.getByTestId('registration-token')).toHaveText(s.registrationToken);
  const selected = () => page.evaluate(() => {
    const active = document.activeElement;
    if (active instanceof HTMLTextAreaElement) return active.value.slice(active.selectionStart, active.selectionEnd);
    return window.getSelection()?.toString() ?? '';
  });
  await page.getByTestId('copy-command').click();
  await expect(page.getByTestId('copy-status')).toHaveText('The clipboard is not available here: the command is selected, press Ctrl+C.');
  await expect(page.getByTestId('register-command')).toBeFocused();
  expect(await selected()).toBe(await page.getByTestId('register-command').inputValue());
  await page.getByTestId('copy-token').click();
  await expect(page.getByTestId('copy-status')).toContainText('the token is selected');
  await expect.poll(selected).toBe(s.registrationToken);
});

test('runners: a runner silent past --runner-offline-after-ms shows offline; its next poll shows it online', async ({ page }) => {
  // Its own server: silent runners are marked offline after 1 s here (GitLab: an hour).
  const quick = await startUiServer({ runnerOfflineAfterMs: 1000, runnerContactEveryMs: 200 });
  try {
    const r = await registerRunner(quick, quick.registrationToken, { description: 'e2e-silent', info: INFO });
    await openSignedIn(page, quick, '/runners');
    const contact = page.locator(`[data-testid="runner-row"][data-runner="${r.id}"]`).getByTestId('runner-contact');
    await expect(contact).toHaveAttribute('data-online', 'no');
    await expect(contact).toContainText('offline');
    await expect(contact).toContainText('ago');
    // The runner polls again, as a live one does (every 3 s for real; faster than the 1 s cut-off here).
    expect((await requestBuild(quick, r.token, { info: INFO })).status).toBe(204);
    const polling = setInterval(() => void requestBuild(quick, r.token, { info: INFO }).catch(() => {}), 200);
    try {
      await expect(contact).toHaveAttribute('data-online', 'yes');
      await expect(contact).toContainText('online');
    } finally {
      clearInterval(polling);
    }
  } finally {
    await quick.close();
  }
});
