// Plugins named up front (server/http/plugin-names.ts): fastify must see the same plugin names it
// found by walking require.cache (its pluginName chain, its printed plugin tree), without the walk.
import { expect, test } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { namePluginsUpFront } from '../../server/http/plugin-names.ts';
import { startServer } from '../helpers/server.ts';

const DISPLAY_NAME = Symbol.for('fastify.display-name');

/** One app with a nested named plugin, an anonymous one and one named as fastify-plugin names it: the names fastify reports. */
async function namesSeen(upFront: boolean): Promise<{ chains: string[]; tree: string }> {
  const chains: string[] = [];
  const app = Fastify({ pluginTimeout: 0 });
  if (upFront) namePluginsUpFront(app);
  async function innerRoutes(i: FastifyInstance) {
    chains.push(i.pluginName);
    i.get('/inner', async () => 'ok');
  }
  async function outerApi(i: FastifyInstance) {
    chains.push(i.pluginName);
    await i.register(innerRoutes, { prefix: '/x' });
  }
  await app.register(outerApi);
  await app.register(async (i: FastifyInstance) => void chains.push(i.pluginName));
  const shared = Object.assign(async function shared(i: FastifyInstance) { chains.push(i.pluginName); }, { [DISPLAY_NAME]: 'shared-plugin' });
  await app.register(shared);
  await app.ready();
  const tree = app.printPlugins().replace(/\d+(\.\d+)? ms/g, '');
  await app.close();
  return { chains, tree };
}

test('the plugin names fastify reports are the same with plugins named up front', async () => {
  const before = await namesSeen(false);
  const after = await namesSeen(true);
  expect(after).toEqual(before);
  // What the comparison rests on: a named plugin is known by its function's name, in the printed tree too.
  expect(after.chains.slice(0, 2)).toEqual(['outerApi', 'innerRoutes']);
  expect(after.chains.at(-1)).toBe('shared-plugin');
  expect(after.tree).toMatch(/outerApi[\s\S]*innerRoutes/);
});

test("every named plugin of a real server carries its name, so fastify never walks require.cache for it", async () => {
  const seen: unknown[] = [];
  const s = await startServer();
  try {
    // The route plugins, registered by the server's own register: each named one now has its display name.
    const { runnerApi } = await import('../../server/runner-api/plugin.ts');
    const { metricsApi } = await import('../../server/metrics-api/plugin.ts');
    for (const plugin of [runnerApi, metricsApi]) seen.push((plugin as unknown as Record<symbol, unknown>)[DISPLAY_NAME]);
    expect(seen).toEqual(['runnerApi', 'metricsApi']);
    expect((await fetch(`${s.url}/ci/api/v1/builds/register.json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token":"nope"}' })).status).toBe(403);
  } finally {
    await s.close();
  }
});
