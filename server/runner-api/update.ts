// PUT /builds/:id(.json): the runner reports state and (optionally) the whole trace.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../context.ts';
import { ApiError, recordNotFound, tooLarge } from '../http/errors.ts';
import { pathId, readParams, str } from '../http/params.ts';
import { pickInfo } from '../domain/runners.ts';
import { refuseNul } from '../http/stored-text.ts';
import { authenticateRunner } from './auth.ts';
import { buildDetails } from './build-details.ts';
import { RunnerPathId } from './schemas.ts';

export async function updateRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  app.withTypeProvider<TypeBoxTypeProvider>().put(
    '/builds/:id',
    { schema: { tags: ['runner API v1'], summary: 'Update a running build: state success/failed, full trace', params: RunnerPathId } },
    async (request, reply) => {
      const params = await readParams(request);
      const runner = await authenticateRunner(ctx, params);
      const info = pickInfo(params.info);
      // Where GitLab stored `info` (authenticate_runner!, before the build lookup): a 400 before the 404. The trace is a file: any byte goes.
      refuseNul('info', info);
      // Sent but not text: a 400, though only once the build is found (a 404 comes first).
      const trace = params.trace === undefined || params.trace === null ? undefined : (str(params.trace) ?? null);
      // `Ci::Build.where(runner_id: current_runner.id).running.find(id)`: anything else is 404,
      // which is also how a runner learns that its build was canceled. `builds/-1` is the verify probe.
      const result = await ctx.domain.builds.update(runner, pathId(request.params.id, true), { info, trace, state: str(params.state) });
      if (!result.ok && result.reason === 'trace-invalid') throw new ApiError(400, '400 (Bad request) "trace" is invalid');
      if (!result.ok) throw result.reason === 'not-found' ? recordNotFound() : tooLarge();
      return reply.code(200).send(await buildDetails(ctx, result.build, request.host));
    },
  );
}
