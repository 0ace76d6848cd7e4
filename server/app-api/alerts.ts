// GET /api/app/alerts?since=<id>: alerts newer than the last one the client has seen (it polls).
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { Alert, AlertsQuery } from '../contract/app.ts';
import type { Monitor } from '../monitor/monitor.ts';

export async function alertRoutes(app: FastifyInstance, { monitor }: { monitor: Monitor }) {
  app.get(
    '/alerts',
    { schema: { tags: ['app API'], summary: 'Threshold alerts with an id above `since`, oldest first (at most 500)', querystring: AlertsQuery, response: { 200: Type.Array(Alert) } } },
    async (request) => {
      const q = request.query as AlertsQuery;
      return monitor.alerts.since(q.since ?? 0, 500, q.connection_id);
    },
  );
}
