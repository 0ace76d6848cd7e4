import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.ts';
import { IdParams, RunnerPatch, RunnerView } from '../../contract/control.ts';
import { PageQuery } from '../../contract/jobs.ts';
import { notFound } from '../http/errors.ts';
import { LIST_PER_PAGE, PAGED, pageOf, paging } from '../http/paging.ts';
import { runnerView } from './views.ts';

const tags = ['control API'];

export async function runnersRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const runners = ctx.domain.runners;
  app.get(
    '/runners',
    {
      schema: {
        tags,
        // A fleet of 12,000 runners was 11 MB in one answer.
        summary: `List runners with their last contact, what they sent about themselves and how many builds they ran, oldest first; ${PAGED}`,
        querystring: PageQuery,
        response: { 200: Type.Array(RunnerView) },
      },
    },
    async (request, reply) => {
      const counts = await runners.buildCounts();
      return pageOf(reply, paging(request.query, LIST_PER_PAGE), await runners.list()).map((r) => runnerView(r, counts.get(r.id) ?? 0));
    },
  );
  app.patch(
    '/runners/:id',
    { schema: { tags, summary: 'Pause or resume a runner (a paused runner gets 404 on builds/register)', params: IdParams, body: RunnerPatch, response: { 200: RunnerView } } },
    async (request) => {
      const runner = await runners.setActive(Number(request.params.id), request.body.active);
      if (!runner) throw notFound('Runner');
      return runnerView(runner, await runners.buildCount(runner.id));
    },
  );
  app.delete('/runners/:id', { schema: { tags, summary: 'Remove a runner; the builds it is running are failed (its token is gone, so it could never finish them)', params: IdParams } }, async (request, reply) => {
    if (!(await runners.delete(Number(request.params.id)))) throw notFound('Runner');
    return reply.code(204).send();
  });
}
