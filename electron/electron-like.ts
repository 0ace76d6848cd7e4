// The part of Electron's main-process API the shell uses. main.ts hands the real module in; the unit
// tests hand in a fake, so everything but main.ts runs (and is tested) without the Electron binary.
import type { BrowserWindowConstructorOptions, Rectangle } from 'electron';

export interface WebContentsLike {
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' | 'allow' }): void;
  on(event: 'will-navigate' | 'will-redirect', listener: (event: { preventDefault(): void }, url: string) => void): void;
  reload(): void;
}

export interface BrowserWindowLike {
  webContents: WebContentsLike;
  loadURL(url: string): Promise<void>;
  once(event: 'ready-to-show', listener: () => void): void;
  on(event: 'close' | 'closed', listener: () => void): void;
  show(): void;
  focus(): void;
  restore(): void;
  maximize(): void;
  isMinimized(): boolean;
  isMaximized(): boolean;
  isDestroyed(): boolean;
  getNormalBounds(): Rectangle;
}

/** Electron's handler shapes, narrowed to what the shell looks at (it answers no to all). */
export type PermissionRequestHandler = (webContents: unknown, permission: string, callback: (granted: boolean) => void, details: unknown) => void;
export type PermissionCheckHandler = (webContents: unknown, permission: string, requestingOrigin: string, details: unknown) => boolean;

/** The tray (menu-bar) icon: electron/tray.ts. */
export interface TrayLike {
  setToolTip(text: string): void;
  setTitle(title: string): void;
  setContextMenu(menu: unknown): void;
  on(event: 'click', listener: () => void): void;
  destroy(): void;
}

export type MenuItemLike = { label: string; enabled?: boolean; click?: () => void } | { type: 'separator' };

export interface NativeImageLike {
  isEmpty(): boolean;
}

export interface IpcEventLike {
  senderFrame: { url: string } | null;
}

export interface ElectronLike {
  app: {
    requestSingleInstanceLock(): boolean;
    on(event: 'second-instance' | 'window-all-closed', listener: () => void): void;
    on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): void;
    whenReady(): Promise<void>;
    getPath(name: 'userData'): string;
    quit(): void;
    exit(code?: number): void;
  };
  BrowserWindow: new (options: BrowserWindowConstructorOptions) => BrowserWindowLike;
  ipcMain: {
    handle(channel: string, listener: (event: IpcEventLike, ...args: unknown[]) => unknown): void;
  };
  shell: { openExternal(url: string): Promise<void> };
  dialog: {
    showErrorBox(title: string, content: string): void;
    showSaveDialog(window: BrowserWindowLike, options: { defaultPath?: string; filters?: { name: string; extensions: string[] }[] }): Promise<{ canceled: boolean; filePath?: string }>;
    showOpenDialog(window: BrowserWindowLike, options: { properties: string[]; filters?: { name: string; extensions: string[] }[] }): Promise<{ canceled: boolean; filePaths: string[] }>;
  };
  Notification: { isSupported(): boolean } & (new (options: { title: string; body: string }) => { show(): void });
  session: {
    defaultSession: {
      webRequest: {
        onHeadersReceived(
          listener: (details: { url: string; responseHeaders?: Record<string, string[]> }, callback: (response: { responseHeaders?: Record<string, string[]> }) => void) => void,
        ): void;
      };
      setPermissionRequestHandler(handler: PermissionRequestHandler | null): void;
      setPermissionCheckHandler(handler: PermissionCheckHandler | null): void;
    };
  };
  screen?: { getDisplayMatching(rect: Rectangle): { workArea: Rectangle } };
  Tray: new (image: NativeImageLike) => TrayLike;
  Menu: { buildFromTemplate(template: MenuItemLike[]): unknown };
  nativeImage: { createFromPath(path: string): NativeImageLike; createEmpty(): NativeImageLike };
}
