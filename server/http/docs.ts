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

export async function registerDocsUi(app: FastifyInstance): Promise<void> {
  await app.register(swaggerUi, { routePrefix: '/api/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
}
