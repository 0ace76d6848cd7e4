// Body parsing for every API. JSON with an empty body counts as no params (Grape did the same);
// prototype-poisoned JSON is refused with a 400; any other content type is read as raw bytes so
// no client can provoke a 415/500 by sending an odd header. The trace route replaces these with
// its own raw parser (see runner-api/trace.ts).
import type { FastifyInstance } from 'fastify';

export function installBodyParsers(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, {});
    json(request, body as string, done);
  });
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}
