// The colour theme as stored, with no imports: theme.ts keeps and applies it, and the early entry
// (renderer/early.ts) applies the same before React has loaded, so the page the early chart is
// drawn on is already in the theme the app then shows.
export type ThemeChoice = 'light' | 'dark' | 'system';
/** localStorage: the theme chosen in this browser. */
export const THEME_KEY = 'jobscope.theme';

export const isThemeChoice = (v: unknown): v is ThemeChoice => v === 'light' || v === 'dark' || v === 'system';

export function storedTheme(): ThemeChoice {
  const v = localStorage.getItem(THEME_KEY);
  return isThemeChoice(v) ? v : 'system';
}

/** Sets the theme on <html>: the palette's CSS variables follow (styles.css). */
export function applyTheme(choice: ThemeChoice): void {
  const dark = choice === 'dark' || (choice === 'system' && window.matchMedia?.('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
}
