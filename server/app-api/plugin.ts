// The app API (/api/app): what the dashboard needs beyond the GitLab-compatible APIs. Admin only.
// It serves the monitor the app created and runs as a service (sampling whether or not a window is open).
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { requireAdmin } from '../auth/admin.ts';
import type { MonitorApi } from '../monitor/api.ts';
import { statusRoutes } from './status.ts';
import { connectionRoutes } from './connections.ts';
import { historyRoutes } from './history.ts';
import { alertRoutes } from './alerts.ts';
import { uiStateRoutes } from './ui-state.ts';
import { sidekiqPeekRoutes } from './sidekiq-peek.ts';
import { jobDetailRoutes } from './job-detail.ts';
import { busyRoutes } from './busy.ts';
import { jobActionRoutes } from './job-actions.ts';

export async function appApi(app: FastifyInstance, { ctx, monitor }: { ctx: AppContext; monitor: MonitorApi }) {
  const opts = { ctx, monitor }; // not the caller's options: they carry the prefix
  app.addHook('onRequest', async (request) => requireAdmin(ctx.store, request));
  await app.register(statusRoutes, opts);
  await app.register(connectionRoutes, opts);
  await app.register(historyRoutes, opts);
  await app.register(alertRoutes, opts);
  await app.register(uiStateRoutes, opts);
  await app.register(sidekiqPeekRoutes, opts);
  await app.register(jobDetailRoutes, opts);
  await app.register(busyRoutes, opts);
  await app.register(jobActionRoutes, opts);
}
