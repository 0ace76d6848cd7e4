// Choosing a file: the Electron bridge's native open dialog when the preload offers one, else the
// caller's <input type="file">. D's RendererBridge type predates openFile, so it is widened here.
import { bridge, type RendererBridge } from '../../api/bridge.ts';

type WithOpen = RendererBridge & {
  openFile?: (opts?: { filters?: { name: string; extensions: string[] }[] }) => Promise<{ name: string; data: Uint8Array } | null>;
};

export function nativeOpenAvailable(): boolean {
  return typeof (bridge() as WithOpen | undefined)?.openFile === 'function';
}

export async function nativeOpen(filters?: { name: string; extensions: string[] }[]): Promise<{ name: string; data: Uint8Array } | null> {
  const b = bridge() as WithOpen | undefined;
  if (!b?.openFile) return null;
  return b.openFile({ filters });
}
