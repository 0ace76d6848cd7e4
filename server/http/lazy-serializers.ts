// Response serializers compiled on a route's first answer instead of at start-up. fastify compiles a
// fast-json-stringify function for every response schema of every route when it registers them: ~90
// generated functions and their sources, ~3 MiB of heap held by an idle server for routes most runs
// never call. The compiler and its options are fastify's own default, so the bytes are the same.
//
// A compiled serializer is a pure function of its schema, the shared schemas and the options, so it
// is kept for the process and reused by the next server built with the same ones: a restart in the
// same process (the desktop app's, every test's servers) compiled them all again, ~0.5 s of CPU
// per start once its routes had answered (the model-based test restarts 14 times: ~7 s of 70).
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type Factory = ReturnType<typeof SerializerSelector>;
type Serialize = (doc: unknown) => string;

/** Bounds what a process keeps should schemas ever be made per server (the routes have ~90). */
const MAX_KEPT = 1000;
const kept = new Map<string, Serialize>();

/** The cache key, or undefined for what JSON cannot key (cycles, BigInt): compiled and not kept. */
function keyOf(parts: unknown[]): string | undefined {
  try {
    return JSON.stringify(parts);
  } catch {
    return undefined;
  }
}

export function lazySerializers(): Factory {
  const eager = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = eager(externalSchemas, options);
    const compileKept = (route: Parameters<typeof compile>[0]): Serialize => {
      const key = keyOf([externalSchemas, options ?? null, route.schema]);
      const known = key === undefined ? undefined : kept.get(key);
      if (known) return known;
      const serialize = compile(route) as Serialize;
      if (key !== undefined) {
        if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!);
        kept.set(key, serialize);
      }
      return serialize;
    };
    return (route) => {
      let serialize: Serialize | undefined;
      return (doc) => (serialize ??= compileKept(route))(doc);
    };
  };
}
