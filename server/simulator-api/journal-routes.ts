import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Curl, JournalPage, JournalQuery, SecretsQuery, type JournalEntry } from '../../contract/simulator.ts';
import { notFound } from '../http/errors.ts';
import { toCurl, toHar } from '../../simulator/journal-export.ts';
import { eitherSecret, redactEntry } from '../../simulator/journal-redact.ts';
import type { SimulatorRouteOpts } from './route-options.ts';

const tags = ['simulator API'];
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });

export async function journalRoutes(fastify: FastifyInstance, { simulator, ctx }: SimulatorRouteOpts) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { journal } = simulator;
  // Redacted when read, not when recorded, so that an explicit include_secrets still has them.
  const own = new Set([ctx.store.adminToken, ctx.store.registrationToken]);
  const shown = (entries: JournalEntry[], q: { include_secrets?: boolean }): JournalEntry[] => {
    if (q.include_secrets) return entries;
    const known = eitherSecret(journal.secrets(), own);
    return entries.map((e) => redactEntry(e, known));
  };
  app.get(
    '/journal',
    { schema: { tags, summary: 'Recorded HTTP exchanges of the virtual runners and the console, oldest first (filters; last `limit`)', querystring: JournalQuery, response: { 200: JournalPage } } },
    async (request) => ({ total: journal.size, dropped: journal.dropped, entries: shown(journal.query(request.query), request.query) }),
  );
  app.get(
    '/journal.har',
    { schema: { tags, summary: 'The (filtered) journal as HAR 1.2 (tokens [REDACTED] unless include_secrets)', querystring: JournalQuery } },
    async (request, reply) =>
      reply
        .type('application/json')
        .header('Content-Disposition', 'attachment; filename="jobscope-simulator.har"')
        .send(toHar(shown(journal.query({ ...request.query, limit: request.query.limit ?? 10000 }), request.query))),
  );
  app.get(
    '/journal/:id/curl',
    { schema: { tags, summary: 'One exchange as a curl command that sends the same request (tokens [REDACTED] unless include_secrets)', params: IdParams, querystring: SecretsQuery, response: { 200: Curl } } },
    async (request) => {
      const e = journal.get(request.params.id);
      if (!e) throw notFound('Journal entry');
      return { id: e.id, ...toCurl(shown([e], request.query)[0]!) };
    },
  );
  app.delete('/journal', { schema: { tags, summary: 'Empty the journal' } }, async (_request, reply) => {
    journal.clear();
    return reply.code(204).send();
  });
}
