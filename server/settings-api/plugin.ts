// /api/app/settings and /api/app/logs: the Settings view's backend (the saved settings file through
// saved-settings.ts, validated by the config schema in server/config.ts).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../context.ts';
import { requireAdmin } from '../auth/admin.ts';
import { ConfigError } from '../config.ts';
import { ApiError } from '../http/errors.ts';
import { tailLog } from '../http/log-file.ts';
import { LogQuery, LogView, ResetRequest, ResetAnswer, SettingsUpdate, SettingsView } from '../../contract/settings.ts';
import { settingsView, withSaved, writeSettings } from './saved-settings.ts';
import { unreachableServices } from './reachable.ts';

const tags = ['app API'];
const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const RANK: Record<string, number> = { debug: 20, info: 30, warn: 40, error: 50 };

export async function settingsApi(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', async (request) => requireAdmin(ctx.store, request));
  for (const w of ctx.config.settingsWarnings ?? []) app.log.warn(w);

  app.get('/settings', { schema: { tags, summary: 'Every savable setting: default, in force, saved for the next start', response: { 200: SettingsView } } }, async () =>
    settingsView(ctx.config),
  );

  app.put(
    '/settings',
    {
      schema: { tags, summary: 'Save settings to <data dir>/settings.json (applied at the next start; flags and env still win). A Redis URL is tried first (connect and PING): 400 if it cannot be reached, unless confirm_unreachable', body: SettingsUpdate, response: { 200: SettingsView } },
      // The validator's array coercion would save ["1"] as "1": a value must be a scalar as sent.
      preValidation: async (request) => {
        const values = (request.body as { values?: unknown } | undefined)?.values;
        if (values && typeof values === 'object') {
          for (const [name, v] of Object.entries(values)) {
            if (v !== null && typeof v === 'object') throw new ApiError(400, `400 (Bad request) --${name}: expected a string, number, boolean or null, got ${JSON.stringify(v).slice(0, 80)}`);
          }
        }
      },
    },
    async (request) => {
      const { values } = request.body;
      let next: Record<string, unknown>;
      try {
        next = withSaved(ctx.config.dataDir, values, { confirmExpose: request.body.confirm_expose === true });
      } catch (err) {
        if (err instanceof ConfigError) throw new ApiError(400, `400 (Bad request) ${err.message}`);
        throw err;
      }
      // Tried once the values are known to be well formed, so a typo is answered at once, not after a timeout.
      const unreachable = await unreachableServices(ctx.config, values);
      if (unreachable.length > 0 && request.body.confirm_unreachable !== true) {
        const what = unreachable.join('; ');
        throw new ApiError(
          400,
          `400 (Bad request) ${what}${/[.?!]$/.test(what) ? '' : '.'} Nothing was saved: start that service or correct the value; ` +
            'to save it anyway for a later start where it will be reachable, send "confirm_unreachable": true with it',
        );
      }
      writeSettings(ctx.config.dataDir, next);
      const view = settingsView(ctx.config);
      if (unreachable.length === 0) return view;
      return { ...view, saved_warnings: unreachable.map((u) => `${u}; saved anyway (confirm_unreachable): the next start needs it reachable`) };
    },
  );

  app.post(
    '/reset',
    {
      schema: {
        tags,
        summary: 'Reset data: restart on an emptied data dir (keeps tokens, saved settings and connections). Body {"confirm":"reset"}',
        body: ResetRequest,
        response: { 202: ResetAnswer },
      },
    },
    async (request, reply) => {
      if (request.body.confirm !== 'reset') throw new ApiError(400, '400 (Bad request) confirm with {"confirm":"reset"}: this deletes every build, trace, artifact, runner, project, job and sample');
      const reset = ctx.requestReset;
      if (!reset) throw new ApiError(409, '409 Conflict - this host cannot restart the server; stop it and delete the data dir instead');
      // The restart waits for in-flight requests, this one included: start it once the answer is out.
      reply.raw.once('finish', () => void reset().catch((err: unknown) => app.log.error({ err }, 'reset failed')));
      // This server is about to close: a client that kept the connection for its next request would
      // send it into a socket the old server is closing ("other side closed") once the new one is up.
      return reply.code(202).header('connection', 'close').send({ message: 'Resetting: the server restarts with empty data on the same address; reload in a moment.' });
    },
  );

  app.get(
    '/logs',
    { schema: { tags, summary: 'The last lines of the server log (<data dir>/logs/jobscope.log), newest last', querystring: LogQuery, response: { 200: LogView } } },
    async (request) => {
      const min = RANK[request.query.level ?? 'debug'] ?? 0;
      const lines = tailLog(ctx.store.layout.logsDir, request.query.lines ?? 200).flatMap((line) => {
        try {
          const { level, time, msg, pid: _pid, hostname: _host, ...fields } = JSON.parse(line) as Record<string, unknown>;
          if (typeof level === 'number' && level < min) return [];
          return [{ time: new Date(Number(time)).toISOString(), level: LEVELS[Number(level)] ?? String(level), msg: String(msg ?? ''), fields }];
        } catch {
          return [];
        }
      });
      return { file: `${ctx.store.layout.logsDir}/jobscope.log`, lines };
    },
  );
}
