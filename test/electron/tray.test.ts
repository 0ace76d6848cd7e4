// The tray (menu-bar) status in desktop mode, with Electron faked and the backend real: it shows
// the worst queue the monitor sampled (tooltip, macOS title, the menu's first line), follows the
// backlog as it changes, opens the window on a click, quits from its menu; and the ranking itself.
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDesktop, type Desktop } from '../../electron/desktop.ts';
import { describeWorst, worstQueue } from '../../hosts/worst-queue.ts';
import { tempDir } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { FakeTray, FakeWindow, fakeElectron } from './fake-electron.ts';
import { waitFor } from '../helpers/wait.ts';

const PRELOAD = '/opt/jobscope/dist-electron/preload.cjs';
const ICON = 'renderer/public/tray-icon.png';
// Sampling every 300 ms and one worker slot: jobs queued behind a long one stay waiting.
const env = { JOBSCOPE_LOG_LEVEL: 'silent', JOBSCOPE_MONITOR_INTERVAL_MS: '300', JOBSCOPE_JOB_CONCURRENCY: '1' };
const cleanup: (() => Promise<void> | void)[] = [];
// Test files share one module graph (vitest isolate: false): another file's windows and trays may
// still be listed when this one starts.
beforeEach(() => {
  FakeWindow.all = [];
  FakeTray.all = [];
});
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
  FakeWindow.all = [];
  FakeTray.all = [];
});

async function launch() {
  const userData = tempDir('jobscope-tray-');
  const f = fakeElectron({ userData });
  const d = (await startDesktop(f.electron, { preload: PRELOAD, env, trayIcon: ICON, trayIntervalMs: 200 })) as Desktop;
  // After a quit from the tray the server is already closed (and the host has none to give).
  cleanup.push(async () => {
    try {
      await d.server.close();
    } catch {
      /* closed by the quit */
    }
  }, () => fs.rmSync(userData, { recursive: true, force: true }));
  return { ...f, d, token: d.server.ctx.store.adminToken };
}

describe('tray status (faked Electron, real backend)', () => {
  it('shows the worst queue from the server and follows it', async () => {
    const { d, token } = await launch();
    const tray = FakeTray.all[0]!;
    expect(tray).toBeDefined();
    expect((tray.image as { path?: string }).path).toBe(ICON);
    await waitFor(() => `tooltip: ${tray.tooltip}`, () => /every queue is empty/.test(tray.tooltip), 30_000, 100);

    const r = await http(`${d.url}/api/v3/sim/jobs`, { json: { queue: 'mailers', count: 30, duration_ms: 60_000 }, token });
    expect([201, 202]).toContain(r.status);
    await waitFor(() => `tooltip: ${tray.tooltip}`, () => /worst queue mailers \(This Jobscope\): 29 waiting/.test(tray.tooltip), 30_000, 100);
    expect(tray.title).toMatch(/^mailers \d+ s$/);
    expect(tray.menu[0]).toMatchObject({ label: expect.stringMatching(/^Worst queue: mailers .*29 waiting/), enabled: false });
  });

  it('opens the window on a click and quits (closing the server) from its menu', async () => {
    const { d, rec } = await launch();
    const tray = FakeTray.all[0]!;
    const win = FakeWindow.all[0]!;
    win.minimized = true;
    tray.click();
    expect(win.minimized).toBe(false);
    expect(win.focused).toBe(1);
    tray.choose('Open Jobscope');
    expect(win.focused).toBe(2);
    tray.choose('Quit Jobscope');
    await waitFor('the quit to finish', () => rec.quitDone, 30_000, 100);
    expect(tray.destroyed).toBe(true);
    await expect(fetch(`${d.url}/api/app/status`)).rejects.toThrow();
  });
});

describe('worst queue', () => {
  it('is the longest latency across connections, then the largest backlog; idle queues never count', () => {
    const w = worstQueue([
      { connection: 'Embedded server', queues: { big: { backlog: 900, latency: 3 }, idle: { backlog: 0, latency: 0 } } },
      { connection: 'gitlab.example.com', queues: { slow: { backlog: 4, latency: 125 }, tie: { backlog: 2, latency: 125 } } },
    ]);
    expect(w).toEqual({ connection: 'gitlab.example.com', queue: 'slow', backlog: 4, latency: 125 });
    expect(describeWorst(w)).toEqual({
      tooltip: 'Jobscope: worst queue slow (gitlab.example.com): 4 waiting, latency 2 min',
      title: 'slow 2 min',
      menuLine: 'Worst queue: slow (gitlab.example.com): 4 waiting, latency 2 min',
    });
    expect(worstQueue([{ connection: 'a', queues: { x: { backlog: 0, latency: 0 } } }])).toBeNull();
    expect(describeWorst(null).tooltip).toBe('Jobscope: every queue is empty');
  });
});
