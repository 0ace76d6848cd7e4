// PUT /builds/:id(.json): the runner reports state and (optionally) the whole trace.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { ApiError, recordNotFound, tooLarge } from '../http/errors.ts';
import { pathId, readParams, str } from '../http/params.ts';
import { pickInfo } from '../store/runners.ts';
import { authenticateRunner } from './auth.ts';
import { buildDetails } from './build-details.ts';

export async function updateRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const { store } = ctx;
  app.put<{ Params: { id: string } }>(
    '/builds/:id',
    { schema: { tags: ['runner API v1'], summary: 'Update a running build: state success/failed, full trace' } },
    async (request, reply) => {
      const params = await readParams(request);
      const runner = authenticateRunner(ctx, params);
      store.runners.touch(runner, pickInfo(params.info));
      const id = pathId(request.params.id, true);
      // `Ci::Build.where(runner_id: current_runner.id).running.find(id)`: anything else is 404,
      // which is also how a runner learns that its build was canceled. `builds/-1` is the verify probe.
      const build = id === undefined ? undefined : store.builds.byId(id);
      if (!build || build.runner_id !== runner.id || build.status !== 'running') throw recordNotFound();

      if (params.trace !== undefined && params.trace !== null) {
        const trace = str(params.trace);
        if (trace === undefined) throw new ApiError(400, '400 (Bad request) "trace" is invalid');
        const result = store.traces.replace(build.id, Buffer.from(trace, 'utf8'));
        if (!result.ok) throw tooLarge();
      }
      const state = str(params.state);
      if (state === 'success' || state === 'failed') {
        store.db.tx(() => store.builds.finish(build.id, state));
        store.traces.release(build.id);
        const done = store.builds.byId(build.id)!;
        ctx.events.emit('build:finished', done);
        return reply.code(200).send(buildDetails(ctx, done, request.host));
      }
      return reply.code(200).send(buildDetails(ctx, build, request.host));
    },
  );
}
