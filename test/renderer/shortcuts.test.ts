// Which "g + letter" shortcuts the views get: g d and g b always (the issue names them), and the
// first letter of any other view only when no other view shares it (Simulator and Settings both
// start with "s": neither gets one by its first letter, rather than one winning by menu order);
// a letter the registry declares comes before any first letter.
import { describe, expect, it } from 'vitest';
import { viewShortcuts } from '../../renderer/app/shortcuts.ts';
import { VIEWS, type ViewEntry } from '../../renderer/views/registry.ts';

const view = (id: string, label: string, hidden = false): ViewEntry => ({ id, label, component: () => null, hidden });

describe('view shortcuts', () => {
  it('gives g d and g b, and unshared first letters only', () => {
    const got = viewShortcuts([
      view('dashboard', 'Dashboard'),
      view('connections', 'Connections'),
      view('builds', 'Builds'),
      view('simulator', 'Simulator'),
      view('runner-console', 'Runner console'),
      view('settings', 'Settings'),
      view('dead', 'Dead jobs'), // "d" is the dashboard's
      view('projects', 'Projects'),
      view('bench', 'Chart bench', true), // hidden: no shortcut
    ]);
    expect(got).toEqual([
      { key: 'd', view: 'dashboard', label: 'Dashboard' },
      { key: 'b', view: 'builds', label: 'Builds' },
      { key: 'c', view: 'connections', label: 'Connections' },
      { key: 'r', view: 'runner-console', label: 'Runner console' },
      { key: 'p', view: 'projects', label: 'Projects' },
    ]);
  });

  it('drops a letter as soon as a second view takes it', () => {
    const got = viewShortcuts([view('dashboard', 'Dashboard'), view('runners', 'Runners'), view('runner-console', 'Runner console'), view('retries', 'Retries')]);
    expect(got.map((s) => s.key)).toEqual(['d']);
  });

  it('gives a view the letter it declares, which no first letter then takes', () => {
    const got = viewShortcuts([
      view('dashboard', 'Dashboard'),
      view('runners', 'Runners'),
      { ...view('runner-console', 'Runner console'), shortcut: 'o' },
      { ...view('simulator', 'Simulator'), shortcut: 'i' },
      { ...view('settings', 'Settings'), shortcut: 's' },
      view('search', 'Search'),
    ]);
    expect(got.map((s) => `${s.key} ${s.view}`)).toEqual(['d dashboard', 'o runner-console', 'i simulator', 's settings', 'r runners']);
  });

  it('gives Runners, Runner console, Simulator and Settings a letter each in the app', () => {
    const keys = Object.fromEntries(viewShortcuts(VIEWS).map((s) => [s.view, s.key]));
    expect(keys).toMatchObject({ dashboard: 'd', builds: 'b', runners: 'r', 'runner-console': 'o', simulator: 'i', settings: 's' });
    expect(new Set(Object.values(keys)).size).toBe(Object.keys(keys).length);
  });
});
