import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { Curl, JournalPage, JournalQuery } from '../../contract/simulator.ts';
import { notFound } from '../../http/errors.ts';
import { toCurl, toHar } from '../journal-export.ts';
import type { SimRouteOpts } from './plugin.ts';

const tags = ['simulator'];
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });

export async function journalRoutes(app: FastifyInstance, { sim }: SimRouteOpts) {
  const { journal } = sim;
  app.get<{ Querystring: JournalQuery }>(
    '/journal',
    { schema: { tags, summary: 'Recorded HTTP exchanges of the virtual runners and the console, oldest first (filters; last `limit`)', querystring: JournalQuery, response: { 200: JournalPage } } },
    async (request) => ({ total: journal.size, dropped: journal.dropped, entries: journal.query(request.query) }),
  );
  app.get<{ Querystring: JournalQuery }>(
    '/journal.har',
    { schema: { tags, summary: 'The (filtered) journal as HAR 1.2', querystring: JournalQuery } },
    async (request, reply) =>
      reply
        .type('application/json')
        .header('Content-Disposition', 'attachment; filename="jobscope-simulator.har"')
        .send(toHar(journal.query({ ...request.query, limit: request.query.limit ?? 10000 }))),
  );
  app.get<{ Params: { id: number } }>(
    '/journal/:id/curl',
    { schema: { tags, summary: 'One exchange as a curl command that sends the same request', params: IdParams, response: { 200: Curl } } },
    async (request) => {
      const e = journal.get(request.params.id);
      if (!e) throw notFound('Journal entry');
      return { id: e.id, ...toCurl(e) };
    },
  );
  app.delete('/journal', { schema: { tags, summary: 'Empty the journal' } }, async (_request, reply) => {
    journal.clear();
    return reply.code(204).send();
  });
}
