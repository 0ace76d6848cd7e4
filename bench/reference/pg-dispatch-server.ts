// The bare reference for dispatch on PostgreSQL (bench/pg-dispatch.ts): a plain node:http server
// claiming one row of bare_builds per POST with the textbook statement,
//   UPDATE … WHERE id = (SELECT id … ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING …,
// on a pool of 10 connections (what one `jobscope serve --database` keeps), answering JSON of about
// the size of a BuildDetails answer, 204 when none is left. No routing library, no runner lookup, no
// fair order across projects: the floor of "exactly-once claim over HTTP" on this cluster. The bench
// runs two of these, as it runs two instances of ours. Usage: pg-dispatch-server.ts <postgres url>
import pg from 'pg';
import { serveClaims } from './claim-server.ts';

const pool = new pg.Pool({ connectionString: process.argv[2], max: 10 });
const CLAIM = `UPDATE bare_builds SET status = 'running', runner = $1, started_at = $2
  WHERE id = (SELECT id FROM bare_builds WHERE status = 'pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING id, token`;

serveClaims(
  (token) => pool.query<{ id: string; token: string }>(CLAIM, [token, Date.now()]).then(({ rows }) => (rows.length ? { id: Number(rows[0]!.id), token: rows[0]!.token } : null)),
  () => pool.end(),
);
