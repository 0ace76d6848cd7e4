// The bare reference for trace appends: a plain node:http server that only checks the offset, appends
// the part to a file and answers 202 with Range. No routing library, no auth, no database: the floor
// of what "durable append over HTTP" costs on this machine. Usage: trace-server.ts <dir>
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const dir = process.argv[2]!;
fs.mkdirSync(dir, { recursive: true });
const lengths = new Map<number, number>();
const fds = new Map<number, number>();

const server = http.createServer((req, res) => {
  const m = /^\/builds\/(\d+)\/trace\.txt$/.exec(req.url ?? '');
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (!m || req.method !== 'PATCH') return void res.writeHead(404).end();
    const id = Number(m[1]);
    const start = parseInt(String(req.headers['content-range'] ?? ''), 10) || 0;
    const length = lengths.get(id) ?? 0;
    if (start !== length) return void res.writeHead(416, { Range: `0-${length}` }).end();
    let fd = fds.get(id);
    if (fd === undefined) fds.set(id, (fd = fs.openSync(path.join(dir, `${id}.log`), 'a')));
    const body = Buffer.concat(chunks);
    fs.writeSync(fd, body);
    lengths.set(id, length + body.length);
    res.writeHead(202, { Range: `0-${length + body.length}` }).end();
  });
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address() as { port: number };
  process.stdout.write(`listening on http://127.0.0.1:${a.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
