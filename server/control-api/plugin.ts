// The control API (/api/v3/sim): what tests, demos and the UI use to set up and watch the instance.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { requireAdmin } from '../auth/admin.ts';
import { usersRoutes } from './users.ts';
import { projectsRoutes } from './projects.ts';
import { buildsRoutes } from './builds.ts';
import { runnersRoutes } from './runners.ts';
import { jobsRoutes } from './jobs.ts';
import { jobSetsRoutes } from './job-sets.ts';

export async function controlApi(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const opts = { ctx }; // not the caller's options: they carry the prefix, which must not apply twice
  app.addHook('onRequest', async (request) => requireAdmin(ctx.store, request));
  await app.register(usersRoutes, opts);
  await app.register(projectsRoutes, opts);
  await app.register(buildsRoutes, opts);
  await app.register(runnersRoutes, opts);
  await app.register(jobsRoutes, opts);
  await app.register(jobSetsRoutes, opts);
}
