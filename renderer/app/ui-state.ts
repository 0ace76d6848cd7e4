// Remembered view state (range, filters, selected connection, theme, tour seen): one small JSON
// document kept by the backend in its data dir, so it survives restarts, and in browser mode a
// restart on another port (another origin, whose localStorage starts empty). localStorage holds a
// copy for the first paint; once the backend's copy arrives it wins, unless this page changed
// something after the backend last saved (then this page's copy is sent up).
import { useCallback, useEffect, useSyncExternalStore } from 'react';
import type { Client } from '../api/client.ts';
import { uiStateApi } from '../api/ui-state.ts';
import { UI_STATE_KEY } from './storage-keys.ts';

const LOCAL_KEY = UI_STATE_KEY;
/** Changes are sent at most this often (typing in a filter sends one PUT, not one per key). */
const PUSH_DELAY_MS = 300;

interface LocalCopy {
  values: Record<string, unknown>;
  /** Epoch ms of this page's last change; 0 when it only holds what the backend sent. */
  changedAt: number;
}

function readLocal(): LocalCopy {
  try {
    const raw = JSON.parse(localStorage.getItem(LOCAL_KEY) ?? 'null') as Partial<LocalCopy> | null;
    if (raw && raw.values && typeof raw.values === 'object' && !Array.isArray(raw.values)) {
      return { values: raw.values, changedAt: typeof raw.changedAt === 'number' ? raw.changedAt : 0 };
    }
  } catch {
    /* unreadable: start empty */
  }
  return { values: {}, changedAt: 0 };
}

let local = readLocal();
/** Whether the backend's copy has been read (the tour waits for it: it may say "seen"). */
let loaded = false;
let client: Client | null = null;
let pushTimer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<() => void>();

function notify(): void {
  for (const l of listeners) l();
}

function saveLocal(): void {
  try {
    localStorage.setItem(LOCAL_KEY, JSON.stringify(local));
  } catch {
    /* full or disabled: the backend still keeps it */
  }
}

function push(): void {
  clearTimeout(pushTimer);
  pushTimer = undefined;
  const c = client;
  if (!c || !loaded) return;
  uiStateApi.put(c, local.values).then(
    () => {
      if (pushTimer === undefined) {
        local = { ...local, changedAt: 0 };
        saveLocal();
      }
    },
    (err: unknown) => console.warn('Jobscope: the view state was not saved on the backend:', err),
  );
}

export function getUiState(key: string): unknown {
  return local.values[key];
}

export function setUiState(key: string, value: unknown): void {
  if (Object.is(local.values[key], value)) return;
  local = { values: { ...local.values, [key]: value }, changedAt: Date.now() };
  saveLocal();
  notify();
  clearTimeout(pushTimer);
  pushTimer = setTimeout(push, PUSH_DELAY_MS);
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Runs `fn` whenever the remembered state changes (the theme follows the backend's copy this way). */
export function onUiStateChange(fn: () => void): () => void {
  return subscribe(fn);
}

/**
 * A remembered value: like useState, kept across reloads and restarts. `check` says whether a
 * stored value is usable (an older version, another tab or a hand edit may have left anything).
 */
export function useUiState<T>(key: string, fallback: T, check: (v: unknown) => v is T): [T, (v: T) => void] {
  const raw = useSyncExternalStore(subscribe, () => local.values[key]);
  const set = useCallback((v: T) => setUiState(key, v), [key]);
  return [check(raw) ? raw : fallback, set];
}

/** Whether the backend's copy has arrived (false while signed out or before its answer). */
export function useUiStateLoaded(): boolean {
  return useSyncExternalStore(subscribe, () => loaded);
}

/** Reads the backend's copy for this signed-in client, then keeps it up to date. */
export function useUiStateSync(c: Client): void {
  useEffect(() => {
    let cancelled = false;
    client = c;
    uiStateApi.get(c).then(
      (remote) => {
        if (cancelled) return;
        const remoteAt = remote.updated_at ? Date.parse(remote.updated_at) : 0;
        loaded = true;
        if (local.changedAt > remoteAt) {
          // Changed here after the backend last saved: this page's values win, but over the
          // backend's, not instead of them. A page with an empty localStorage (a new profile, or
          // browser mode on another port) that changes the theme before this answer arrives holds
          // only the theme; sent alone it erased every other remembered value ("tour seen" among
          // them, so the tour came back on the next load).
          local = { values: { ...remote.values, ...local.values }, changedAt: local.changedAt };
          saveLocal();
          push();
        } else {
          local = { values: remote.values, changedAt: 0 };
          saveLocal();
        }
        notify();
      },
      (err: unknown) => {
        if (cancelled) return;
        console.warn('Jobscope: the remembered view state could not be read:', err);
        loaded = true; // go on with the local copy
        notify();
      },
    );
    // A reload right after a change must not lose it.
    const flush = () => pushTimer !== undefined && push();
    window.addEventListener('pagehide', flush);
    return () => {
      cancelled = true;
      window.removeEventListener('pagehide', flush);
      if (client === c) client = null;
      loaded = false;
    };
  }, [c]);
}

export const isString = (v: unknown): v is string => typeof v === 'string';
export const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
