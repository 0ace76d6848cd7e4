// OpenAPI generated from the route schemas, served at /api/docs (browsable) and /api/docs/json.
//
// @fastify/swagger, @fastify/swagger-ui and what they pull in (yaml, the JSON
// schema resolver: ~100 CommonJS modules) load with the first docs request, not at start-up: every
// server start paid for them (each test's child server, each app launch) and most never open the
// docs. At start we only record what @fastify/swagger's own hooks would have recorded (every route's
// options and every plugin scope, for its shared schemas); the first docs request hands the records
// to the real plugin, so the document is the one it always generated, built by the same code.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';

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
        privateToken: { type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' },
        buildToken: { type: 'apiKey', in: 'header', name: 'BUILD-TOKEN' },
      },
    },
  },
};

const PREFIX = '/api/docs';
const UI_OPTIONS = { routePrefix: PREFIX, uiConfig: { docExpansion: 'list', deepLinking: true, validatorUrl: null } };

type SwaggerFn = (opts?: { yaml?: boolean }) => unknown;
type Hook = (arg: unknown) => unknown;

/** What @fastify/swagger's onRoute and onRegister hooks see, kept for it until the first docs request. */
interface Records {
  routes: RouteOptions[];
  scopes: FastifyInstance[];
  ready: boolean;
  options: object;
  swagger?: Promise<SwaggerFn>;
}

const records = new WeakMap<FastifyInstance, Records>();

/** `options`: @fastify/swagger's (Jobscope's document unless a test passes its own). */
export async function registerDocs(app: FastifyInstance, options: object = SWAGGER_OPTIONS): Promise<void> {
  const rec: Records = { routes: [], scopes: [], ready: false, options };
  records.set(app, rec);
  // Where the plugin, registered here, would have added its hooks: on the root, before the routes.
  app.addHook('onRoute', (route) => void rec.routes.push(route));
  app.addHook('onRegister', (scope) => void rec.scopes.push(scope));
  app.addHook('onReady', async () => {
    rec.ready = true;
  });
}

/**
 * Runs @fastify/swagger (its dynamic mode, as registered before) against a stand-in instance that
 * replays the records: its hooks get the same route options and scopes in the same order, its
 * onReady runs now (the server is ready), and its `swagger` decorator is what it returns.
 */
async function loadSwagger(app: FastifyInstance, rec: Records): Promise<SwaggerFn> {
  const mod = (await import('@fastify/swagger')) as unknown as { default: (instance: unknown, opts: unknown, done: (err?: Error) => void) => void };
  let onReady: Hook | undefined;
  let swagger: SwaggerFn | undefined;
  const standIn = {
    addHook(name: string, fn: Hook) {
      if (name === 'onRoute') for (const r of rec.routes) fn(r);
      else if (name === 'onRegister') for (const s of rec.scopes) void fn(s);
      else if (name === 'onReady') onReady = fn;
      else throw new Error(`docs.ts: @fastify/swagger added a ${name} hook the stand-in does not replay`);
      return standIn;
    },
    decorate(name: string, value: SwaggerFn) {
      if (name === 'swagger') swagger = value;
      return standIn;
    },
    getSchemas: () => app.getSchemas(),
  };
  await new Promise<void>((resolve, reject) => mod.default(standIn, { ...rec.options }, (err) => (err ? reject(err) : resolve())));
  await new Promise<void>((resolve, reject) => (onReady ? void onReady((err?: Error) => (err ? reject(err) : resolve())) : resolve()));
  // Its shared-schema map is filled: the scopes can go (the plugin drops them at ready too).
  rec.scopes.length = 0;
  if (!swagger) throw new Error('docs.ts: @fastify/swagger decorated no `swagger`');
  return swagger;
}

/** @fastify/swagger's `swagger()` for this server (the document as /api/docs/json serves it), loaded on first use. */
export async function openApiGenerator(app: FastifyInstance): Promise<SwaggerFn> {
  const rec = records.get(app);
  if (!rec) throw new Error('docs.ts: registerDocs was not called on this instance');
  if (!rec.ready) throw new Error('docs.ts: the OpenAPI document is built once the server is ready');
  const load = (rec.swagger ??= loadSwagger(app, rec));
  // A failed load (a broken install) is tried again by the next request, not remembered.
  load.catch(() => {
    if (rec.swagger === load) rec.swagger = undefined;
  });
  return load;
}

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

// Headers of the inner answer that belong to its own (injected) connection, not to ours.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length']);

/**
 * @fastify/swagger-ui on an instance of its own, built with the first docs request and never
 * listening, under the same prefix: its routes (page, initializer, static files, json, yaml) answer
 * the requests forwarded to it, and its `swagger` is the main server's generator. That comes from a
 * plugin named as @fastify/swagger, which swagger-ui declares as its dependency.
 */
async function buildUi(app: FastifyInstance): Promise<FastifyInstance> {
  const [{ default: Fastify }, { default: swaggerUi }, swagger] = await Promise.all([import('fastify'), import('@fastify/swagger-ui'), openApiGenerator(app)]);
  const ui = Fastify({ logger: false });
  const provider = Object.assign(
    (instance: FastifyInstance, _opts: unknown, done: () => void) => {
      instance.decorate('swagger', swagger as never);
      done();
    },
    { [Symbol.for('skip-override')]: true, [Symbol.for('plugin-meta')]: { name: '@fastify/swagger' } },
  );
  await ui.register(provider);
  await ui.register(swaggerUi, UI_OPTIONS as never);
  await ui.ready();
  return ui;
}

export async function registerDocsUi(app: FastifyInstance): Promise<void> {
  let ui: Promise<FastifyInstance> | undefined;
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    const load = (ui ??= buildUi(app));
    load.catch(() => {
      if (ui === load) ui = undefined;
    });
    const inner = await load;
    // No request headers: the UI's answers never depended on them as it served them (its static
    // files answered a conditional request in full), and a docs request carries the admin token.
    const res = await inner.inject({ method: 'GET', url: request.url });
    // A path under /api/docs the UI does not serve gets this server's own 404.
    if (res.statusCode === 404) return reply.callNotFound();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) reply.header(name, value);
    }
    reply.code(res.statusCode);
    // An empty Buffer would be sent typed application/octet-stream (the redirect has no type).
    return res.rawPayload.length > 0 ? reply.send(res.rawPayload) : reply.send();
  };
  // A scope of its own, so the hook covers every docs route and no other route.
  await app.register(async (docs) => {
    docs.addHook('onRequest', async (_request, reply) => {
      reply.header('content-security-policy', DOCS_CSP).header('x-frame-options', 'DENY').header('x-content-type-options', 'nosniff');
    });
    // The inner instance holds no socket, but its plugins' onClose hooks run with the server's.
    docs.addHook('onClose', async () => {
      await (await ui?.catch(() => undefined))?.close();
    });
    docs.get(PREFIX, { schema: { hide: true } }, forward);
    docs.get(`${PREFIX}/*`, { schema: { hide: true } }, forward);
  });
}
