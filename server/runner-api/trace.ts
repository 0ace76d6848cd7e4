// PATCH /builds/:id/trace.txt: incremental trace. The body is raw bytes whatever the Content-Type
// (the runner sends text/plain, curl -d sends urlencoded), so this route has its own parser.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { ApiError, notFound, tooLarge } from '../http/errors.ts';
import { pathId, rubyToI, type Params } from '../http/params.ts';

export async function traceRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const { store } = ctx;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ctx.config.maxTraceBytes }, (_request, body, done) => done(null, body));

  app.patch<{ Params: { id: string }; Querystring: Params }>(
    '/builds/:id/trace.txt',
    { schema: { tags: ['runner API v1'], summary: 'Append a trace part at Content-Range start (202), or 416 with the current Range' } },
    // Synchronous on purpose (every part of every stream comes here): an async handler costs a promise
    // and a microtask turn per part for work that never waits; fastify sends what a sync handler throws.
    (request, reply) => {
      // The token was checked in onRequest, before the body was read (body-rules.ts).
      const id = pathId(request.params.id);
      const build = id === undefined ? undefined : store.builds.credentials(id);
      if (!build) throw notFound();
      const contentRange = request.headers['content-range'];
      if (typeof contentRange !== 'string') throw new ApiError(400, '400 Missing header Content-Range');
      // Only the start counts, parsed with Ruby's to_i as GitLab did ("bytes=abc" is 0).
      const start = rubyToI(contentRange.split('-')[0] ?? '');
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const result = store.traces.append(build.id, start, body);
      if (!result.ok && result.reason === 'too-large') throw tooLarge();
      if (!result.ok) throw new ApiError(416, '416 Range Not Satisfiable', { Range: `0-${result.length}` });
      reply.code(202).headers({ 'Build-Status': build.status, Range: `0-${result.length}` }).send();
    },
  );
}
