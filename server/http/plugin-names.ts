// fastify names a plugin that carries no fastify-plugin metadata by walking require.cache for a
// CommonJS module whose exports is that function (fastify/lib/plugin-utils.js getPluginName), twice
// per register. Our ~30 route plugins are ES module functions, never a CommonJS module's exports, so
// the walk always ends at the function's own name, but it costs Object.keys(require.cache) each time:
// in a process that has loaded a few hundred CommonJS modules (every vitest worker, which keeps its
// modules between files) it was ~15% of an in-process server's start CPU (bench/experiments/server-churn.ts).
// Naming each plugin up front with the symbol fastify-plugin sets gives fastify the same name first.
import type { FastifyInstance } from 'fastify';

const DISPLAY_NAME = Symbol.for('fastify.display-name');

/**
 * Wraps `app.register` (fastify's child instances inherit it from the root) so every named plugin
 * function carries its name as fastify's display name before fastify looks it up. A function without
 * a name, a module object or a promise of one is handed over untouched (fastify's own naming applies).
 */
export function namePluginsUpFront(app: FastifyInstance): void {
  const register = app.register;
  const named = function (this: FastifyInstance, plugin: unknown, opts?: unknown) {
    if (typeof plugin === 'function' && plugin.name !== '' && !Object.hasOwn(plugin, DISPLAY_NAME)) {
      Object.defineProperty(plugin, DISPLAY_NAME, { value: plugin.name });
    }
    return (register as (this: FastifyInstance, p: unknown, o?: unknown) => FastifyInstance).call(this, plugin, opts);
  };
  app.register = named as unknown as FastifyInstance['register'];
}
