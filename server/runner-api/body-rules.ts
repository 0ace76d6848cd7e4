// How much of a runner request is read before its token is known. Fastify reads a body before any
// handler runs, so a route that authenticates in its handler has already buffered whatever was sent:
// with one 65 MiB limit for all, a few wrong-token requests took gigabytes. Here, per route:
// - register, poll, delete (token in the body, as the real runner sends it): a small limit;
// - trace PATCH (Build-Token header or ?token): authenticated in onRequest, before the body;
// - the final PUT builds/:id (runner token in the body, with the full trace): the large limit only
//   while the build is running; a big body for any other build gets the 404 the runner must hear
//   (GitLab's `running.find`) without being read;
// - artifact uploads stream to disk (see artifacts.ts) and are not counted in the body budget.
import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import type { BuildCredentials } from '../store/ports/build.ts';
import type { AppContext } from '../context.ts';
import { forbidden, notFound, recordNotFound } from '../http/errors.ts';
import { pathId, type Params } from '../http/params.ts';
import { buildTokenOf, credentialsMatch } from './auth.ts';
import { isPromise, type MaybePromise } from '../domain/maybe-promise.ts';

const SMALL_BODY = new Set(['/runners/register', '/runners/register.json', '/runners/delete', '/runners/delete.json', '/builds/register', '/builds/register.json', '/builds/:id/artifacts']);

/** Calls decide(v) now when v is a value (SQLite: no promise per trace part), else once it resolves; a rejection goes to done. */
function decideWith<T>(v: MaybePromise<T>, done: (err?: Error) => void, decide: (value: T) => Error | undefined): void {
  if (!isPromise(v)) return done(decide(v));
  v.then((value) => done(decide(value)), (err: Error) => done(err));
}

/**
 * The build a trace PATCH's token was checked against in onRequest, for its handler: on PostgreSQL a
 * second lookup of the same row would be another query for every part.
 */
const checkedBuilds = new WeakMap<FastifyRequest, BuildCredentials>();

export function checkedBuildOf(request: FastifyRequest): BuildCredentials | undefined {
  return checkedBuilds.get(request);
}

function addOnRequest(route: RouteOptions, hook: onRequestHookHandler): void {
  const existing = route.onRequest === undefined ? [] : [route.onRequest].flat();
  route.onRequest = [...existing, hook];
}

export function installRunnerBodyRules(app: FastifyInstance, ctx: AppContext): void {
  const builds = ctx.domain.builds;
  const small = ctx.config.maxRunnerBodyKib * 1024;

  const traceAuthFirst: onRequestHookHandler = (request, _reply, done) => {
    const id = pathId((request.params as { id?: string }).id);
    decideWith(id === undefined ? undefined : builds.traceCredentials(id), done, (build) => {
      if (!build) return notFound();
      if (!credentialsMatch(build, buildTokenOf(request, (request.query ?? {}) as Params))) return forbidden();
      checkedBuilds.set(request, build);
      return undefined;
    });
  };

  const updateBodyFits: onRequestHookHandler = (request, _reply, done) => {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (request.headers['transfer-encoding'] === undefined && declared <= small) return done();
    const id = pathId((request.params as { id?: string }).id, true);
    decideWith(id === undefined ? undefined : builds.byId(id), done, (build) =>
      build && build.status === 'running' && build.runner_id !== null ? undefined : recordNotFound(),
    );
  };

  app.addHook('onRoute', (route) => {
    const path = route.url.slice(route.prefix.length);
    const methods = [route.method].flat();
    if (path === '/builds/:id/artifacts' && methods.includes('POST')) {
      route.config = { ...route.config, streamsBody: true };
      return;
    }
    if (SMALL_BODY.has(path)) route.bodyLimit = small;
    else if (path === '/builds/:id/trace.txt') addOnRequest(route, traceAuthFirst);
    else if (path === '/builds/:id' && methods.includes('PUT')) addOnRequest(route, updateBodyFits);
  });
}
