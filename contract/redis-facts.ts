// What a sidekiq connection's page shows about the Redis itself: INFO's server, memory and clients
// sections, read when the page opens. A Redis whose ACL refuses INFO answers `refused`, not an error.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const Maybe = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const RedisFacts = Type.Object({
  version: Maybe(Type.String({ description: 'redis_version' })),
  used_memory: Maybe(Type.Integer({ minimum: 0, description: 'bytes (used_memory)' })),
  used_memory_peak: Maybe(Type.Integer({ minimum: 0, description: 'bytes (used_memory_peak)' })),
  connected_clients: Maybe(Type.Integer({ minimum: 0 })),
  uptime_s: Maybe(Type.Integer({ minimum: 0, description: 'uptime_in_seconds' })),
  refused: Type.Union([Type.String(), Type.Null()], { description: "why INFO was refused (an ACL without INFO, a renamed command); null when it was read" }),
});
export type RedisFacts = Static<typeof RedisFacts>;
