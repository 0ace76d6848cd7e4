// Threshold alerts: the ones firing and recently resolved, acknowledging one, and every alert
// after an id (the dashboard's chart markers poll with `since`).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Alert, AlertBoard, AlertBoardQuery, AlertIdParams, AlertsQuery } from '../../contract/app.ts';
import type { MonitorApi } from '../monitor/api.ts';
import { ApiError } from '../http/errors.ts';

const tags = ['app API'];

export async function alertRoutes(fastify: FastifyInstance, { monitor }: { monitor: MonitorApi }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/alerts',
    { schema: { tags, summary: 'Threshold alerts with an id above `since`, oldest first (at most 500)', querystring: AlertsQuery, response: { 200: Type.Array(Alert) } } },
    async (request) => {
      const q = request.query;
      return monitor.alerts.since(q.since ?? 0, 500, q.connection_id);
    },
  );
  app.get(
    '/alerts/board',
    { schema: { tags, summary: 'The alerts firing now and the most recently resolved', querystring: AlertBoardQuery, response: { 200: AlertBoard } } },
    async (request) => monitor.alerts.board(request.query.resolved ?? 50),
  );
  app.post(
    '/alerts/:id/acknowledge',
    {
      schema: {
        tags,
        summary: 'Acknowledge an alert: the banner stops showing it (a later crossing is a new alert); acknowledging again keeps the first time',
        params: AlertIdParams,
        response: { 200: Alert },
      },
    },
    async (request) => {
      const a = await monitor.alerts.acknowledge(request.params.id);
      if (!a) throw new ApiError(404, `404 Alert Not Found: no alert ${request.params.id}; resolved alerts past --alerts-keep-resolved are dropped, list the current ones with GET /api/app/alerts/board`);
      request.log.info(`alert ${a.id} acknowledged (${a.kind}${a.queue === null ? '' : ` of queue ${a.queue}`} on ${a.connection_name})`);
      return a;
    },
  );
}
