// The CI runner build API v1 (/ci/api/v1), as GitLab 8.17 answered it.
// Route schemas document the API; validation is off here because GitLab's order of checks
// (authenticate first: 403 before 400) must decide the status, not a schema validator.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { runnersRoutes } from './runners.ts';
import { registerRoutes } from './register.ts';
import { updateRoutes } from './update.ts';
import { traceRoutes } from './trace.ts';
import { artifactsRoutes } from './artifacts.ts';
import { installRunnerBodyRules } from './body-rules.ts';

export async function runnerApi(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const opts = { ctx }; // not the caller's options: they carry the prefix, which must not apply twice
  app.setValidatorCompiler(() => () => true);
  // Fastify makes a child logger per request to bind its request id (a pino child: an object and
  // the bindings written out, ~0.6 us). Request logging is off (app.ts), so that id correlates with
  // nothing; a runner request's error is logged by the server's logger, with its err and message.
  app.setChildLoggerFactory((logger) => logger);
  installRunnerBodyRules(app, ctx);
  await app.register(runnersRoutes, opts);
  await app.register(registerRoutes, opts);
  await app.register(updateRoutes, opts);
  await app.register(traceRoutes, opts);
  await app.register(artifactsRoutes, opts);
}
