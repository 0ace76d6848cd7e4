// The tray (menu-bar) status: the worst queue of the watched connections, refreshed every few
// seconds from the backend's app API over HTTP, the same answers the dashboard reads. A click
// opens the window; the menu also says the worst queue (Linux app indicators show no tooltip).
import type { ConnectionView, CurrentSample } from '../contract/app.ts';
import { describeWorst, worstQueue, type ConnectionQueues, type TrayText } from '../hosts/worst-queue.ts';
import type { ElectronLike, TrayLike } from './electron-like.ts';

export const TRAY_INTERVAL_MS = 5000;

export interface TrayOptions {
  backend: () => { url: string; token: string };
  /** A PNG; an empty image when it cannot be read (the macOS title still shows). */
  icon: string;
  intervalMs?: number;
  onOpen: () => void;
  onQuit: () => void;
}

async function getJson<T>(url: string, token: string, stop?: AbortSignal): Promise<T | undefined> {
  const signal = stop ? AbortSignal.any([stop, AbortSignal.timeout(4000)]) : AbortSignal.timeout(4000);
  const res = await fetch(url, { headers: { 'PRIVATE-TOKEN': token }, signal });
  if (res.status === 404) return undefined; // a connection with no sample yet
  if (!res.ok) throw new Error(`the backend answered ${res.status}`);
  return (await res.json()) as T;
}

/** The tray's wording now: the worst queue over every enabled connection's latest sample. */
export async function readTrayText(url: string, token: string, stop?: AbortSignal): Promise<TrayText> {
  try {
    const connections = (await getJson<ConnectionView[]>(`${url}/api/app/connections`, token, stop)) ?? [];
    const samples: ConnectionQueues[] = [];
    for (const c of connections.filter((c) => c.enabled)) {
      const cur = await getJson<CurrentSample>(`${url}/api/app/connections/${encodeURIComponent(c.id)}/current`, token, stop);
      if (cur) samples.push({ connection: c.name, queues: cur.queues });
    }
    return describeWorst(worstQueue(samples));
  } catch (err) {
    return describeWorst(null, `backend not answering (${(err as Error).message})`);
  }
}

export function startTray(e: ElectronLike, opts: TrayOptions): { tray: TrayLike; refresh(): Promise<void>; stop(): void } {
  let image = e.nativeImage.createFromPath(opts.icon);
  if (image.isEmpty()) image = e.nativeImage.createEmpty();
  const tray = new e.Tray(image);
  const show = (t: TrayText) => {
    tray.setToolTip(t.tooltip);
    tray.setTitle(t.title);
    tray.setContextMenu(
      e.Menu.buildFromTemplate([
        { label: t.menuLine, enabled: false },
        { type: 'separator' },
        { label: 'Open Jobscope', click: opts.onOpen },
        { label: 'Quit Jobscope', click: opts.onQuit },
      ]),
    );
  };
  show({ tooltip: 'Jobscope', title: '', menuLine: 'Waiting for the first sample…' });
  tray.on('click', opts.onOpen);

  // Stopping (on quit) also cancels a read in flight, so the server's close never waits for the tray.
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  const refresh = () =>
    (running ??= (async () => {
      if (stopping.signal.aborted) return;
      const { url, token } = opts.backend();
      const text = await readTrayText(url, token, stopping.signal);
      if (!stopping.signal.aborted) show(text);
    })().finally(() => (running = undefined)));
  const timer = setInterval(() => void refresh(), opts.intervalMs ?? TRAY_INTERVAL_MS);
  timer.unref?.();
  void refresh();
  return {
    tray,
    refresh,
    stop() {
      stopping.abort();
      clearInterval(timer);
      tray.destroy();
    },
  };
}
