// Starts a real Jobscope server on 127.0.0.1:0 with a fresh temp data dir, the way every host does.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildServer, type JobscopeServer, type ServerDeps } from '../../server/app.ts';
import { resolveConfig, type Config } from '../../server/config.ts';

export interface TestServer {
  server: JobscopeServer;
  url: string;
  adminToken: string;
  registrationToken: string;
  dataDir: string;
  config: Config;
  close(opts?: { keepData?: boolean }): Promise<void>;
}

export function tempDir(prefix = 'jobscope-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export type ServerOverrides = Partial<Record<keyof Config, unknown>>;

/** `deps.clock`: a ManualClock (server/clock.ts) moves the job system's and the metrics' time by hand. */
export async function startServer(overrides: ServerOverrides = {}, deps: ServerDeps = {}): Promise<TestServer> {
  const dataDir = (overrides.dataDir as string | undefined) ?? tempDir();
  const config = resolveConfig({ port: 0, logLevel: 'silent', ...overrides, dataDir }, {});
  const server = await buildServer(config, deps);
  const url = await server.listen();
  return {
    server,
    url,
    adminToken: server.ctx.store.adminToken,
    registrationToken: server.ctx.store.registrationToken,
    dataDir,
    config,
    async close(opts = {}) {
      await server.close();
      if (!opts.keepData) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
