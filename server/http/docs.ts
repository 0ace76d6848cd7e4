// OpenAPI generated from the route schemas, served at /api/docs (browsable) and /api/docs/json.
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
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
  });
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

export async function registerDocsUi(app: FastifyInstance): Promise<void> {
  // A scope of its own, so the hook covers every docs route (the page, the spec, the static files
  // the plugin serves through @fastify/static, which its uiHooks miss) and no other route.
  await app.register(async (docs) => {
    docs.addHook('onRequest', async (_request, reply) => {
      reply.header('content-security-policy', DOCS_CSP).header('x-frame-options', 'DENY').header('x-content-type-options', 'nosniff');
    });
    await docs.register(swaggerUi, { routePrefix: '/api/docs', uiConfig: { docExpansion: 'list', deepLinking: true, validatorUrl: null } });
  });
}
