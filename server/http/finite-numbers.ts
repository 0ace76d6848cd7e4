// Ajv coerces the strings "Infinity", "1e400" or 400 nines into Infinity for an integer or number,
// and its minimum/maximum checks skip non-finite numbers: `limit=Infinity` passed `maximum: 1000`,
// `PUT /load {"processes":"Infinity"}` ran the server out of memory, and a project stored a
// build_timeout of Infinity. JSON has no Infinity, but JSON.parse reads 1e400 as one: either way a
// non-finite number in a request is refused, on every route with a schema, after validation.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, preHandlerHookHandler } from 'fastify';
import { badRequest } from './errors.ts';

/** The path of the first non-finite number in `value` ('' for the value itself), or undefined. */
function nonFiniteAt(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return at;
    } else if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v)) {
      for (const [k, child] of Object.entries(v)) stack.push([child, `${at}/${k}`]);
    }
  }
  return undefined;
}

function refuseNonFinite(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  for (const [part, value] of [['querystring', request.query], ['params', request.params], ['body', request.body]] as const) {
    const at = nonFiniteAt(value);
    if (at !== undefined) return done(badRequest(`${part}${at} must be a finite number`));
  }
  done();
}

/** Adds the check to every route that validates a query, params or body (call before routes are added). */
export function refuseNonFiniteNumbers(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as Record<string, unknown> | undefined;
    if (!schema || !(schema.body || schema.querystring || schema.query || schema.params)) return;
    const prev = route.preHandler === undefined ? [] : [route.preHandler].flat();
    route.preHandler = [refuseNonFinite as preHandlerHookHandler, ...prev];
  });
}
