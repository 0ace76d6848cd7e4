// What every simulator API route file gets from plugin.ts; its own file so the route files and the
// plugin that registers them do not import each other.
import type { AppContext } from '../context.ts';
import type { SimulatorService } from './service.ts';

export interface SimulatorRouteOpts {
  ctx: AppContext;
  simulator: SimulatorService;
}
