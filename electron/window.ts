// The one window: locked down (isolated, sandboxed, no Node), showing the backend's UI. Links to
// anywhere else open in the system browser; the page itself can never navigate away.
import path from 'node:path';
import type { BrowserWindowLike, ElectronLike } from './electron-like.ts';
import { loadWindowState, overlaps, saveWindowState } from './window-state.ts';

export const SECURE_WEB_PREFERENCES = {
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  nodeIntegrationInWorker: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  webviewTag: false,
  spellcheck: false,
} as const;

export function isExternalHttp(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

export function createMainWindow(e: ElectronLike, opts: { backendUrl: string; preload: string; dataDir: string }): BrowserWindowLike {
  const origin = new URL(opts.backendUrl).origin;
  const state = loadWindowState(opts.dataDir, e.screen ? (b) => overlaps(b, e.screen!.getDisplayMatching(b).workArea) : undefined);
  const { x, y, width, height } = state.bounds;
  const win = new e.BrowserWindow({
    ...(Number.isFinite(x) && Number.isFinite(y) ? { x, y } : {}),
    width,
    height,
    minWidth: 720,
    minHeight: 480,
    show: false,
    title: 'Jobscope',
    backgroundColor: '#111418',
    webPreferences: { ...SECURE_WEB_PREFERENCES, preload: path.resolve(opts.preload) },
  });
  if (state.maximized) win.maximize();
  win.once('ready-to-show', () => win.show());

  win.webContents.setWindowOpenHandler(({ url }) => {
    if (isExternalHttp(url)) void e.shell.openExternal(url);
    return { action: 'deny' };
  });
  // A redirect is a navigation the page did not ask for (a proxy, a captive portal, a hostile
  // answer): it gets the same rule as a click, so the window only ever shows the backend's origin.
  const stayHome = (event: { preventDefault(): void }, url: string) => {
    let target = '';
    try {
      target = new URL(url).origin;
    } catch {
      /* unparsable: block */
    }
    if (target === origin) return;
    event.preventDefault();
    if (isExternalHttp(url)) void e.shell.openExternal(url);
  };
  win.webContents.on('will-navigate', stayHome);
  win.webContents.on('will-redirect', stayHome);

  win.on('close', () => {
    try {
      saveWindowState(opts.dataDir, { bounds: win.getNormalBounds(), maximized: win.isMaximized() });
    } catch {
      /* a read-only data dir must not block quitting */
    }
  });
  return win;
}
