import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.ts';
import { IdParams, NewBuild, NewProject, ProjectView, BuildView } from '../contract/control.ts';
import { notFound } from '../http/errors.ts';
import { projectView, buildView } from './views.ts';
import { newBuildInput } from './new-build.ts';

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
        summary: 'Create a pending build (or `count` of them: the answer is then an array)',
        params: IdParams,
        body: NewBuild,
        response: { 201: Type.Union([BuildView, Type.Array(BuildView)]) },
      },
    },
    async (request, reply) => {
      const project = store.projects.byId(Number(request.params.id));
      if (!project) throw notFound('Project');
      const input = newBuildInput(project.id, request.body);
      const count = request.body.count;
      const created = store.db.tx(() => Array.from({ length: count ?? 1 }, () => store.builds.create(input)));
      ctx.runnerQueue.tick();
      for (const b of created) ctx.events.emit('build:pending', b);
      const views = created.map((b) => buildView(ctx, b));
      return reply.code(201).send(count === undefined ? views[0] : views);
    },
  );
}

type IdParamsT = { id: string };
