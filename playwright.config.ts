// End-to-end tests in Debian's Chromium (never a downloaded browser). No webServer block: each spec
// starts its own real Jobscope server in-process (test/e2e/support.ts) on a temp data dir, serving
// the built UI from dist/renderer (`npx vite build` first; test/run-all.sh does it when stale).
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: 'test/e2e',
  // Two spec files at a time: every spec starts its own server on port 0 with its own temp data dir
  // in its worker (support.ts), so files share nothing; tests inside a file share its server and
  // stay in order (fullyParallel: false). A spec mostly waits (for samples, for the UI), so one worker
  // leaves the CPU idle; three were no faster than two on the loaded machine (docs/benchmark-bounds.md,
  // "npm test"). PW_WORKERS=1 runs the files one by one.
  workers: Number(process.env.PW_WORKERS ?? 2),
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1400, height: 1000 },
    // A failed test's screenshot is taken by test/e2e/fixtures.ts: Playwright's 'only-on-failure'
    // photographs the reused context's page at every reset, passed or not.
    screenshot: 'off',
    // One browser context per worker, reset between tests by Playwright (cookies, HTTP cache,
    // local and session storage of every origin visited, routes, init scripts, the clock,
    // viewport and emulated media, extra pages) and by test/e2e/fixtures.ts (permissions, the
    // page's listeners), instead of a new context and page per test. The page and its renderer
    // process stay: a new one per test cost ~1.5 core-s (the renderer's first document, the
    // browser's window for it), which was most of Chromium's CPU: 4 specs (21 tests, 1 worker,
    // load ~15) took 95.9 core-s by process accounting (renderers 49.4, browser 18.4) with a
    // context per test, 65.0 (renderers 26.1, browser 12.1) reused. Each test still starts from
    // about:blank and loads the app afresh; each spec has its own server, so its own origin.
    reuseContext: true,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    },
  },
});
