import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.ts';
import { NewUser, UserView, InstanceView } from '../../contract/control.ts';
import { PageQuery } from '../../contract/jobs.ts';
import { conflict } from '../http/errors.ts';
import { LIST_PER_PAGE, PAGED, pageOf, paging } from '../http/paging.ts';
import { GITLAB_REVISION, GITLAB_VERSION } from '../runner-api/build-details.ts';

const tags = ['control API'];

export async function usersRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store, config } = ctx;
  const users = ctx.domain.users;
  app.post(
    '/users',
    { schema: { tags, summary: 'Create a user (admin or not) with a private token', body: NewUser, response: { 201: UserView } } },
    async (request, reply) => {
      const u = await users.create(request.body.username, request.body.admin === true);
      if (!u) throw conflict('username is taken');
      return reply.code(201).send({ id: u.id, username: u.username, admin: u.admin, private_token: u.private_token });
    },
  );
  app.get('/users', { schema: { tags, summary: `List users, oldest first; ${PAGED}`, querystring: PageQuery, response: { 200: Type.Array(UserView) } } }, async (request, reply) =>
    pageOf(reply, paging(request.query, LIST_PER_PAGE), await users.list()).map((u) => ({ id: u.id, username: u.username, admin: u.admin, private_token: u.private_token })),
  );
  app.get('/instance', { schema: { tags, summary: 'Instance facts, including the runner registration token', response: { 200: InstanceView } } }, async () => ({
    version: GITLAB_VERSION,
    revision: GITLAB_REVISION,
    runners_registration_token: store.registrationToken,
    started_at: new Date(ctx.startedAt).toISOString(),
    data_dir: config.dataDir,
    limits: { max_artifact_bytes: config.maxArtifactBytes, max_trace_bytes: config.maxTraceBytes },
  }));
}
