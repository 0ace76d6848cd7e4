// The bare reference for dispatch: a plain node:http server handing out ids from an in-memory list,
// one per POST, as JSON of about the size of a BuildDetails answer, 204 when none is left. It shows
// what this machine's HTTP stack alone allows for the same poll pattern. Usage: dispatch-server.ts <n>
import http from 'node:http';

const total = Number(process.argv[2] ?? 10_000);
let next = 1;
const padding = 'x'.repeat(1200);

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (next > total) return void res.writeHead(204).end();
    const body = JSON.stringify({ id: next++, token: 'abcdef0123456789abcd', status: 'running', commands: padding });
    res.writeHead(201, { 'Content-Type': 'application/json' }).end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address() as { port: number };
  process.stdout.write(`listening on http://127.0.0.1:${a.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
