// Read-only peeks into a sidekiq connection's Redis: a queue's jobs and the retry, scheduled and
// dead sets, paged, and the Redis's own facts (INFO). Only GETs: nothing here deletes or retries on
// someone's production Redis.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { PeekPage, PeekQuery, PeekSet } from '../../contract/sidekiq.ts';
import type { MonitorApi } from '../monitor/api.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { connectionOr404 } from './connections.ts';
import { peekQueue, peekSet } from '../sidekiq/peek.ts';
import { readRedisFacts } from '../sidekiq/redis-facts.ts';
import { RedisFacts } from '../../contract/redis-facts.ts';
import type { Redis } from 'ioredis';
import type { Connection } from '../monitor/connections.ts';

const tags = ['app API'];
const Id = Type.String({ minLength: 1, maxLength: 64 });

/** Runs a read on a sidekiq connection's client; a frozen Redis is a 503 with Retry-After, other Redis trouble a 502 naming the host, never the password. */
export function sidekiqRead<T>(monitor: MonitorApi, c: Connection, fn: (r: Redis, namespace: string) => Promise<T>): Promise<T> {
  const source = monitor.sidekiq.of(c);
  return source.forRequest((r) => fn(r, source.target.namespace), (sentence) => new ApiError(502, `502 Bad Gateway - ${sentence}`));
}

export async function sidekiqPeekRoutes(fastify: FastifyInstance, { monitor }: { monitor: MonitorApi }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  async function read<T>(id: string, fn: (r: Redis, namespace: string) => Promise<T>): Promise<T> {
    const c = await connectionOr404(monitor, id);
    if (c.kind !== 'sidekiq') throw badRequest(`connection ${c.id} is not a sidekiq connection: peeks read a Sidekiq's Redis`);
    return sidekiqRead(monitor, c, fn);
  }

  app.get(
    '/connections/:id/sidekiq/queues/:queue',
    {
      schema: {
        tags,
        summary: "One page of a sidekiq connection's queue, newest first (as Sidekiq Web); read-only",
        params: Type.Object({ id: Id, queue: Type.String({ minLength: 1, maxLength: 512 }) }),
        querystring: PeekQuery,
        response: { 200: PeekPage },
      },
    },
    async (request) => read(request.params.id, (r, ns) => peekQueue(r, ns, request.params.queue, request.query.page ?? 1, request.query.per_page ?? 25)),
  );

  app.get(
    '/connections/:id/sidekiq/sets/:set',
    {
      schema: {
        tags,
        summary: 'One page of the retry or scheduled set (next first) or the dead set (newest first) of a sidekiq connection; read-only',
        params: Type.Object({ id: Id, set: PeekSet }),
        querystring: PeekQuery,
        response: { 200: PeekPage },
      },
    },
    async (request) => read(request.params.id, (r, ns) => peekSet(r, ns, request.params.set, request.query.page ?? 1, request.query.per_page ?? 25)),
  );

  app.get(
    '/connections/:id/sidekiq/redis',
    {
      schema: {
        tags,
        summary: "A sidekiq connection's Redis: version, memory used and peak, connected clients, uptime (INFO); `refused` when its ACL forbids INFO",
        params: Type.Object({ id: Id }),
        response: { 200: RedisFacts },
      },
    },
    async (request) => read(request.params.id, (r) => readRedisFacts(r)),
  );
}
