// buildServer(config) → a fastify instance on its own store, with every API registered.
// The same function runs inside `jobscope serve`, the Electron main process and the tests.
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import { streamMultipart } from './http/multipart.ts';
import type { Config } from './config.ts';
import { openBackends, type Backends } from './store/open-backends.ts';
import { AppEvents, RunnerQueue, type AppContext } from './context.ts';
import { createDomain, type Domain } from './domain/index.ts';
import { installErrorHandling } from './http/errors.ts';
import { installBodyParsers } from './http/body-parsers.ts';
import { refuseNonFiniteNumbers } from './http/finite-numbers.ts';
import { installHostCheck } from './http/host-check.ts';
import { connectionCaps, installConnectionCaps } from './http/connection-caps.ts';
import { installBodyProgress, serverTimeoutOptions } from './http/timeouts.ts';
import { installBodyBudget } from './http/body-budget.ts';
import { loggerOptions } from './http/logging.ts';
import { logDomainEvents } from './http/event-log.ts';
import { registerLazyDocs } from './http/docs.ts';
import { lazySerializers } from './http/lazy-serializers.ts';
import { lazyValidators } from './http/lazy-validators.ts';
import { namePluginsUpFront } from './http/plugin-names.ts';
import { runnerApi } from './runner-api/plugin.ts';
import { controlApi } from './control-api/plugin.ts';
import { settingsApi } from './settings-api/plugin.ts';
import { appApi } from './app-api/plugin.ts';
import { Monitor } from './monitor/monitor.ts';
import { OwnsEverything } from './monitor/owns-everything.ts';
import { SharedOwnership } from './monitor/shared-ownership.ts';
import type { MonitorApi } from './monitor/api.ts';
import { uiServing } from './ui/plugin.ts';
import { JobSystem } from './jobs/job-system.ts';
import { DemoLoad } from './jobs/demo-load.ts';
import { registerJobServices } from './jobs/service.ts';
import { systemClock, type Clock } from './clock.ts';
import { metricsApi } from './metrics-api/plugin.ts';
import { createSimulator, simulatorApi } from './simulator-api/plugin.ts';
import { SimulatorLifecycle } from './simulator-api/service.ts';
import { Services } from './lifecycle.ts';
import { StartPhases } from './start-phases.ts';

export interface JobscopeServer {
  app: FastifyInstance;
  ctx: AppContext;
  /** Every route registered (method + URL), for the docs-coverage test and the hostile-input suite. */
  routes: { method: string; url: string; hidden: boolean }[];
  /** Compiles the request validators no request has needed yet (they compile on first use): tests. */
  compileValidators(): void;
  /** The start's phases so far (modules, store, routes, services; listen once listen() resolved). */
  startPhases: StartPhases;
  /** Starts listening; resolves to the base URL, e.g. http://127.0.0.1:8090 */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** What a host may swap: tests pass a ManualClock to move the job system's and the metrics' time. */
export interface ServerDeps {
  clock?: Clock;
  /**
   * `serve --database` (tests pass it directly): builds,
   * runners, projects, users, traces' lengths, listings and (without --redis) the job system in
   * this PostgreSQL database, and the admin API's user tokens looked up there. The data dir is then
   * shared by the servers on that database: traces and artifacts are everyone's, and each server
   * holds a slot in it (store/data-dir-shared.ts) with its own SQLite file for the UI state, logs and
   * temp uploads. The monitor (connections, history, alerts) is the database's too, each connection
   * sampled by one instance at a time (monitor/shared-ownership.ts).
   */
  database?: string;
  /** With `database`: this server's slot in the shared data dir (store/data-dir-shared.ts); default the lowest free one. */
  instance?: string;
}

export async function buildServer(config: Config, deps: ServerDeps = {}): Promise<JobscopeServer> {
  const phases = new StartPhases();
  // From the process's start to here: node itself and the modules (in a test, whatever ran before).
  phases.end('modules');
  const events = new AppEvents();
  const runnerQueue = new RunnerQueue();
  const clock = deps.clock ?? systemClock;
  let jobs: JobSystem | undefined;
  const backends = await openBackends(config, {
    database: deps.database,
    instance: deps.instance,
    events,
    runnerQueue,
    clock,
    kindOf: (cls) => jobs!.kindOfClass(cls),
    jobLog: () => jobs!.log,
  });
  phases.end('store');
  try {
    jobs = new JobSystem(config, backends.jobBackend, { clock });
    return await assemble(config, backends, clock, phases, { events, runnerQueue, jobs, domain: createDomain(backends.domain, events) });
  } catch (err) {
    // A plugin that fails to register must not leave the data dir locked.
    await backends.close().catch(() => undefined);
    throw err;
  }
}

async function assemble(
  config: Config,
  backends: Backends,
  clock: Clock,
  phases: StartPhases,
  parts: { events: AppEvents; runnerQueue: RunnerQueue; jobs: JobSystem; domain: Domain },
): Promise<JobscopeServer> {
  const { store } = backends;
  const { jobs } = parts;
  const { events } = parts;
  const ctx: AppContext = {
    config,
    store,
    domain: parts.domain,
    events,
    runnerQueue: parts.runnerQueue,
    jobs,
    demo: new DemoLoad(jobs, config.demo),
    services: new Services(),
    startedAt: Date.now(),
  };

  const validators = lazyValidators();
  const app = Fastify({
    logger: loggerOptions(config, store.layout.logsDir),
    // One line per request would drown the log under a runner fleet; errors and domain events are logged instead.
    logController: new LogController({ disableRequestLogging: true }),
    // A full trace may arrive as one JSON body in the final PUT.
    bodyLimit: config.maxTraceBytes + 1024 * 1024,
    forceCloseConnections: 'idle',
    ...serverTimeoutOptions(config),
    return503OnClosing: true,
    routerOptions: { maxParamLength: 256 },
    // `type: [a, b]` lists: with them the validator coerces only a value that matches none of the types.
    ajv: { customOptions: { allowUnionTypes: true } },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers(), buildValidator: validators.factory } },
  });
  namePluginsUpFront(app);
  const routes: JobscopeServer['routes'] = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) {
      if (method !== 'HEAD') routes.push({ method, url: r.url, hidden: (r.schema as { hide?: boolean } | undefined)?.hide === true });
    }
  });
  installErrorHandling(app, config);
  installHostCheck(app, config);
  installBodyProgress(app, config);
  const caps = installConnectionCaps(app.server, connectionCaps(config), app.log);
  app.addHook('onClose', async () => caps.close());
  installBodyBudget(app, config);
  logDomainEvents(ctx, app.log);
  installBodyParsers(app);
  refuseNonFiniteNumbers(app);
  // A form PUT may carry the full trace as JSON does (Grape took any encoding): same limit.
  await app.register(formbody, { bodyLimit: config.maxTraceBytes + 1024 * 1024 });
  // Stream mode only (http/multipart.ts): the plugin's disk-mode cleanup hooks ran on every request.
  await app.register(streamMultipart, {
    limits: { fileSize: config.maxArtifactBytes, files: 1, fields: 50, fieldSize: 1024 * 1024, parts: 60, headerPairs: 100 },
  });

  registerLazyDocs(app, config);

  await app.register(runnerApi, { prefix: '/ci/api/v1', ctx });
  await app.register(controlApi, { prefix: '/api/v3/sim', ctx });
  await app.register(settingsApi, { prefix: '/api/app', ctx });
  const monitorLog = { info: (msg: string) => app.log.info(msg), warn: (msg: string) => app.log.warn(msg) };
  // In database mode the monitor is the deployment's, in the database, each connection sampled by
  // the instance holding it (monitor/shared-ownership.ts); its adapter loaded only then, as the
  // PostgreSQL store is.
  const shared = backends.sharedMonitor;
  let monitor: MonitorApi;
  if (shared) {
    monitor = new Monitor<'later'>(ctx, monitorLog, clock, shared, (host) => new SharedOwnership(shared, host));
  } else monitor = new Monitor(ctx, monitorLog, clock, ctx.store.monitor, (host) => new OwnsEverything(ctx.store.monitor, host));
  ctx.services.add(monitor);
  await app.register(appApi, { prefix: '/api/app', ctx, monitor });
  await app.register(uiServing, { ctx });
  await app.register(metricsApi, { ctx });
  const simulator = ctx.services.add(new SimulatorLifecycle(createSimulator(app, ctx))).sim;
  await app.register(simulatorApi, { prefix: '/api/app/sim', ctx, simulator });
  registerJobServices(ctx, app.log);
  phases.end('routes');
  // Services hold timers and sockets the store's close does not end: a failed start stops the rest.
  try {
    await ctx.services.startAll();
  } catch (err) {
    await ctx.services.stopAll().catch(() => undefined);
    throw err;
  }
  // Work that talks to this server over HTTP (a simulator fleet) stops before the server closes its sockets.
  app.addHook('preClose', () => ctx.services.drainAll());
  phases.end('services');

  let closed = false;
  return {
    app,
    ctx,
    routes,
    compileValidators: () => validators.compileAll(),
    startPhases: phases,
    async listen() {
      await app.listen({ host: config.host, port: config.port });
      phases.end('listen');
      // Ajv's first compile (its draft-07 meta-schema and code generator, ~20% of the start CPU before
      // the listening line) runs once the server listens, not before: a request that arrives meanwhile
      // waits for it as it would have waited for the start; later ones pay only their route's compile.
      setImmediate(() => validators.warm());
      const addr = app.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : config.port;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      return `http://${host}:${port}`;
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      try {
        await ctx.services.stopAll();
      } finally {
        await backends.close();
      }
    },
  };
}
