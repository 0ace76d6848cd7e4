// The bare reference for dispatch on PostgreSQL (bench/pg-dispatch.ts): a plain node:http server
// claiming one row of bare_builds per POST with the textbook statement,
//   UPDATE … WHERE id = (SELECT id … ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING …,
// on a pool of 10 connections (what one `jobscope serve --database` keeps), answering JSON of about
// the size of a BuildDetails answer, 204 when none is left. No routing library, no runner lookup, no
// fair order across projects: the floor of "exactly-once claim over HTTP" on this cluster. The bench
// runs two of these, as it runs two instances of ours. Usage: pg-dispatch-server.ts <postgres url>
import http from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.argv[2], max: 10 });
const padding = 'x'.repeat(1200);
const CLAIM = `UPDATE bare_builds SET status = 'running', runner = $1, started_at = $2
  WHERE id = (SELECT id FROM bare_builds WHERE status = 'pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING id, token`;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let token: unknown;
    try {
      token = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { token?: unknown }).token;
    } catch {
      /* answered below */
    }
    if (typeof token !== 'string') return void res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"message":"token missing"}');
    pool.query<{ id: string; token: string }>(CLAIM, [token, Date.now()]).then(
      ({ rows }) => {
        if (!rows.length) return void res.writeHead(204).end();
        const body = JSON.stringify({ id: Number(rows[0]!.id), token: rows[0]!.token, status: 'running', commands: padding });
        res.writeHead(201, { 'Content-Type': 'application/json' }).end(body);
      },
      (err: Error) => res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ message: err.message })),
    );
  });
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address() as { port: number };
  process.stdout.write(`listening on http://127.0.0.1:${a.port}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => void pool.end().finally(() => process.exit(0)));
  server.closeAllConnections();
});
