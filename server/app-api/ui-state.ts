// GET/PUT /api/app/ui-state: the UI's remembered state (range, filters, selected connection, theme,
// tour seen), kept in the data dir so it survives restarts and a browser-mode port change. The
// values are opaque to the server; what it guards is the size (--max-ui-state-kib).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../context.ts';
import { UiState, UiStateUpdate } from '../../contract/ui-state.ts';
import { ApiError } from '../http/errors.ts';
import { isoTime } from '../util/times.ts';

const tags = ['app API'];

export async function uiStateRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const maxBytes = ctx.config.maxUiStateKib * 1024;

  app.get('/ui-state', { schema: { tags, summary: 'The UI state saved from the UI (empty values when none)', response: { 200: UiState } } }, async () => {
    const saved = ctx.store.uiState.read();
    return { values: saved?.values ?? {}, updated_at: saved?.savedAt ? isoTime(saved.savedAt) : null };
  });

  app.put(
    '/ui-state',
    {
      // The body is read only up to the limit (plus room for the envelope), not up to the server-wide one.
      bodyLimit: maxBytes + 1024,
      schema: { tags, summary: 'Replace the saved UI state (at most --max-ui-state-kib)', body: UiStateUpdate, response: { 200: UiState } },
    },
    async (request) => {
      const { values } = request.body;
      const size = Buffer.byteLength(JSON.stringify(values));
      if (size > maxBytes) {
        throw new ApiError(413, `413 Request Entity Too Large - the UI state is ${size} bytes; at most ${maxBytes} (--max-ui-state-kib ${ctx.config.maxUiStateKib})`);
      }
      const now = Date.now();
      ctx.store.uiState.write(values, now);
      return { values, updated_at: isoTime(now) };
    },
  );
}
