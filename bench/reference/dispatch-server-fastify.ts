// The framework's floor for dispatch: bench/reference/dispatch-server.ts's work (hand out the next id
// of an in-memory list, 201 with ~1.3 kB of JSON, 204 when none is left) as one fastify route with
// fastify's defaults (no logger), the runner's JSON body parsed as fastify parses ours. No auth, no
// database, no durable write, no hooks of ours: what fastify itself adds to a bare node:http server for
// the same polls, so the dispatch line's gap can be split into the framework's share (the design
// card's fastify) and ours. Usage: dispatch-server-fastify.ts <n>
import Fastify from 'fastify';

const total = Number(process.argv[2] ?? 10_000);
let next = 1;
const padding = 'x'.repeat(1200);

const app = Fastify();
app.post<{ Body: { token?: string } }>('/builds/register.json', async (req, reply) => {
  if (typeof req.body?.token !== 'string') return reply.code(400).send({ message: 'token missing' });
  if (next > total) return reply.code(204).send();
  return reply.code(201).send({ id: next++, token: 'abcdef0123456789abcd', status: 'running', commands: padding });
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening on ${address}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
