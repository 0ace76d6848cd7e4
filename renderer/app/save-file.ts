// Saving a blob: through the native save dialog in Electron, else the browser's download.
import { bridge } from '../api/bridge.ts';

export async function saveBlob(blob: Blob, filename: string): Promise<void> {
  const b = bridge();
  if (b?.saveFile) {
    await b.saveFile({ defaultPath: filename, data: new Uint8Array(await blob.arrayBuffer()) });
    return;
  }
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
