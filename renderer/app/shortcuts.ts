// Keyboard shortcuts, as in GitHub and GitLab: "g" then a letter opens a view (g d dashboard,
// g b builds, the letter a view declares in the registry, and g + the first letter of any other view
// whose letter no other view shares), "/" focuses the current view's filter, "?" opens the help.
// None of them fires while typing in a field, with a modifier held, or while a dialog is open.
import { useEffect } from 'react';
import { navigate } from './route.ts';
import type { ViewEntry } from '../views/registry.ts';

export interface ViewShortcut {
  key: string; // the letter after "g"
  view: string;
  label: string;
}

/** Letters the issue names; they win over any other view starting with the same letter. */
const FIXED: Record<string, string> = { d: 'dashboard', b: 'builds' };

export function viewShortcuts(views: readonly ViewEntry[]): ViewShortcut[] {
  const shown = views.filter((v) => !v.hidden);
  // The letters, then the registry's declared ones: both win over a first letter.
  const fixed: Record<string, string> = { ...FIXED };
  for (const v of shown) if (v.shortcut && !(v.shortcut in fixed)) fixed[v.shortcut] = v.id;
  const out: ViewShortcut[] = [];
  for (const [key, id] of Object.entries(fixed)) {
    const v = shown.find((x) => x.id === id);
    if (v) out.push({ key, view: v.id, label: v.label });
  }
  const byLetter = new Map<string, ViewEntry[]>();
  for (const v of shown) {
    if (Object.values(fixed).includes(v.id)) continue;
    const letter = v.label.trim()[0]?.toLowerCase();
    if (!letter || !/[a-z]/.test(letter) || letter in fixed) continue;
    byLetter.set(letter, [...(byLetter.get(letter) ?? []), v]);
  }
  for (const [key, vs] of byLetter) if (vs.length === 1) out.push({ key, view: vs[0]!.id, label: vs[0]!.label });
  return out;
}

/** Where "/" puts the focus: the view's marked filter, else its search box, else its toolbar's first field. */
export const FILTER_SELECTORS = ['main [data-view-filter]', 'main input[type="search"]', 'main .toolbar input, main .toolbar select'];

export function focusViewFilter(): boolean {
  for (const sel of FILTER_SELECTORS) {
    const el = document.querySelector<HTMLElement>(sel);
    if (el) {
      el.focus();
      return true;
    }
  }
  return false;
}

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || !el.tagName) return false;
  return el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName);
}

/** A second key this long after "g" no longer counts as its pair. */
const SEQUENCE_MS = 1500;

export function useShortcuts(shortcuts: ViewShortcut[], onHelp: () => void): void {
  useEffect(() => {
    let gAt = 0;
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
      if (document.querySelector('dialog[open]')) return;
      const pendingG = gAt > 0 && e.timeStamp - gAt < SEQUENCE_MS;
      gAt = 0;
      if (pendingG) {
        const s = shortcuts.find((x) => x.key === e.key.toLowerCase());
        if (s) {
          e.preventDefault();
          navigate(`/${s.view}`);
        }
        return;
      }
      if (e.key === 'g') gAt = e.timeStamp || 1;
      else if (e.key === '/') {
        if (focusViewFilter()) e.preventDefault();
      } else if (e.key === '?') {
        e.preventDefault();
        onHelp();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [shortcuts, onHelp]);
}
