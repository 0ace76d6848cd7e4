// Body parsing for every API. JSON with an empty body counts as no params (Grape did the same);
// prototype-poisoned JSON is refused with a 400; any other content type is read as raw bytes so
// no client can provoke a 415/500 by sending an odd header. The trace route replaces these with
// its own raw parser (see runner-api/trace.ts).
import type { FastifyInstance } from 'fastify';
import { badRequest } from './errors.ts';
import { MAX_JSON_DEPTH, jsonNestedDeeperThan } from './json-depth.ts';

export function installBodyParsers(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, {});
    json(request, body as string, (err, parsed) => {
      if (err) return done(err);
      // Refused here, for every route: deeper JSON overflows the stack when it is stored or answered.
      if (jsonNestedDeeperThan(body as string, parsed, MAX_JSON_DEPTH)) return done(badRequest(`the JSON body is nested more than ${MAX_JSON_DEPTH} levels deep`));
      done(null, parsed);
    });
  });
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}
