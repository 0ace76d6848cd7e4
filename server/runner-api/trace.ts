// PATCH /builds/:id/trace.txt: incremental trace. The body is raw bytes whatever the Content-Type
// (the runner sends text/plain, curl -d sends urlencoded), so this route has its own parser.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../context.ts';
import { ApiError, notFound, tooLarge } from '../http/errors.ts';
import { pathId, rubyToI } from '../http/params.ts';
import { rawBytesParser } from '../http/body-parsers.ts';
import { RunnerPathId } from './schemas.ts';
import { andThen } from '../domain/maybe-promise.ts';
import { checkedBuildOf } from './body-rules.ts';

export async function traceRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const builds = ctx.domain.builds;
  app.removeAllContentTypeParsers();
  // Our own raw parser (http/body-parsers.ts): fastify's would copy every part once more. Named for
  // the types runners send as well as '*': fastify caches the parser it found for a named type, but
  // looks the catch-all up anew (parsing the Content-Type) on every request.
  const raw = rawBytesParser(ctx.config.maxTraceBytes);
  app.addContentTypeParser(['text/plain', 'application/octet-stream'], raw);
  app.addContentTypeParser('*', raw);

  app.withTypeProvider<TypeBoxTypeProvider>().patch(
    '/builds/:id/trace.txt',
    {
      schema: {
        tags: ['runner API v1'],
        summary: 'Append a trace part at Content-Range start (202), or 416 with the current Range',
        params: RunnerPathId,
      },
    },
    // Synchronous on SQLite, on purpose (every part of every stream comes here): an async handler
    // costs a promise and a microtask turn per part for work that never waits; fastify sends what a
    // sync handler throws. On PostgreSQL the domain answers with promises and this returns one.
    (request, reply) => {
      // The token was checked in onRequest, before the body was read (body-rules.ts).
      const id = pathId(request.params.id);
      const contentRange = request.headers['content-range'];
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      // The 404 comes before the 400: look the build up first, append only with a Content-Range.
      if (typeof contentRange !== 'string') {
        return andThen(id === undefined ? undefined : builds.credentials(id), (cred) => {
          if (!cred) throw notFound();
          throw new ApiError(400, '400 Missing header Content-Range');
        });
      }
      // Only the start counts, parsed with Ruby's to_i as GitLab did ("bytes=abc" is 0).
      const start = rubyToI(contentRange.split('-')[0] ?? '');
      if (id === undefined) throw notFound();
      return andThen(builds.appendTrace(id, start, body, checkedBuildOf(request)), (appended) => {
        if (!appended) throw notFound();
        const { build, result } = appended;
        if (!result.ok && result.reason === 'too-large') throw tooLarge();
        if (!result.ok) throw new ApiError(416, '416 Range Not Satisfiable', { Range: `0-${result.length}` });
        // Sent here, nothing returned: a returned reply would be sent twice on the synchronous path.
        reply.code(202).header('build-status', build.status).header('range', `0-${result.length}`).send();
      });
    },
  );
}
