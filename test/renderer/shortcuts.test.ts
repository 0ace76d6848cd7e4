// Which "g + letter" shortcuts the views get: g d and g b always (the issue names them), and the
// first letter of any other view only when no other view shares it (Simulator and Settings both
// start with "s": neither gets one, rather than one winning by menu order).
import { describe, expect, it } from 'vitest';
import { viewShortcuts } from '../../renderer/app/shortcuts.ts';
import type { ViewEntry } from '../../renderer/views/registry.ts';

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
});
