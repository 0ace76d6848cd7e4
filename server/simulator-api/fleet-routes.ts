import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { FleetStatus, Scenario, StartFleet, Throughput, ThroughputQuery } from '../../contract/simulator.ts';
import { badRequest } from '../http/errors.ts';
import { exportScenario, parseScenario, ScenarioError } from '../../simulator/scenario.ts';
import type { SimulatorRouteOpts } from './route-options.ts';

const tags = ['simulator API'];

export async function fleetRoutes(fastify: FastifyInstance, { simulator }: SimulatorRouteOpts) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/fleet',
    {
      schema: {
        tags,
        summary: 'Start a fleet of virtual runners (form fields or a scenario); target defaults to this server',
        body: StartFleet,
        response: { 201: FleetStatus },
      },
    },
    async (request, reply) => reply.code(201).send(await simulator.start(request.body ?? {})),
  );
  app.post('/fleet/stop', { schema: { tags, summary: 'Stop the running fleet (builds in progress are reported failed)', response: { 200: FleetStatus } } }, async () => {
    await simulator.stop();
    return simulator.status();
  });
  app.get('/fleet', { schema: { tags, summary: 'The fleet: state, totals, each runner’s state and counters, violations', response: { 200: FleetStatus } } }, async () =>
    simulator.status(),
  );
  app.get(
    '/fleet/throughput',
    { schema: { tags, summary: 'Builds/min, trace bytes/s and requests/s over the last minutes', querystring: ThroughputQuery, response: { 200: Throughput } } },
    async (request) => {
      const minutes = request.query.minutes ?? 5;
      const step = request.query.step_s ?? Math.max(1, Math.round((minutes * 60) / 120));
      return simulator.fleet ? simulator.fleet.stats.throughput(minutes, step) : { step_s: step, t: [], builds_per_min: [], trace_bytes_per_s: [], requests_per_s: [] };
    },
  );
  app.get('/scenario', { schema: { tags, summary: 'Export the last fleet as a scenario (defaults written out, no tokens)', response: { 200: Scenario } } }, async (_request, reply) =>
    reply.header('Content-Disposition', 'attachment; filename="jobscope-scenario.json"').send(simulator.exportScenario()),
  );
  app.post(
    '/scenario/validate',
    {
      schema: {
        tags,
        summary: 'Import check: validate a scenario and answer it normalized, or 400 listing every problem',
        body: Type.Unknown(),
        response: { 200: Scenario },
      },
    },
    async (request) => {
      try {
        return exportScenario(parseScenario(Buffer.isBuffer(request.body) ? request.body.toString('utf8') : request.body));
      } catch (err) {
        if (err instanceof ScenarioError) throw badRequest(err.message);
        throw err;
      }
    },
  );
}
