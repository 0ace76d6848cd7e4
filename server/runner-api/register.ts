// POST /builds/register: a runner asks for the oldest pending build it may take.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { readParams, str } from '../http/params.ts';
import { pickInfo } from '../domain/runners.ts';
import { knownRunner, runnerToken } from './auth.ts';
import { refuseNul } from '../http/stored-text.ts';
import { buildDetails } from './build-details.ts';
import { isPromise } from '../domain/maybe-promise.ts';

/** GitLab 8.12–8.17: runners that understand 204 say so in their User-Agent (helpers.rb `build_not_found!`). */
const RUNNER_UA = /gitlab-ci-multi-runner \d+\.\d+\.\d+(~beta\.\d+\.g[0-9a-f]+)? /;

function buildNotFound(request: FastifyRequest, reply: FastifyReply, lastUpdate: string) {
  reply.header('X-GitLab-Last-Update', lastUpdate);
  if (RUNNER_UA.test(request.headers['user-agent'] ?? '')) return reply.code(204).send();
  return reply.code(404).type('application/json').send({ message: '404 Not Found' });
}

export async function registerRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  // Whoever makes a build pending (control API, a retry, a simulator) emits this event; ticking here
  // means no producer can forget it and leave a new build hidden behind a stale `last_update`.
  ctx.events.on('build:pending', () => ctx.runnerQueue.tick());
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const params = await readParams(request);
    const info = pickInfo(params.info);
    const token = runnerToken(params);
    const answer = await ctx.domain.builds.pollAs(token, info, { lastUpdate: str(params.last_update), current: () => ctx.runnerQueue.value }, (found) => {
      const runner = knownRunner(found);
      // Where GitLab stored `info` (authenticate_runner!, before the paused check); see http/stored-text.ts.
      refuseNul('info', info);
      if (!runner.active) throw notFound();
      return runner;
    });
    const { taken } = answer;
    if (!taken) return buildNotFound(request, reply, answer.lastUpdate);
    const details = buildDetails(ctx, taken.build, request.host, taken);
    return reply.code(201).send(isPromise(details) ? await details : details);
  };
  for (const url of ['/builds/register', '/builds/register.json']) {
    app.post(url, { schema: { tags: ['runner API v1'], summary: 'Take the oldest pending build (201), or none (204/404)' } }, handler);
  }
}
