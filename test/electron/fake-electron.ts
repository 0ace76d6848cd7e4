// A stand-in for Electron's main-process module (the binary cannot run here). It records what the
// shell asks of Electron so tests can check it; the backend the shell starts is the real one.
import fs from 'node:fs';
import { EventEmitter } from 'node:events';
import type { BrowserWindowConstructorOptions, Rectangle } from 'electron';
import type { ElectronLike, IpcEventLike, MenuItemLike, NativeImageLike, PermissionCheckHandler, PermissionRequestHandler } from '../../electron/electron-like.ts';

export class FakeWindow {
  static all: FakeWindow[] = [];
  private readonly events = new EventEmitter();
  loaded: string[] = [];
  shown = false;
  focused = 0;
  minimized = false;
  maximized = false;
  destroyed = false;
  bounds: Rectangle;
  openHandler?: (d: { url: string }) => { action: 'deny' | 'allow' };
  private readonly navigation = new Map<string, (event: { preventDefault(): void }, url: string) => void>();
  webContents = {
    setWindowOpenHandler: (h: (d: { url: string }) => { action: 'deny' | 'allow' }) => void (this.openHandler = h),
    on: (e: 'will-navigate' | 'will-redirect', l: (event: { preventDefault(): void }, url: string) => void) => void this.navigation.set(e, l),
    reload: () => void this.reloads++,
  };
  reloads = 0;

  constructor(readonly options: BrowserWindowConstructorOptions) {
    this.bounds = { x: options.x ?? 100, y: options.y ?? 100, width: options.width ?? 800, height: options.height ?? 600 };
    FakeWindow.all.push(this);
  }
  async loadURL(url: string) {
    this.loaded.push(url);
    this.events.emit('ready-to-show');
  }
  once(e: string, l: () => void) {
    this.events.once(e, l);
  }
  on(e: string, l: () => void) {
    this.events.on(e, l);
  }
  show() {
    this.shown = true;
  }
  focus() {
    this.focused++;
  }
  restore() {
    this.minimized = false;
  }
  maximize() {
    this.maximized = true;
  }
  isMinimized() {
    return this.minimized;
  }
  isMaximized() {
    return this.maximized;
  }
  isDestroyed() {
    return this.destroyed;
  }
  getNormalBounds() {
    return this.bounds;
  }
  /** What a user closing the window does. */
  close() {
    this.events.emit('close');
    this.destroyed = true;
    this.events.emit('closed');
  }
  /** What a click on a link inside the page does; true when the navigation went ahead. */
  tryNavigate(url: string): boolean {
    return this.go('will-navigate', url);
  }
  /** What a server answering a page load with a redirect to `url` does; true when it was followed. */
  tryRedirect(url: string): boolean {
    return this.go('will-redirect', url);
  }
  private go(event: string, url: string): boolean {
    let prevented = false;
    this.navigation.get(event)?.({ preventDefault: () => void (prevented = true) }, url);
    return !prevented;
  }
}

/** A tray icon: what the shell set on it, and a click as the user would make it. */
export class FakeTray {
  static all: FakeTray[] = [];
  tooltip = '';
  title = '';
  menu: MenuItemLike[] = [];
  destroyed = false;
  private readonly events = new EventEmitter();
  constructor(readonly image: NativeImageLike & { path?: string }) {
    FakeTray.all.push(this);
  }
  setToolTip(t: string) {
    this.tooltip = t;
  }
  setTitle(t: string) {
    this.title = t;
  }
  setContextMenu(menu: unknown) {
    this.menu = menu as MenuItemLike[];
  }
  on(e: string, l: () => void) {
    this.events.on(e, l);
  }
  destroy() {
    this.destroyed = true;
  }
  click() {
    this.events.emit('click');
  }
  /** Chooses the menu item with this label. */
  choose(label: string) {
    const item = this.menu.find((m) => 'label' in m && m.label === label);
    if (!item || !('click' in item) || !item.click) throw new Error(`no menu item ${label}`);
    item.click();
  }
}

export function fakeElectron(opts: { userData: string; lock?: boolean }) {
  const appEvents = new EventEmitter();
  const handlers = new Map<string, (event: IpcEventLike, ...args: unknown[]) => unknown>();
  const rec = {
    quits: 0,
    quitDone: false,
    exitCode: undefined as number | undefined,
    errorBoxes: [] as { title: string; content: string }[],
    external: [] as string[],
    notifications: [] as { title: string; body: string }[],
    saveDialogs: [] as { defaultPath?: string }[],
    saveTo: undefined as string | undefined,
    headerListener: undefined as
      | ((d: { url: string; responseHeaders?: Record<string, string[]> }, cb: (r: { responseHeaders?: Record<string, string[]> }) => void) => void)
      | undefined,
    permissionRequest: undefined as PermissionRequestHandler | undefined,
    permissionCheck: undefined as PermissionCheckHandler | undefined,
  };
  const e = {
    app: {
      requestSingleInstanceLock: () => opts.lock ?? true,
      on: (ev: string, l: (...a: unknown[]) => void) => void appEvents.on(ev, l),
      whenReady: async () => {},
      getPath: () => opts.userData,
      quit: () => {
        rec.quits++;
        let prevented = false;
        appEvents.emit('before-quit', { preventDefault: () => void (prevented = true) });
        if (!prevented) rec.quitDone = true;
      },
      exit: (code?: number) => void (rec.exitCode = code ?? 0),
    },
    BrowserWindow: FakeWindow,
    Tray: FakeTray,
    // The menu is its template: tests read the labels back.
    Menu: { buildFromTemplate: (template: MenuItemLike[]) => template },
    nativeImage: {
      createFromPath: (p: string) => ({ path: p, isEmpty: () => !p || !fs.existsSync(p) }),
      createEmpty: () => ({ isEmpty: () => true }),
    },
    ipcMain: { handle: (ch: string, l: (event: IpcEventLike, ...args: unknown[]) => unknown) => void handlers.set(ch, l) },
    shell: { openExternal: async (url: string) => void rec.external.push(url) },
    dialog: {
      showErrorBox: (title: string, content: string) => void rec.errorBoxes.push({ title, content }),
      showSaveDialog: async (_w: unknown, o: { defaultPath?: string }) => {
        rec.saveDialogs.push(o);
        return rec.saveTo ? { canceled: false, filePath: rec.saveTo } : { canceled: true };
      },
      showOpenDialog: async () => ({ canceled: true, filePaths: [] }),
    },
    Notification: Object.assign(
      class {
        constructor(private readonly o: { title: string; body: string }) {}
        show() {
          rec.notifications.push(this.o);
        }
      },
      { isSupported: () => true },
    ),
    session: {
      defaultSession: {
        webRequest: { onHeadersReceived: (l: typeof rec.headerListener) => void (rec.headerListener = l) },
        setPermissionRequestHandler: (h: PermissionRequestHandler | null) => void (rec.permissionRequest = h ?? undefined),
        setPermissionCheckHandler: (h: PermissionCheckHandler | null) => void (rec.permissionCheck = h ?? undefined),
      },
    },
  };
  return {
    electron: e as unknown as ElectronLike,
    rec,
    appEvents,
    /** Calls an IPC handler as the page at `pageUrl` would. */
    invoke: async (channel: string, pageUrl: string, ...args: unknown[]) => {
      const h = handlers.get(channel);
      if (!h) throw new Error(`no handler for ${channel}`);
      return h({ senderFrame: { url: pageUrl } }, ...args);
    },
  };
}
