import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.ts';
import { IdParams, NewBuild, NewProject, ProjectView, BuildView, CreatedBuilds } from '../contract/control.ts';
import { notFound } from '../http/errors.ts';
import { projectView, buildView } from './views.ts';
import { checkBuildBatch, newBuildInput } from './new-build.ts';

const tags = ['control API'];

export async function projectsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const { store } = ctx;
  app.post<{ Body: NewProject }>(
    '/projects',
    { schema: { tags, summary: 'Create a project (gives its runners_token and ci_token)', body: NewProject, response: { 201: ProjectView } } },
    async (request, reply) => reply.code(201).send(projectView(store.projects.create(request.body))),
  );
  app.get('/projects', { schema: { tags, summary: 'List projects', response: { 200: Type.Array(ProjectView) } } }, async () =>
    store.projects.list().map(projectView),
  );
  app.get<{ Params: IdParamsT }>('/projects/:id', { schema: { tags, summary: 'One project', params: IdParams, response: { 200: ProjectView } } }, async (request) => {
    const p = store.projects.byId(Number(request.params.id));
    if (!p) throw notFound('Project');
    return projectView(p);
  });
  app.post<{ Params: IdParamsT; Body: NewBuild }>(
    '/projects/:id/builds',
    {
      schema: {
        tags,
        summary: 'Create a pending build (the answer is the build), or `count` of them, all or none (the answer is then their ids)',
        params: IdParams,
        body: NewBuild,
        response: { 201: Type.Union([BuildView, CreatedBuilds]) },
      },
    },
    async (request, reply) => {
      const project = store.projects.byId(Number(request.params.id));
      if (!project) throw notFound('Project');
      const input = newBuildInput(project.id, request.body);
      const count = request.body.count;
      checkBuildBatch(input, count ?? 1, ctx.config.maxBuildBatchBytes);
      // One transaction: a failure part-way (disk full) stores none, so a retry cannot duplicate.
      const created = store.db.tx(() => Array.from({ length: count ?? 1 }, () => store.builds.create(input)));
      ctx.runnerQueue.tick();
      for (const b of created) ctx.events.emit('build:pending', b);
      if (count === undefined) return reply.code(201).send(buildView(ctx, created[0]!));
      return reply.code(201).send({ count: created.length, ids: created.map((b) => b.id) });
    },
  );
}

type IdParamsT = { id: string };
