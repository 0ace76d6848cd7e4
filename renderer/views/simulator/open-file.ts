// Choosing a file through the Electron bridge's native open dialog, when the preload offers one;
// the callers keep an <input type="file"> for browser mode.
import { bridge } from '../../api/bridge.ts';

export function nativeOpenAvailable(): boolean {
  return typeof bridge()?.openFile === 'function';
}

export async function nativeOpen(filters?: { name: string; extensions: string[] }[]): Promise<{ name: string; data: Uint8Array } | null> {
  const open = bridge()?.openFile;
  return open ? open({ filters }) : null;
}
