// Window size and position, kept in the data dir between runs. A saved position that no longer lies
// on any screen (a monitor was unplugged) is dropped, so the window never opens out of sight.
import fs from 'node:fs';
import path from 'node:path';
import type { Rectangle } from 'electron';

export interface WindowState {
  bounds: Rectangle;
  maximized: boolean;
}

export const DEFAULT_STATE: WindowState = { bounds: { x: NaN, y: NaN, width: 1280, height: 820 }, maximized: false };

export function stateFile(dataDir: string): string {
  return path.join(dataDir, 'window-state.json');
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export function loadWindowState(dataDir: string, onScreen?: (b: Rectangle) => boolean): WindowState {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(stateFile(dataDir), 'utf8'));
  } catch {
    return DEFAULT_STATE;
  }
  const s = raw as { bounds?: Partial<Rectangle>; maximized?: unknown };
  const b = s.bounds ?? {};
  if (!isNum(b.width) || !isNum(b.height) || b.width < 400 || b.height < 300) return DEFAULT_STATE;
  const bounds: Rectangle = { x: isNum(b.x) ? b.x : NaN, y: isNum(b.y) ? b.y : NaN, width: Math.min(b.width, 10000), height: Math.min(b.height, 10000) };
  if (isNum(bounds.x) && isNum(bounds.y) && onScreen && !onScreen(bounds)) {
    bounds.x = NaN;
    bounds.y = NaN;
  }
  return { bounds, maximized: s.maximized === true };
}

export function saveWindowState(dataDir: string, state: WindowState): void {
  const file = stateFile(dataDir);
  const tmp = `${file}.tmp`;
  // 0600 like every file of the data dir (server/util/private-files.ts).
  fs.writeFileSync(tmp, JSON.stringify(state), { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** Whether a rectangle overlaps the work area of the display it best matches. */
export function overlaps(a: Rectangle, b: Rectangle): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}
