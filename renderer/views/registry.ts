// The navigation: one entry per view, in menu order. Adding a view is one line here:
//   { id: 'my-view', label: 'My view', component: lazyView(() => import('./my-view/MyView.tsx')) },
// The component receives the route (`#/<id>/<rest…>?query`). `hidden` keeps an entry routable
// but out of the menu (dev hooks). `shortcut` names the letter of "g <letter>" where the label's
// first letter is shared (Runners and Runner console, Simulator and Settings).
import type { ComponentType } from 'react';
import { lazyView } from './lazy-view.ts';
import type { ViewProps } from './view-props.ts';

export interface ViewEntry {
  id: string;
  label: string;
  /** preload: load the view's module before it is first shown (lazyView). */
  component: ComponentType<ViewProps> & { preload?: () => Promise<unknown> };
  hidden?: boolean;
  /** The letter after "g" that opens it, where its first letter is another view's too (shortcuts.ts). */
  shortcut?: string;
}

export const VIEWS: ViewEntry[] = [
  { id: 'dashboard', label: 'Dashboard', component: lazyView(() => import('./dashboard/DashboardView.tsx')) },
  { id: 'queues', label: 'Queues', component: lazyView(() => import('./jobs/QueuesView.tsx')) },
  // Reached from the Queues page's Queues · Retries · Dead tabs, as in Sidekiq Web.
  { id: 'retries', label: 'Retries', component: lazyView(() => import('./jobs/RetriesView.tsx')), hidden: true },
  { id: 'dead', label: 'Dead', component: lazyView(() => import('./jobs/DeadView.tsx')), hidden: true },
  { id: 'connections', label: 'Connections', component: lazyView(() => import('./connections/ConnectionsView.tsx')) },
  { id: 'projects', label: 'Projects', component: lazyView(() => import('./projects/ProjectsView.tsx')) },
  { id: 'builds', label: 'Builds', component: lazyView(() => import('./builds/BuildsView.tsx')) },
  { id: 'runners', label: 'Runners', component: lazyView(() => import('./runners/RunnersView.tsx')), shortcut: 'r' },
  { id: 'simulator', label: 'Simulator', component: lazyView(() => import('./simulator/SimulatorView.tsx')), shortcut: 'i' },
  { id: 'runner-console', label: 'Runner console', component: lazyView(() => import('./runner-console/RunnerConsoleView.tsx')), shortcut: 'o' },
  { id: 'settings', label: 'Settings', component: lazyView(() => import('./settings/SettingsView.tsx')), shortcut: 's' },
  { id: 'bench', label: 'Chart bench', component: lazyView(() => import('./bench/ChartBenchView.tsx')), hidden: true },
  // A Sidekiq's scheduled set, beside Retries and Dead in the Queues page's tabs.
  { id: 'scheduled', label: 'Scheduled', component: lazyView(() => import('./jobs/ScheduledView.tsx')), hidden: true },
];

export const DEFAULT_VIEW = 'dashboard';

/** The entry a route shows: its view, or the default one for an unknown or empty route. */
export function viewFor(id: string): ViewEntry {
  return VIEWS.find((v) => v.id === id) ?? VIEWS.find((v) => v.id === DEFAULT_VIEW)!;
}
