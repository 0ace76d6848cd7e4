// Light, dark or follow the system; kept in localStorage. The palette lives in CSS variables
// (styles.css), so switching is one attribute on <html> and charts read the same variables.
import { useEffect, useState } from 'react';

export type ThemeChoice = 'light' | 'dark' | 'system';
const KEY = 'jobscope.theme';

function resolved(choice: ThemeChoice): 'light' | 'dark' {
  if (choice !== 'system') return choice;
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function useTheme(): [ThemeChoice, (t: ThemeChoice) => void] {
  const [choice, setChoice] = useState<ThemeChoice>(() => {
    const v = localStorage.getItem(KEY);
    return v === 'light' || v === 'dark' || v === 'system' ? v : 'system';
  });
  useEffect(() => {
    const apply = () => (document.documentElement.dataset.theme = resolved(choice));
    apply();
    localStorage.setItem(KEY, choice);
    const mq = window.matchMedia?.('(prefers-color-scheme: dark)');
    mq?.addEventListener('change', apply);
    return () => mq?.removeEventListener('change', apply);
  }, [choice]);
  return [choice, setChoice];
}
