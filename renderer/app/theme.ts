// Light, dark or follow the system; kept in localStorage. The palette lives in CSS variables
// (styles.css), so switching is one attribute on <html> and charts read the same variables.
// One store for the whole page: every picker (header, Settings) shows the same choice.
import { useSyncExternalStore } from 'react';

export type ThemeChoice = 'light' | 'dark' | 'system';
const KEY = 'jobscope.theme';

function resolved(choice: ThemeChoice): 'light' | 'dark' {
  if (choice !== 'system') return choice;
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

function stored(): ThemeChoice {
  const v = localStorage.getItem(KEY);
  return v === 'light' || v === 'dark' || v === 'system' ? v : 'system';
}

let choice: ThemeChoice = stored();
const listeners = new Set<() => void>();

function apply(): void {
  document.documentElement.dataset.theme = resolved(choice);
}

function setTheme(next: ThemeChoice): void {
  choice = next;
  localStorage.setItem(KEY, next);
  apply();
  for (const l of listeners) l();
}

apply();
// "System" follows the OS switching between light and dark while the page is open.
window.matchMedia?.('(prefers-color-scheme: dark)').addEventListener('change', apply);

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useTheme(): [ThemeChoice, (t: ThemeChoice) => void] {
  return [useSyncExternalStore(subscribe, () => choice), setTheme];
}
