// What the log says about the instance's life: the events a person reading the log wants to see,
// one line each, instead of one line per HTTP request.
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.ts';

export function logDomainEvents(ctx: AppContext, log: FastifyBaseLogger): void {
  ctx.events.on('build:pending', (b) => log.debug({ build: b.id, project: b.project_id }, 'build pending'));
  ctx.events.on('build:finished', (b) => log.info({ build: b.id, status: b.status, runner: b.runner_id }, `build ${b.id} ${b.status}`));
  ctx.events.on('artifacts:stored', (a) => log.info({ build: a.buildId }, `artifacts stored for build ${a.buildId}`));
}
