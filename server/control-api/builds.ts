import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.ts';
import { BuildQuery, BuildView, IdParams } from '../../contract/control.ts';
import { ApiError, conflict, notFound } from '../http/errors.ts';
import { sendArtifact } from '../runner-api/artifacts.ts';
import { buildView } from './views.ts';

const tags = ['control API'];

export async function buildsRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const builds = ctx.domain.builds;
  const find = async (id: string) => {
    const b = await builds.byId(Number(id));
    if (!b) throw notFound('Build');
    return b;
  };

  app.get(
    '/builds',
    { schema: { tags, summary: 'List builds, newest first (filters: status, project_id, runner_id; paging: before_id, limit); artifacts without their file list', querystring: BuildQuery, response: { 200: Type.Array(BuildView) } } },
    async (request) => Promise.all((await builds.list(request.query)).map((b) => buildView(ctx, b))),
  );
  app.get('/builds/:id', { schema: { tags, summary: 'One build, with its artifacts’ file list', params: IdParams, response: { 200: BuildView } } }, async (request) =>
    buildView(ctx, await find(request.params.id), { files: true }),
  );

  app.get(
    '/builds/:id/trace',
    { schema: { tags, summary: 'The raw trace; with `Range: bytes=N-` a 206 from byte N (for live tailing)', params: IdParams } },
    async (request, reply) => {
      const build = await find(request.params.id);
      const range = request.headers.range;
      let start = 0;
      if (typeof range === 'string') {
        const m = /^bytes=(\d{1,15})-$/.exec(range.trim());
        if (!m) throw new ApiError(416, '416 Range Not Satisfiable - use "bytes=N-"', { 'Content-Range': `bytes */${await builds.traceLength(build.id)}` });
        start = Number(m[1]);
      }
      const { body, length } = await builds.readTrace(build.id, start);
      reply.header('Content-Type', 'text/plain; charset=utf-8').header('Build-Status', build.status).header('Accept-Ranges', 'bytes');
      if (typeof range === 'string') {
        if (start > length) throw new ApiError(416, '416 Range Not Satisfiable', { 'Content-Range': `bytes */${length}` });
        reply.code(206).header('Content-Range', `bytes ${start}-${Math.max(start, length - 1)}/${length}`);
      }
      reply.header('Content-Length', String(Math.max(0, length - start)));
      return reply.send(body ?? '');
    },
  );

  app.post(
    '/builds/:id/cancel',
    { schema: { tags, summary: 'Cancel a pending or running build; its runner then sees Build-Status: canceled', params: IdParams, response: { 200: BuildView } } },
    async (request) => {
      const build = await find(request.params.id);
      const done = await builds.cancel(build.id);
      if (!done) throw conflict(`build is ${build.status}, not pending or running`);
      return buildView(ctx, done);
    },
  );

  app.post(
    '/builds/:id/fail',
    {
      schema: {
        tags,
        summary:
          'Fail a running build, as GitLab’s stuck-build sweep drops one (e.g. its runner died mid-build); the runner, if it comes back, hears 404 on its update and Build-Status: failed on its trace. 409 unless running (cancel a pending one)',
        params: IdParams,
        response: { 200: BuildView },
      },
    },
    async (request) => {
      const build = await find(request.params.id);
      const done = await builds.finish(build.id, 'failed');
      if (!done) throw conflict(`build is ${build.status}, not running; only a running build can be failed (cancel a pending one)`);
      return buildView(ctx, done);
    },
  );

  app.post(
    '/builds/:id/retry',
    {
      schema: {
        tags,
        summary: 'Retry a finished build (success, failed, canceled), as GitLab does: a new pending build with its project, name, stage, ref, commands, variables, tags and options; the old one stays. 409 while it is pending or running',
        params: IdParams,
        response: { 201: BuildView },
      },
    },
    async (request, reply) => {
      const r = await builds.retry(Number(request.params.id));
      if (!r.ok && r.reason === 'not-found') throw notFound('Build');
      if (!r.ok) throw conflict(`build is ${r.status}; only a finished build (success, failed, canceled) can be retried`);
      return reply.code(201).send(await buildView(ctx, r.build));
    },
  );

  app.get(
    '/builds/:id/artifacts',
    { schema: { tags, summary: 'Download a build’s artifacts archive (admin; no build token needed)', params: IdParams } },
    async (request, reply) => sendArtifact(ctx, await find(request.params.id), reply),
  );
}
