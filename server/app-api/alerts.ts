// GET /api/app/alerts?since=<id>: alerts newer than the last one the client has seen (it polls).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Alert, AlertsQuery } from '../../contract/app.ts';
import type { MonitorApi } from '../monitor/api.ts';

export async function alertRoutes(fastify: FastifyInstance, { monitor }: { monitor: MonitorApi }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/alerts',
    { schema: { tags: ['app API'], summary: 'Threshold alerts with an id above `since`, oldest first (at most 500)', querystring: AlertsQuery, response: { 200: Type.Array(Alert) } } },
    async (request) => {
      const q = request.query;
      return monitor.alerts.since(q.since ?? 0, 500, q.connection_id);
    },
  );
}
