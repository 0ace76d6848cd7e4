// The Electron preload bridge as the renderer sees it: optional, since the same renderer runs in a
// plain browser (browser mode, `serve`). It mirrors electron/bridge-types.ts (JobscopeBridge)
// structurally, because the renderer may not import electron/ code (lint-enforced). Every member
// is optional so an older or newer preload degrades to browser behaviour instead of throwing.
export interface RendererBridge {
  backendUrl?: string | (() => string | Promise<string>);
  token?: string | (() => string | Promise<string>);
  getBackend?: () => Promise<{ url: string; token: string }> | { url: string; token: string };
  notify?: (title: string, body: string) => unknown;
  saveFile?: (opts: { defaultPath: string; data: ArrayBuffer | Uint8Array; filters?: { name: string; extensions: string[] }[] }) => Promise<{ saved: boolean; path?: string }> | unknown;
  openFile?: (opts?: { filters?: { name: string; extensions: string[] }[] }) => Promise<{ name: string; data: Uint8Array } | null>;
}

declare global {
  interface Window {
    jobscope?: RendererBridge;
  }
}

export function bridge(): RendererBridge | undefined {
  return typeof window !== 'undefined' ? window.jobscope : undefined;
}

async function valueOf(v: string | (() => string | Promise<string>) | undefined): Promise<string | undefined> {
  return typeof v === 'function' ? await v() : v;
}

/** Backend URL and token from the preload, when running inside Electron. */
export async function bridgeBackend(): Promise<{ url: string; token: string } | undefined> {
  const b = bridge();
  if (!b) return undefined;
  if (b.getBackend) return await b.getBackend();
  const url = await valueOf(b.backendUrl);
  const token = await valueOf(b.token);
  return url && token ? { url, token } : undefined;
}

/** A native notification in Electron; false when there is no bridge (the caller shows a banner). */
export function nativeNotify(title: string, body: string): boolean {
  const b = bridge();
  if (!b?.notify) return false;
  try {
    void Promise.resolve(b.notify(title, body)).catch(() => undefined); // a failed notification must not break polling
    return true;
  } catch {
    return false;
  }
}
