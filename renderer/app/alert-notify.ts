// Alerts reaching the user outside the page: the desktop app's native notification through the
// preload bridge, else the browser's Notification once the user allowed it (asked only from a
// button: a prompt nobody asked for is refused by browsers and people alike). Each firing notifies
// once, remembered in localStorage so a reload does not repeat it.
import type { Alert } from '../api/client.ts';
import { bridge, nativeNotify } from '../api/bridge.ts';
import { ALERTS_NOTIFIED_KEY } from './storage-keys.ts';

/** The remembered view state's key of the "notify me" switch (app/ui-state.ts). */
export const NOTIFY_SETTING = 'alerts.notify';
/** Ids remembered: far more than alerts fire between two looks at the page. */
const REMEMBERED = 500;

export type NotifyChannel = 'desktop' | 'granted' | 'default' | 'denied' | 'unsupported';

/** How a notification would reach the user here. */
export function notifyChannel(): NotifyChannel {
  if (bridge()?.notify) return 'desktop';
  if (typeof Notification === 'undefined') return 'unsupported';
  return Notification.permission;
}

export async function askNotifyPermission(): Promise<NotifyChannel> {
  if (typeof Notification !== 'undefined' && Notification.permission === 'default') await Notification.requestPermission();
  return notifyChannel();
}

export function showNotification(title: string, body: string, tag: string): void {
  if (nativeNotify(title, body)) return;
  if (notifyChannel() !== 'granted') return;
  try {
    new Notification(title, { body, tag });
  } catch {
    /* some browsers allow notifications only from a service worker: the banner still shows it */
  }
}

function remembered(): number[] {
  try {
    const v: unknown = JSON.parse(localStorage.getItem(ALERTS_NOTIFIED_KEY) ?? '[]');
    return Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : [];
  } catch {
    return [];
  }
}

/** What this page has seen, should localStorage refuse to keep it. */
const seenHere = new Set<number>();

/** Of these alerts, the ones not notified of before in this browser; they count as notified from now on. */
export function firstSeen(alerts: Alert[]): Alert[] {
  const seen = remembered();
  const known = new Set([...seen, ...seenHere]);
  const fresh = alerts.filter((a) => !known.has(a.id));
  for (const a of fresh) seenHere.add(a.id);
  if (fresh.length) {
    try {
      localStorage.setItem(ALERTS_NOTIFIED_KEY, JSON.stringify([...seen, ...fresh.map((a) => a.id)].slice(-REMEMBERED)));
    } catch {
      /* full or disabled: notifications may repeat after a reload, never more than once per page */
    }
  }
  return fresh;
}
