// Response serializers compiled on a route's first answer instead of at start-up. fastify compiles a
// fast-json-stringify function for every response schema of every route when it registers them: ~90
// generated functions and their sources, ~3 MiB of heap held by an idle server for routes most runs
// never call. The compiler and its options are fastify's own default, so the bytes are the same.
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type Factory = ReturnType<typeof SerializerSelector>;

export function lazySerializers(): Factory {
  const eager = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = eager(externalSchemas, options);
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc) => (serialize ??= compile(route))(doc);
    };
  };
}
