// Request validators compiled on a route's first request instead of at start-up. fastify compiles an
// Ajv validator for the params, querystring and body schema of every route when the server gets
// ready: generated functions and their sources, ~1.3 MiB of heap an idle server holds for routes most
// runs never call (bench/footprint.ts). Compiled on first use, by the same compiler with the same
// options (fastify's default, @fastify/ajv-compiler), the answers are the same; a route's first
// request pays its compile, ~1 ms. warm() compiles one small schema once the server is ready, so the
// first request of all does not also pay for Ajv's own code generator's first run (tens of ms).
import ValidatorSelector from '@fastify/ajv-compiler';

type Factory = ReturnType<typeof ValidatorSelector>;
type Compiler = ReturnType<Factory>;
/** What fastify passes for each request part of a route (its own type is wider). */
type RouteDef = { schema: unknown; method: string; url: string; httpPart?: string };
type Validate = ((data: unknown, ctx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };

export interface LazyValidators {
  factory: Factory;
  /** Compiles every validator not yet compiled (a test's check that every route's schemas compile). */
  compileAll(): void;
  /** Runs the compiler once on a small schema of the kinds the routes use (ids, paging, a body). */
  warm(): void;
}

const WARM_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'integer', minimum: 1 },
    limit: { type: 'integer', minimum: 1, maximum: 100 },
    name: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^\\u0000]*$' },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 50 },
    state: { type: ['string', 'null'], enum: ['a', 'b', null] },
  },
  required: ['id'],
  additionalProperties: false,
};

export function lazyValidators(): LazyValidators {
  const eager = ValidatorSelector();
  const pending = new Set<() => void>();
  let first: ((route: RouteDef) => Validate) | undefined;
  const factory = ((externalSchemas: unknown, options: unknown) => {
    let compiler: Compiler | undefined;
    const compile = (route: RouteDef) => (compiler ??= (eager as (s: unknown, o: unknown) => Compiler)(externalSchemas, options))(route as never) as Validate;
    first ??= compile;
    return (route: RouteDef): Validate => {
      // With a custom compiler fastify passes a headers schema as written, not with its names
      // lower-cased as it does for its own: refuse one rather than validate headers case-sensitively.
      if (route.httpPart === 'headers') throw new Error(`${route.method} ${route.url}: headers schemas are not supported (lazy-validators.ts)`);
      let real: Validate | undefined;
      const get = (): Validate => {
        if (!real) {
          real = compile(route);
          pending.delete(get);
        }
        return real;
      };
      pending.add(get);
      const validate: Validate = (data, ctx) => {
        const v = get();
        const valid = ctx === undefined ? v(data) : v(data, ctx);
        // fastify reads the errors from the function it called.
        validate.errors = v.errors;
        return valid;
      };
      // fastify passes the parent object (so Ajv may coerce a whole request part) only to a function
      // with a schemaEnv, as Ajv's own have.
      Object.defineProperty(validate, 'schemaEnv', { get: () => get().schemaEnv });
      return validate;
    };
  }) as unknown as Factory;
  return {
    factory,
    compileAll() {
      for (const get of [...pending]) get();
    },
    warm() {
      first?.({ schema: WARM_SCHEMA, method: 'GET', url: '/warm', httpPart: 'querystring' })({ id: '1', limit: '5', name: 'x', tags: ['a'] });
    },
  };
}
