import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.ts';
import { IdParams, RunnerPatch, RunnerView } from '../contract/control.ts';
import { notFound } from '../http/errors.ts';
import { runnerView } from './views.ts';

const tags = ['control API'];
type IdP = { id: string };

export async function runnersRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const { store } = ctx;
  app.get('/runners', { schema: { tags, summary: 'List runners with their last contact', response: { 200: Type.Array(RunnerView) } } }, async () =>
    store.runners.list().map(runnerView),
  );
  app.patch<{ Params: IdP; Body: { active: boolean } }>(
    '/runners/:id',
    { schema: { tags, summary: 'Pause or resume a runner (a paused runner gets 404 on builds/register)', params: IdParams, body: RunnerPatch, response: { 200: RunnerView } } },
    async (request) => {
      const id = Number(request.params.id);
      if (!store.runners.setActive(id, request.body.active)) throw notFound('Runner');
      return runnerView(store.runners.byId(id)!);
    },
  );
  app.delete<{ Params: IdP }>('/runners/:id', { schema: { tags, summary: 'Remove a runner', params: IdParams } }, async (request, reply) => {
    if (!store.runners.delete(Number(request.params.id))) throw notFound('Runner');
    return reply.code(204).send();
  });
}
