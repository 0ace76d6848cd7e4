// The Electron shell's logic with Electron faked and the backend real: single instance, the server
// on loopback with its data in userData, a locked-down window, links leaving for the browser, the
// narrow bridge refusing other pages, remembered bounds, and a quit that closes the server.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDesktop, type Desktop } from '../../electron/desktop.ts';
import { IPC } from '../../electron/bridge-types.ts';
import { tempDir } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { FakeTray, FakeWindow, fakeElectron } from './fake-electron.ts';
import { waitFor } from '../helpers/wait.ts';

const PRELOAD = '/opt/jobscope/dist-electron/preload.cjs';
const env = { JOBSCOPE_LOG_LEVEL: 'silent', JOBSCOPE_MONITOR_INTERVAL_MS: '3600000' };
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
  FakeWindow.all = [];
  FakeTray.all = [];
});

/** Quits the way a user does (app.quit: the server closes first), and waits for the quit to finish. */
async function quit(f: ReturnType<typeof fakeElectron>): Promise<void> {
  f.electron.app.quit();
  await new Promise<void>((resolve) => {
    const t = setInterval(() => f.rec.quitDone && (clearInterval(t), resolve()), 20);
  });
}

async function launch(userData = tempDir('jobscope-electron-')) {
  const f = fakeElectron({ userData });
  const d = (await startDesktop(f.electron, { preload: PRELOAD, env })) as Desktop;
  cleanup.push(() => (f.rec.quitDone ? undefined : quit(f)), () => fs.rmSync(userData, { recursive: true, force: true }));
  return { ...f, d, userData };
}

describe('Electron shell (faked Electron, real backend)', () => {
  it('quits at once when another instance holds the lock', async () => {
    const f = fakeElectron({ userData: tempDir(), lock: false });
    expect(await startDesktop(f.electron, { preload: PRELOAD, env })).toBeUndefined();
    expect(f.rec.quits).toBe(1);
    expect(FakeWindow.all).toHaveLength(0);
  });

  it('runs the backend on 127.0.0.1 with its data in userData and shows it in a locked-down window', async () => {
    const { d, userData, invoke } = await launch();
    expect(d.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const [win] = FakeWindow.all;
    expect(win!.loaded).toEqual([`${d.url}/`]);
    expect(win!.shown).toBe(true);
    expect(win!.options.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true, preload: PRELOAD });
    const backend = (await invoke(IPC.backend, `${d.url}/dashboard`)) as { url: string; token: string };
    expect(backend.url).toBe(d.url);
    const status = await http(`${backend.url}/api/app/status`, { token: backend.token });
    expect(status.body).toMatchObject({ mode: 'electron', data_dir: userData });
    expect(fs.existsSync(path.join(userData, 'jobscope.db'))).toBe(true);
  });

  it('answers the bridge only to its own page', async () => {
    const { d, invoke } = await launch();
    await expect(invoke(IPC.backend, 'https://evil.example/')).rejects.toThrow(/refused/);
    await expect(invoke(IPC.backend, `http://127.0.0.1:1/`)).rejects.toThrow(/refused/);
    await expect(invoke(IPC.backend, d.url)).resolves.toMatchObject({ url: d.url });
  });

  it('opens external links in the system browser and never navigates the window away', async () => {
    const { d, rec } = await launch();
    const win = FakeWindow.all[0]!;
    expect(win.openHandler!({ url: 'https://docs.gitlab.com/' })).toEqual({ action: 'deny' });
    expect(win.openHandler!({ url: 'file:///etc/passwd' })).toEqual({ action: 'deny' });
    expect(win.tryNavigate('https://gitlab.example.com/admin')).toBe(false);
    expect(win.tryNavigate('javascript:alert(1)')).toBe(false);
    expect(win.tryNavigate(`${d.url}/connections`)).toBe(true);
    expect(rec.external).toEqual(['https://docs.gitlab.com/', 'https://gitlab.example.com/admin']);
  });

  it('follows no redirect away from its own origin (external http(s) goes to the browser instead)', async () => {
    const { d, rec } = await launch();
    const win = FakeWindow.all[0]!;
    expect(win.tryRedirect('https://evil.example/phish')).toBe(false);
    expect(win.tryRedirect('file:///etc/passwd')).toBe(false);
    expect(win.tryRedirect('http://127.0.0.1:1/')).toBe(false);
    expect(win.tryRedirect(`${d.url}/builds`)).toBe(true);
    expect(rec.external).toEqual(['https://evil.example/phish', 'http://127.0.0.1:1/']);
  });

  it('denies every permission request and check, also from its own page', async () => {
    const { d, rec } = await launch();
    expect(rec.permissionRequest).toBeTypeOf('function');
    expect(rec.permissionCheck).toBeTypeOf('function');
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'clipboard-sanitized-write', 'openExternal', 'fullscreen', 'hid', 'serial']) {
      const answers: boolean[] = [];
      rec.permissionRequest!({}, permission, (granted) => answers.push(granted), { requestingUrl: `${d.url}/` });
      expect(answers, permission).toEqual([false]);
      expect(rec.permissionCheck!({}, permission, d.url, { requestingUrl: `${d.url}/` }), permission).toBe(false);
    }
  });

  it('adds the CSP to backend answers that lack it', async () => {
    const { d, rec } = await launch();
    let out: Record<string, string[]> | undefined;
    rec.headerListener!({ url: `${d.url}/api/app/status`, responseHeaders: { 'Content-Type': ['application/json'] } }, (r) => (out = r.responseHeaders));
    expect(out!['Content-Security-Policy']![0]).toMatch(/default-src 'self'.*script-src 'self'/);
  });

  it('focuses the window on a second launch', async () => {
    const { appEvents } = await launch();
    const win = FakeWindow.all[0]!;
    win.minimized = true;
    appEvents.emit('second-instance');
    expect(win.minimized).toBe(false);
    expect(win.focused).toBe(1);
  });

  it('saves through the dialog (file name only from the page) and shows native notifications', async () => {
    const { d, rec, invoke, userData } = await launch();
    rec.saveTo = path.join(userData, 'export.csv');
    const r = await invoke(IPC.saveFile, d.url, { defaultPath: '../../etc/history.csv', data: new TextEncoder().encode('a,b\r\n') });
    expect(r).toEqual({ saved: true, path: rec.saveTo });
    expect(rec.saveDialogs[0]!.defaultPath).toBe('history.csv');
    expect(fs.readFileSync(rec.saveTo, 'utf8')).toBe('a,b\r\n');
    await invoke(IPC.notify, d.url, 'Backlog over 100', 'queue mailers: 140');
    expect(rec.notifications).toEqual([{ title: 'Backlog over 100', body: 'queue mailers: 140' }]);
  });

  it('remembers the window bounds in the data dir, and quitting closes the server first', async () => {
    const userData = tempDir('jobscope-electron-');
    const first = fakeElectron({ userData });
    const d1 = (await startDesktop(first.electron, { preload: PRELOAD, env }))!;
    const w1 = FakeWindow.all[0]!;
    w1.bounds = { x: 40, y: 50, width: 1111, height: 777 };
    w1.close();
    await quit(first);
    expect(first.rec.quits).toBe(2); // the first was held back until the server had closed
    await expect(fetch(`${d1.url}/api/app/status`)).rejects.toThrow();
    const second = await launch(userData);
    const w2 = FakeWindow.all[1]!;
    expect(w2.options).toMatchObject({ x: 40, y: 50, width: 1111, height: 777 });
    expect(second.d.url).not.toBe('');
  });

  it('a quit takes its SIGINT and SIGTERM handlers off the process again', async () => {
    const before = { int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
    const f = await launch();
    expect(process.listenerCount('SIGINT')).toBe(before.int + 1);
    expect(process.listenerCount('SIGTERM')).toBe(before.term + 1);
    await quit(f);
    expect({ int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') }).toEqual(before);
  });

  it('resets data in place: same address and token, emptied store, window reloaded', async () => {
    const { d } = await launch();
    const token = d.server.ctx.store.adminToken;
    const before = d.server;
    expect((await http(`${d.url}/api/v3/sim/projects`, { json: { name: 'p' }, token })).status).toBe(201);
    expect((await http(`${d.url}/api/app/reset`, { json: { confirm: 'reset' }, token })).status).toBe(202);
    const win = FakeWindow.all[0]!;
    await waitFor('the window to reload', () => win.reloads > 0, 5000, 50);
    expect(win.reloads).toBe(1);
    expect(d.server).not.toBe(before);
    expect((await http(`${d.url}/api/v3/sim/projects`, { token })).body).toEqual([]);
  });

  it('shows an error box and exits when the backend cannot start', async () => {
    const file = path.join(tempDir(), 'not-a-dir');
    fs.writeFileSync(file, 'x');
    const f = fakeElectron({ userData: file });
    expect(await startDesktop(f.electron, { preload: PRELOAD, env })).toBeUndefined();
    expect(f.rec.errorBoxes[0]!.title).toMatch(/could not start/);
    expect(f.rec.exitCode).toBe(1);
  });
});
