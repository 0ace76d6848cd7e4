// GET /api/app/status: which host runs the backend, where its data lives, since when.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../context.ts';
import { AppStatus } from '../../contract/app.ts';
import { packageRoot } from '../ui/package-root.ts';

function version(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

export async function statusRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const v = version();
  app.get('/status', { schema: { tags: ['app API'], summary: 'Version, host mode and data dir of this backend', response: { 200: AppStatus } } }, async () => ({
    version: v,
    mode: ctx.config.mode,
    data_dir: ctx.config.dataDir,
    started_at: new Date(ctx.startedAt).toISOString(),
    ui_refresh_ms: ctx.config.uiRefreshMs,
    job_system: ctx.jobs.health(),
  }));
}
