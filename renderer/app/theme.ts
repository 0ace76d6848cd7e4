// Light, dark or follow the system; kept in localStorage. The palette lives in CSS variables
// (styles.css), so switching is one attribute on <html> and charts read the same variables.
// One store for the whole page: every picker (header, Settings) shows the same choice. The choice
// is also remembered with the view state on the backend (ui-state.ts), so a browser-mode restart
// on another port (an empty localStorage) keeps it; localStorage paints the first frame.
import { useSyncExternalStore } from 'react';
import { getUiState, onUiStateChange, setUiState } from './ui-state.ts';
import { THEME_KEY, applyTheme, isThemeChoice, storedTheme, type ThemeChoice } from './theme-choice.ts';

export type { ThemeChoice };

let choice: ThemeChoice = storedTheme();
const listeners = new Set<() => void>();

const apply = () => applyTheme(choice);

function choose(next: ThemeChoice): void {
  if (next === choice) return;
  choice = next;
  localStorage.setItem(THEME_KEY, next);
  apply();
  for (const l of listeners) l();
}

function setTheme(next: ThemeChoice): void {
  choose(next);
  setUiState('theme', next);
}

// The backend's copy arrived (or another change came in): follow its theme when it has one.
onUiStateChange(() => {
  const remembered = getUiState('theme');
  if (isThemeChoice(remembered)) choose(remembered);
});

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
