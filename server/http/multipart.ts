// @fastify/multipart in stream mode only. The plugin adds an onRequest hook (a 'close' listener on
// every response) and an async onResponse hook to every route of the instance it is registered on,
// only to delete the temp files of its disk mode (saveRequestFiles), which nothing here uses: every
// reader takes parts as streams (http/params.ts, runner-api/artifacts.ts, the simulator console).
// Scoping the plugin to the routes that read multipart would not spare them: Grape-style params
// accept multipart on every runner route, the poll included. So it is registered as before, at the
// root, without those two hooks, and disk mode is refused rather than left to leak temp files.
import multipart, { type FastifyMultipartOptions } from '@fastify/multipart';
import type { FastifyInstance, FastifyPluginCallback } from 'fastify';

/** The hooks the plugin adds for disk mode's cleanup, and the methods of disk mode. */
const DISK_MODE_HOOKS = new Set(['onRequest', 'onResponse']);
const DISK_MODE_METHODS = new Set(['saveRequestFiles']);

export class DiskModeRefused extends Error {
  constructor() {
    super('multipart disk mode (saveRequestFiles) is off: read parts as streams');
  }
}

const refuseDiskMode = async function (): Promise<never> {
  throw new DiskModeRefused();
};

const streamOnly: FastifyPluginCallback<FastifyMultipartOptions> = (app, opts, done) => {
  // The plugin sees the instance through this view; everything but the two cleanup hooks and
  // disk mode's entry point reaches the real instance (bound to it, as fastify's methods expect).
  const view = new Proxy(app, {
    get(target, key) {
      if (key === 'addHook') {
        return (name: string, fn: unknown) => {
          if (!DISK_MODE_HOOKS.has(name)) (target.addHook as (n: string, f: unknown) => FastifyInstance)(name, fn);
          return view;
        };
      }
      if (key === 'decorateRequest') {
        return (name: string, value: unknown, deps?: string[]) => {
          target.decorateRequest(name, DISK_MODE_METHODS.has(name) ? refuseDiskMode : (value as never), deps);
          return view;
        };
      }
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  // The plugin function itself: the export is it, marked to skip encapsulation (fastify-plugin).
  (multipart as unknown as FastifyPluginCallback<FastifyMultipartOptions>)(view, opts, done);
};
// Like the plugin it wraps: its decorators and parser belong to the instance it is registered on.
(streamOnly as unknown as Record<symbol, unknown>)[Symbol.for('skip-override')] = true;
(streamOnly as unknown as Record<symbol, unknown>)[Symbol.for('fastify.display-name')] = '@fastify/multipart (stream mode)';

export const streamMultipart = streamOnly;
