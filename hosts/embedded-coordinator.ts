// The coordinator `jobscope simulate` runs against when given no --target: a whole Jobscope on a
// temp data dir and a free port, removed again on close. Lives here, not in simulator/, because it
// hosts a server; the simulator only gets its URL and tokens.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildServer } from '../server/app.ts';
import { resolveConfig } from '../server/config.ts';
import type { EmbeddedCoordinator } from '../simulator/cli-simulate.ts';

export async function startEmbeddedCoordinator(): Promise<EmbeddedCoordinator> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-simulate-'));
  const config = resolveConfig({ port: 0, dataDir, logLevel: 'warn', mode: 'serve' }, {});
  const server = await buildServer(config);
  const url = await server.listen();
  return {
    url,
    registrationToken: server.ctx.store.registrationToken,
    adminToken: server.ctx.store.adminToken,
    close: async () => {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
