// The preload bridge: the only native surface the renderer gets (window.jobscope). Types only;
// the renderer mirrors this shape structurally (it may not import electron/), so keep it stable.
export interface BackendInfo {
  /** e.g. http://127.0.0.1:41234 — the embedded server, bound to loopback on a free port. */
  url: string;
  /** Admin PRIVATE-TOKEN for that server. */
  token: string;
}

export interface FileFilter {
  name: string;
  extensions: string[];
}

export interface JobscopeBridge {
  getBackend(): Promise<BackendInfo>;
  /** A native notification (alerts). */
  notify(title: string, body: string): Promise<void>;
  /** Save dialog, then writes `data`; `defaultPath` is a file name suggestion only. */
  saveFile(opts: { defaultPath: string; data: ArrayBuffer | Uint8Array; filters?: FileFilter[] }): Promise<{ saved: boolean; path?: string }>;
  /** Open dialog; the chosen file's name and bytes, or null when cancelled. */
  openFile(opts?: { filters?: FileFilter[] }): Promise<{ name: string; data: Uint8Array } | null>;
}

export const IPC = {
  backend: 'jobscope:backend',
  notify: 'jobscope:notify',
  saveFile: 'jobscope:save-file',
  openFile: 'jobscope:open-file',
} as const;
