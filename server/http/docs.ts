// OpenAPI generated from the route schemas, served at /api/docs (browsable) and /api/docs/json.
//
// Built on the first docs request, not at start-up: @fastify/swagger, @fastify/swagger-ui, yaml and
// @fastify/static's routes for Swagger UI's files were ~100 of the ~440 modules a server loaded and
// about a third of its start CPU (bench/startup.ts, --cpu-prof), for pages most runs never open. The
// server registers only the docs' paths and keeps every route's options as fastify announces them;
// the first docs request builds a small fastify instance of its own with the two plugins, the same
// options, and those routes registered again (with a handler never called: only their schemas,
// URLs and methods make the document), then hands it the request. The document lists the same
// routes in the same order as when the plugins were registered on the server itself.
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import { installErrorHandling } from './errors.ts';

const PREFIX = '/api/docs';
/** Swagger UI's paths under the prefix (@fastify/swagger-ui's routes: the page, the spec, its files). */
const DOCS_PATHS = ['/', '/json', '/yaml', '/static/*'];

const SWAGGER_OPTIONS = {
  openapi: {
    info: {
      title: 'Jobscope API',
      version: '0.1.0',
      description:
        'GitLab-compatible CI runner API v1 and job-queue metrics API, plus Jobscope’s control and app APIs. ' +
        'Control, metrics and app APIs take PRIVATE-TOKEN (header) or private_token (query).',
    },
    components: {
      securitySchemes: {
        privateToken: { type: 'apiKey' as const, in: 'header' as const, name: 'PRIVATE-TOKEN' },
        buildToken: { type: 'apiKey' as const, in: 'header' as const, name: 'BUILD-TOKEN' },
      },
    },
  },
};

/**
 * What Swagger UI needs and nothing more: its scripts are files of this server (no inline script,
 * no eval), it sets inline styles, its icons are data: URIs, and it fetches the spec and "Try it out"
 * requests from this origin. No framing: a framed page could be clicked into requests with the token.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self'",
  "font-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

/** The route options @fastify/swagger reads to describe a route. */
type Described = Pick<RouteOptions, 'method' | 'url' | 'schema' | 'config' | 'constraints'> & { links?: unknown };

/**
 * Registers the docs' paths on `app` (call it before the APIs, as the plugins were) and records every
 * route registered after it. The docs instance is built once, on the first docs request, and closed
 * with the server.
 */
export function registerLazyDocs(app: FastifyInstance, config: { lingeringCloseMs: number }): void {
  const described: Described[] = [];
  app.addHook('onRoute', (r) => {
    // HEAD routes are the GETs' own (fastify adds them); the docs instance adds them again, and
    // @fastify/swagger leaves them out of the document by default.
    if (r.method === 'HEAD' || (r.config as { docsPath?: boolean } | undefined)?.docsPath) return;
    described.push({ method: r.method, url: r.url, schema: r.schema, config: r.config, constraints: r.constraints, links: (r as { links?: unknown }).links });
  });
  let docs: Promise<FastifyInstance> | undefined;
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    docs ??= buildDocsApp(app, described, config);
    const ready = await docs.catch((err: unknown) => {
      docs = undefined; // a failed build (a package missing) is tried again by the next request
      throw err;
    });
    // The server's own hooks (host check, timeouts) have run; the docs instance answers on the same socket.
    reply.hijack();
    ready.routing(request.raw, reply.raw);
  };
  app.register(
    async (scope) => {
      for (const url of DOCS_PATHS) scope.get(url, { schema: { hide: true }, config: { docsPath: true } as object }, forward);
    },
    { prefix: PREFIX },
  );
  app.addHook('onClose', async () => {
    const built = docs;
    docs = undefined;
    if (built) await (await built.catch(() => undefined))?.close();
  });
}

async function buildDocsApp(app: FastifyInstance, described: Described[], config: { lingeringCloseMs: number }): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui')]);
  const docs = Fastify({ loggerInstance: app.log, logController: new LogController({ disableRequestLogging: true }) });
  // Answers as the server does: its 404 and error bodies, its Content-Type for JSON.
  installErrorHandling(docs, config);
  // The described routes are never called: their schemas need no validator or serializer.
  docs.setValidatorCompiler(() => () => true);
  docs.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await docs.register(swagger, SWAGGER_OPTIONS);
  // A scope of its own, so the hook covers every docs route (the page, the spec, the static files
  // the plugin serves through @fastify/static, which its uiHooks miss) and no other route.
  await docs.register(async (scope) => {
    scope.addHook('onRequest', async (_request, reply) => {
      reply.header('content-security-policy', DOCS_CSP).header('x-frame-options', 'DENY').header('x-content-type-options', 'nosniff');
    });
    await scope.register(swaggerUi, { routePrefix: PREFIX, uiConfig: { docExpansion: 'list', deepLinking: true, validatorUrl: null } });
  });
  const never = async (_request: FastifyRequest, reply: FastifyReply) => reply.callNotFound();
  for (const r of described) docs.route({ ...r, handler: never } as RouteOptions);
  await docs.ready();
  return docs;
}
