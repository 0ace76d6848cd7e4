// The navigation: one entry per view, in menu order. Adding a view is one line here:
//   { id: 'my-view', label: 'My view', component: lazy(() => import('./my-view/MyView.tsx')) },
// The component receives the route (`#/<id>/<rest…>?query`). `hidden` keeps an entry routable
// but out of the menu (dev hooks).
import { lazy, type ComponentType, type LazyExoticComponent } from 'react';
import type { Route } from '../app/route.ts';

export interface ViewProps {
  route: Route;
}

export interface ViewEntry {
  id: string;
  label: string;
  component: ComponentType<ViewProps> | LazyExoticComponent<ComponentType<ViewProps>>;
  hidden?: boolean;
}

export const VIEWS: ViewEntry[] = [
  { id: 'dashboard', label: 'Dashboard', component: lazy(() => import('./dashboard/DashboardView.tsx')) },
  { id: 'queues', label: 'Queues', component: lazy(() => import('./jobs/QueuesView.tsx')) },
  // Reached from the Queues page's Queues · Retries · Dead tabs, as in Sidekiq Web.
  { id: 'retries', label: 'Retries', component: lazy(() => import('./jobs/RetriesView.tsx')), hidden: true },
  { id: 'dead', label: 'Dead', component: lazy(() => import('./jobs/DeadView.tsx')), hidden: true },
  { id: 'connections', label: 'Connections', component: lazy(() => import('./connections/ConnectionsView.tsx')) },
  { id: 'projects', label: 'Projects', component: lazy(() => import('./projects/ProjectsView.tsx')) },
  { id: 'builds', label: 'Builds', component: lazy(() => import('./builds/BuildsView.tsx')) },
  { id: 'runners', label: 'Runners', component: lazy(() => import('./runners/RunnersView.tsx')) },
  { id: 'simulator', label: 'Simulator', component: lazy(() => import('./simulator/SimulatorView.tsx')) },
  { id: 'runner-console', label: 'Runner console', component: lazy(() => import('./runner-console/RunnerConsoleView.tsx')) },
  { id: 'settings', label: 'Settings', component: lazy(() => import('./settings/SettingsView.tsx')) },
  { id: 'bench', label: 'Chart bench', component: lazy(() => import('./bench/ChartBenchView.tsx')), hidden: true },
];

export const DEFAULT_VIEW = 'dashboard';
