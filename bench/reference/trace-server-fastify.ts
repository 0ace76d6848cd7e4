// The framework's floor for trace appends: bench/reference/trace-server.ts's work (check the offset,
// append the part to a file, 202 with Range) as one fastify route, with fastify's defaults (no
// logger) and the body read as bytes. No auth, no database, no hooks of ours: what fastify itself
// adds to a bare node:http server for the same requests, so the trace line's gap can be split into
// the framework's share (the design card's fastify) and ours. Usage: trace-server-fastify.ts <dir>
import fs from 'node:fs';
import path from 'node:path';
import Fastify from 'fastify';

const dir = process.argv[2]!;
fs.mkdirSync(dir, { recursive: true });
const lengths = new Map<number, number>();
const fds = new Map<number, number>();

const app = Fastify();
app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.patch<{ Params: { id: string }; Body: Buffer }>('/builds/:id/trace.txt', async (req, reply) => {
  const id = Number(req.params.id);
  const start = parseInt(String(req.headers['content-range'] ?? ''), 10) || 0;
  const length = lengths.get(id) ?? 0;
  if (start !== length) return reply.code(416).header('Range', `0-${length}`).send();
  let fd = fds.get(id);
  if (fd === undefined) fds.set(id, (fd = fs.openSync(path.join(dir, `${id}.log`), 'a')));
  fs.writeSync(fd, req.body);
  lengths.set(id, length + req.body.length);
  return reply.code(202).header('Range', `0-${length + req.body.length}`).send();
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening on ${address}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
