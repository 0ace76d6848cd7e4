// What every view receives. Its own module so a view does not import the registry that lazily
// imports it.
import type { Route } from '../app/route.ts';

export interface ViewProps {
  route: Route;
}
