// The bare reference for trace appends on PostgreSQL (bench/pg-traces.ts): a plain node:http server
// doing the same durable protocol as store/pg/traces.ts in its plainest form. Per PATCH: BEGIN, lock
// the build's row (SELECT length … FOR UPDATE), check the offset against the committed length (416
// with Range when it differs), write the part at that length into the shared folder's file, UPDATE
// the length, COMMIT, 202 with Range. A pool of 10 connections, file descriptors kept open, no
// routing library, no auth, no build lookup. The bench runs two of these on one folder and one
// table, as it runs two instances of ours. Usage: pg-trace-server.ts <postgres url> <dir>
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.argv[2], max: 10 });
const dir = process.argv[3]!;
const fds = new Map<number, number>();

async function append(id: number, start: number, body: Buffer): Promise<{ ok: boolean; length: number }> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ length: string }>('SELECT length FROM bare_traces WHERE id = $1 FOR UPDATE', [id]);
    const length = Number(rows[0]?.length ?? NaN);
    if (start !== length) {
      await client.query('ROLLBACK');
      return { ok: false, length };
    }
    let fd = fds.get(id);
    // Positioned writes (not O_APPEND): the position is the committed length, as in ours.
    if (fd === undefined) fds.set(id, (fd = fs.openSync(path.join(dir, `${id}.log`), fs.constants.O_WRONLY | fs.constants.O_CREAT)));
    fs.writeSync(fd, body, 0, body.length, length);
    await client.query('UPDATE bare_traces SET length = $2 WHERE id = $1', [id, length + body.length]);
    await client.query('COMMIT');
    return { ok: true, length: length + body.length };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

const server = http.createServer((req, res) => {
  const m = /^\/builds\/(\d+)\/trace\.txt$/.exec(req.url ?? '');
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (!m || req.method !== 'PATCH') return void res.writeHead(404).end();
    const start = parseInt(String(req.headers['content-range'] ?? ''), 10) || 0;
    append(Number(m[1]), start, Buffer.concat(chunks)).then(
      (r) => res.writeHead(r.ok ? 202 : 416, { Range: `0-${r.length}` }).end(),
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
