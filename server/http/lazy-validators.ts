// Request validators compiled on a route's first request instead of at start-up. fastify compiles an
// Ajv validator for the params, querystring and body schema of every route when the server gets
// ready: generated functions and their sources, ~1.3 MiB of heap an idle server holds for routes most
// runs never call (bench/footprint.ts). Compiled on first use, by the same compiler with the same
// options (fastify's default, @fastify/ajv-compiler), the answers are the same; a route's first
// request pays its compile, ~1 ms. warm() compiles one small schema once the server is ready, so the
// first request of all does not also pay for Ajv's own code generator's first run (tens of ms).
//
// A compiled validator is a pure function of its schema, the shared schemas and the Ajv options, so,
// as the serializers (lazy-serializers.ts), it is kept for the process and reused by the next server
// built with the same ones. Each server used to make its own Ajv instance (compiling the draft-07
// meta-schema, ~60 ms of CPU) and compile every route it answered again: a restart in the same process
// (the desktop app's, every test's servers) paid ~0.2 s of CPU per start, the model-based test's 12
// starts ~2.5 s.
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

/** fastify's own pool: one Ajv instance per distinct shared schemas and options, for the process. */
const eager = ValidatorSelector();
/** Bounds what a process keeps should schemas ever be made per server (the routes have ~150). */
const MAX_KEPT = 1000;
const kept = new Map<string, Validate>();

/** The cache key, or undefined for what JSON cannot key (cycles, BigInt): compiled and not kept. */
function keyOf(parts: unknown[]): string | undefined {
  try {
    return JSON.stringify(parts);
  } catch {
    return undefined;
  }
}

export function lazyValidators(): LazyValidators {
  const pending = new Set<() => void>();
  let first: ((route: RouteDef) => Validate) | undefined;
  const factory = ((externalSchemas: unknown, options: unknown) => {
    let compiler: Compiler | undefined;
    const compileNew = (route: RouteDef) => (compiler ??= (eager as (s: unknown, o: unknown) => Compiler)(externalSchemas, options))(route as never) as Validate;
    // The key leaves out method and url: the compiler reads only the schema (and a $id within it).
    const compile = (route: RouteDef): Validate => {
      const key = keyOf([externalSchemas, options ?? null, route.schema]);
      const known = key === undefined ? undefined : kept.get(key);
      if (known) return known;
      const validate = compileNew(route);
      if (key !== undefined) {
        if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!);
        kept.set(key, validate);
      }
      return validate;
    };
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
