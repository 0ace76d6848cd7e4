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

/** Nesting past which holdsNonFinite hands over to nonFiniteAt's walk, which cannot overflow the stack. */
const RECURSE_MAX = 64;

/**
 * Whether `value` holds a non-finite number anywhere: the same walk as nonFiniteAt without its
 * stack entries and path strings, so a request that has none (all of them) allocates nothing here.
 */
function holdsNonFinite(v: unknown, depth: number): boolean {
  if (typeof v === 'number') return !Number.isFinite(v);
  if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) return false;
  if (depth > RECURSE_MAX) return nonFiniteAt(v) !== undefined;
  // for...in with the own-property test: the keys Object.entries gives, without its array.
  for (const k in v) {
    if (Object.hasOwn(v, k) && holdsNonFinite((v as Record<string, unknown>)[k], depth + 1)) return true;
  }
  return false;
}

function refuseNonFinite(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const { query, params, body } = request;
  // The path is worked out only for the refusal's message.
  if (holdsNonFinite(query, 0) || holdsNonFinite(params, 0) || holdsNonFinite(body, 0)) {
    for (const [part, value] of [['querystring', query], ['params', params], ['body', body]] as const) {
      const at = nonFiniteAt(value);
      if (at !== undefined) return done(badRequest(`${part}${at} must be a finite number`));
    }
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
