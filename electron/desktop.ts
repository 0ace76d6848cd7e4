// The Electron shell's logic, given an Electron-like module: one instance, the backend on 127.0.0.1
// at a free port with its data in userData, one locked-down window, a narrow IPC surface, and a
// quit that closes the server (finishing its writes) before the process ends.
import fs from 'node:fs';
import path from 'node:path';
import type { JobscopeServer } from '../server/app.ts';
import { ServerHost } from '../hosts/server-host.ts';
import { resolveConfig } from '../server/config.ts';
import { CSP } from '../server/ui/plugin.ts';
import type { BrowserWindowLike, ElectronLike, IpcEventLike } from './electron-like.ts';
import { IPC, type FileFilter } from './bridge-types.ts';
import { createMainWindow } from './window.ts';
import { startTray } from './tray.ts';

const MAX_OPEN_BYTES = 50 * 1024 * 1024;
/** What ends the shell from outside: a terminal's Ctrl-C, a session logout. */
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export interface Desktop {
  /** The running server (a new one after "reset data" restarts it in place). */
  readonly server: JobscopeServer;
  url: string;
  window: BrowserWindowLike;
}

export interface DesktopOptions {
  /** Compiled preload script (dist-electron/preload.cjs). */
  preload: string;
  /** Extra settings (tests pass a log level); flags and JOBSCOPE_* still apply through resolveConfig. */
  overrides?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** The tray icon (a PNG; main.ts passes the built UI's tray-icon.png). */
  trayIcon?: string;
  /** How often the tray's worst-queue status is refreshed, ms (tests shorten it). */
  trayIntervalMs?: number;
}

/** Resolves to the running desktop, or undefined when another instance owns the lock (it gets focused). */
export async function startDesktop(e: ElectronLike, opts: DesktopOptions): Promise<Desktop | undefined> {
  const { app } = e;
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return undefined;
  }
  let win: BrowserWindowLike | undefined;
  app.on('second-instance', () => {
    if (!win || win.isDestroyed()) return;
    if (win.isMinimized()) win.restore();
    win.focus();
  });

  await app.whenReady();
  const dataDir = app.getPath('userData');
  let host: ServerHost;
  let url: string;
  try {
    const config = resolveConfig({ ...opts.overrides, dataDir, host: '127.0.0.1', port: 0, mode: 'electron' }, opts.env ?? process.env);
    // After "reset data" the server comes back on the same address with the same token: reload the page.
    host = new ServerHost(config, () => win?.webContents.reload());
    url = await host.start();
  } catch (err) {
    e.dialog.showErrorBox('Jobscope could not start', `${(err as Error).message}\n\nData dir: ${dataDir}`);
    app.exit(1);
    return undefined;
  }
  const origin = new URL(url).origin;
  const token = host.server.ctx.store.adminToken;

  // Every answer of the backend carries the CSP; the header is added here too for anything that lacks it.
  e.session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    const headers = { ...(details.responseHeaders ?? {}) };
    if (details.url.startsWith(origin) && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-security-policy')) {
      headers['Content-Security-Policy'] = [CSP];
    }
    callback({ responseHeaders: headers });
  });

  // The UI needs no camera, location, notifications (they go through the bridge), clipboard reads
  // or anything else a permission guards: a page that got in somehow gets nothing either.
  e.session.defaultSession.setPermissionRequestHandler((_webContents, _permission, callback) => callback(false));
  e.session.defaultSession.setPermissionCheckHandler(() => false);

  // Only our own page may use the bridge.
  const fromUs = (event: IpcEventLike) => {
    try {
      return event.senderFrame !== null && new URL(event.senderFrame.url).origin === origin;
    } catch {
      return false;
    }
  };
  const guard =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (event: IpcEventLike, ...args: unknown[]) => {
      if (!fromUs(event)) throw new Error('refused: not the Jobscope page');
      return fn(...(args as A));
    };
  e.ipcMain.handle(IPC.backend, guard(() => ({ url, token })));
  e.ipcMain.handle(
    IPC.notify,
    guard((title: unknown, body: unknown) => {
      if (e.Notification.isSupported()) new e.Notification({ title: String(title).slice(0, 200), body: String(body).slice(0, 1000) }).show();
    }),
  );
  e.ipcMain.handle(
    IPC.saveFile,
    guard(async (raw: unknown) => {
      const o = (raw ?? {}) as { defaultPath?: unknown; data?: unknown; filters?: FileFilter[] };
      const bytes = o.data instanceof Uint8Array ? o.data : o.data instanceof ArrayBuffer ? new Uint8Array(o.data) : undefined;
      if (!bytes) throw new Error('saveFile: data must be bytes');
      // The page suggests a file name only; the folder is the user's choice in the dialog.
      const suggested = path.basename(String(o.defaultPath ?? 'jobscope-export'));
      const r = await e.dialog.showSaveDialog(win!, { defaultPath: suggested, filters: o.filters });
      if (r.canceled || !r.filePath) return { saved: false };
      await fs.promises.writeFile(r.filePath, bytes);
      return { saved: true, path: r.filePath };
    }),
  );
  e.ipcMain.handle(
    IPC.openFile,
    guard(async (raw: unknown) => {
      const o = (raw ?? {}) as { filters?: FileFilter[] };
      const r = await e.dialog.showOpenDialog(win!, { properties: ['openFile'], filters: o.filters });
      const file = r.filePaths[0];
      if (r.canceled || !file) return null;
      const size = (await fs.promises.stat(file)).size;
      if (size > MAX_OPEN_BYTES) throw new Error(`the file is larger than ${MAX_OPEN_BYTES / 1024 / 1024} MiB`);
      return { name: path.basename(file), data: new Uint8Array(await fs.promises.readFile(file)) };
    }),
  );

  win = createMainWindow(e, { backendUrl: url, preload: opts.preload, dataDir });
  await win.loadURL(`${url}/`);

  const tray = startTray(e, {
    backend: () => ({ url, token }),
    icon: opts.trayIcon ?? '',
    intervalMs: opts.trayIntervalMs,
    onOpen: () => {
      if (!win || win.isDestroyed()) return;
      if (win.isMinimized()) win.restore();
      win.show();
      win.focus();
    },
    onQuit: () => app.quit(),
  });

  app.on('window-all-closed', () => app.quit());
  // A terminal's Ctrl-C or a session logout: the same clean path as closing the window. Taken off
  // again once the quit is done: a process that starts the shell more than once (its tests) would
  // pile them up, and a later signal would quit shells long gone.
  const onSignal = () => app.quit();
  for (const signal of SIGNALS) process.once(signal, onSignal);
  let quitting: 'no' | 'closing' | 'closed' = 'no';
  app.on('before-quit', (event) => {
    if (quitting === 'closed') return;
    event.preventDefault();
    if (quitting === 'closing') return;
    quitting = 'closing';
    tray.stop();
    void host
      .close()
      .catch(() => undefined)
      .then(() => {
        for (const signal of SIGNALS) process.off(signal, onSignal);
        quitting = 'closed';
        app.quit();
      });
  });
  const window = win;
  return {
    get server() {
      return host.server;
    },
    url,
    window,
  };
}
