// Electron's entry: the only file that loads 'electron'; everything else receives it (testable).
import * as electron from 'electron';
import '../hosts/v8-tuning.ts'; // first: V8 flags before SQLite's WebAssembly compiles
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDesktop } from './desktop.ts';
import type { ElectronLike } from './electron-like.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
void startDesktop(electron as unknown as ElectronLike, { preload: path.join(here, 'preload.cjs'), trayIcon: path.join(here, '..', 'dist', 'renderer', 'tray-icon.png') });
