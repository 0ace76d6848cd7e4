// The simulator API (/api/app/sim; not to be confused with the control API at /api/v3/sim): fleets,
// throughput, the journal and the runner console, for the UI and for scripts. Serves the engine in
// simulator/ over HTTP. Admin PRIVATE-TOKEN, like the control API.
// Requests are validated against the TypeBox contract by TypeBox itself, so a bad scenario or
// form is a 400 naming the field instead of unknown keys being dropped silently.
import type { FastifyInstance } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { AppContext } from '../context.ts';
import { requireAdmin } from '../auth/admin.ts';
import { SimulatorService } from './service.ts';
import { policyOf } from '../outbound/policy.ts';
import { fleetRoutes } from './fleet-routes.ts';
import { journalRoutes } from './journal-routes.ts';
import { consoleRoutes } from './console-routes.ts';
import type { SimulatorRouteOpts } from './route-options.ts';

function selfUrl(app: FastifyInstance, host: string): string {
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  // A wildcard bind is reachable on loopback; a specific address is used as it is.
  const h = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

/** The app creates the simulator (and registers it as a service); this plugin only serves it. */
export function createSimulator(app: FastifyInstance, ctx: AppContext): SimulatorService {
  return new SimulatorService({
    journalEntries: ctx.config.simJournalEntries,
    journalBodyBytes: ctx.config.simJournalBodyBytes,
    selfUrl: () => selfUrl(app, ctx.config.host),
    registrationToken: ctx.store.registrationToken,
    adminToken: ctx.store.adminToken,
    policy: () => policyOf(ctx.config),
  });
}

export async function simulatorApi(app: FastifyInstance, { ctx, simulator }: SimulatorRouteOpts) {
  app.addHook('onRequest', async (request) => requireAdmin(ctx.store, request));
  app.setValidatorCompiler(({ schema, httpPart }) => (data: unknown) => {
    const s = schema as TSchema;
    if (httpPart === 'body' && (data === undefined || data === null)) data = {};
    const value = httpPart === 'querystring' || httpPart === 'params' ? Value.Convert(s, data) : data;
    const problems = [...Value.Errors(s, value)].slice(0, 5).map((e) => `${e.path || httpPart || 'body'}: ${e.message}`);
    if (problems.length) return { error: Object.assign(new Error(problems.join('; ')), { validation: problems }) };
    return { value };
  });
  const opts: SimulatorRouteOpts = { ctx, simulator }; // not the caller's options: they carry the prefix
  await app.register(fleetRoutes, opts);
  await app.register(journalRoutes, opts);
  await app.register(consoleRoutes, opts);
}
