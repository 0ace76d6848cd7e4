// Trace parts in the runner console's exchanges and in the simulator's journal carry terminal
// escape codes: they are shown coloured as the build trace view shows them (no escape characters
// on screen, markup inert, no links), and "Raw" shows the body as sent with its escapes visible.
import type { Locator } from '@playwright/test';
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';
import { expectAccessible, openSignedIn, startUiServer } from './support.ts';

let s: TestServer;
test.beforeAll(async () => {
  s = await startUiServer();
});
test.afterAll(async () => {
  await s?.close();
});

const ESC = '\u001b';
const PART = `$ make ${ESC}[31mred words${ESC}[0m <b>bold</b> https://evil.example/x ${ESC}]8;;https://evil.example/${ESC}\\click${ESC}]8;;${ESC}\\\n`;

/** A coloured body: the red run is red, nothing of the escapes or the markup is live. */
async function expectColoured(body: Locator) {
  await expect(body).toHaveAttribute('data-mode', 'ansi');
  const text = (await body.textContent())!;
  expect(text).not.toContain(ESC);
  expect(text).toContain('$ make red words <b>bold</b> https://evil.example/x click');
  const red = body.locator('.ansi-red-fg');
  await expect(red).toHaveText('red words');
  // The trace view's red (styles.css .ansi-red-fg), on the trace's dark background.
  expect(await red.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(248, 113, 113)');
  expect(await body.evaluate((el) => getComputedStyle(el).backgroundColor)).not.toBe(await body.evaluate((el) => getComputedStyle(el.closest('.card')!).backgroundColor));
  await expect(body.locator('b, a')).toHaveCount(0);
}

/** Raw: the text as sent, ESC shown as a chip reading "ESC" (a font-independent glyph), no colour. */
async function expectRaw(body: Locator) {
  await expect(body).toHaveAttribute('data-mode', 'raw');
  const text = (await body.textContent())!;
  expect(text).toContain('$ make ESC[31mred wordsESC[0m <b>bold</b>');
  expect(text).toContain('ESC]8;;https://evil.example/ESC\\click');
  expect(text).not.toContain('␛');
  const chips = body.locator('abbr.ctl-chip');
  expect(await chips.count()).toBeGreaterThanOrEqual(6);
  await expect(chips.first()).toHaveText('ESC');
  // A box around it, so ESC reads apart from the text beside it.
  expect(await chips.first().evaluate((el) => getComputedStyle(el).borderTopStyle)).toBe('solid');
  expect(text).not.toContain(ESC);
  await expect(body.locator('.ansi-red-fg, b, a')).toHaveCount(0);
}

test('a trace part with escape codes: coloured in the console and the journal, Raw shows the escapes', async ({ page }) => {
  const project = await createProject(s, 'ansi');
  await createBuild(s, project.id, { name: 'colours' });
  await openSignedIn(page, s, '/runner-console');
  const newest = page.getByTestId('exchange').first();
  await page.getByTestId('c-register').click();
  await expect(newest.getByTestId('exchange-status')).toHaveText(/^201/);
  await page.getByTestId('c-request-build').click();
  await expect(newest).toHaveAttribute('data-step', 'request build');
  await expect(newest.getByTestId('exchange-status')).toHaveText(/^201/);

  await page.getByTestId('c-trace-body').fill(PART);
  await page.getByTestId('c-send-trace').click();
  await expect(newest).toHaveAttribute('data-step', 'trace part');
  await expect(newest.getByTestId('exchange-status')).toHaveText(/^202/);

  const sent = newest.locator('[data-testid="exchange-request"] [data-testid="request-body"]');
  await expectColoured(sent);
  await expectAccessible(page, 'the console with a coloured body');
  const toggle = newest.locator('[data-testid="exchange-request"] [data-testid="body-raw"]');
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await expectRaw(sent);
  await toggle.click();
  await expectColoured(sent);
  // A body without escapes gets no toggle and stays plain text.
  await expect(newest.locator('[data-testid="exchange-response"] [data-testid="body-raw"]')).toHaveCount(0);

  // The same exchange in the simulator's journal.
  await page.evaluate(() => (location.hash = '/simulator'));
  await page.getByTestId('jf-path').fill('trace.txt');
  const row = page.locator('[data-testid="journal-row"][data-method="PATCH"]').first();
  await row.click();
  const detail = page.getByTestId('journal-detail');
  const body = detail.getByTestId('journal-request-body');
  await expectColoured(body);
  await expectAccessible(page, 'the journal with a coloured body');
  await detail.getByTestId('body-raw').click();
  await expectRaw(body);
});
