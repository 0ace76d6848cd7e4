import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.ts';
import { IdParams, NewBuild, NewProject, ProjectView, BuildView, CreatedBuilds } from '../../contract/control.ts';
import { PageQuery } from '../../contract/jobs.ts';
import { notFound } from '../http/errors.ts';
import { LIST_PER_PAGE, PAGED, pageOf, paging } from '../http/paging.ts';
import { refuseNul } from '../http/stored-text.ts';
import { projectView, buildView } from './views.ts';
import { checkBuildBatch, checkDependencies, newBuildInput } from './new-build.ts';

const tags = ['control API'];

export async function projectsRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { projects, builds } = ctx.domain;
  app.post(
    '/projects',
    { schema: { tags, summary: 'Create a project (gives its runners_token and ci_token)', body: NewProject, response: { 201: ProjectView } } },
    async (request, reply) => {
      refuseNul('name', request.body.name);
      return reply.code(201).send(projectView(await projects.create(request.body)));
    },
  );
  app.get('/projects', { schema: { tags, summary: `List projects, oldest first; ${PAGED}`, querystring: PageQuery, response: { 200: Type.Array(ProjectView) } } }, async (request, reply) =>
    pageOf(reply, paging(request.query, LIST_PER_PAGE), await projects.list()).map(projectView),
  );
  app.get('/projects/:id', { schema: { tags, summary: 'One project', params: IdParams, response: { 200: ProjectView } } }, async (request) => {
    const p = await projects.byId(Number(request.params.id));
    if (!p) throw notFound('Project');
    return projectView(p);
  });
  app.post(
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
      const project = await projects.byId(Number(request.params.id));
      if (!project) throw notFound('Project');
      const input = newBuildInput(project.id, request.body);
      const count = request.body.count;
      checkBuildBatch(input, count ?? 1, ctx.config.maxBuildBatchBytes);
      await checkDependencies(builds, input);
      // All or none; build:pending ticks the runners' queue (runner-api/register.ts).
      const created = await builds.create(input, count ?? 1);
      if (count === undefined) return reply.code(201).send(await buildView(ctx, created[0]!));
      return reply.code(201).send({ count: created.length, ids: created.map((b) => b.id) });
    },
  );
}
