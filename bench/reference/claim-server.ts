// The node:http side of the bare claim references (dispatch-server-sqlite.ts, pg-dispatch-server.ts):
// per POST it reads the runner's JSON body for its token, claims one build with `claim`, and answers
// 201 with JSON of about the size of a BuildDetails answer, 204 when none is left, 400 without a
// token, 500 with the error's message. It prints the listening line the bench waits for, and on
// SIGTERM closes the server, then runs `stop` and exits. A synchronous claim (SQLite) answers in the
// same turn: no promise a poll.
import http from 'node:http';

export interface Claimed {
  id: number;
  token: string;
}

const padding = 'x'.repeat(1200);

export function serveClaims(claim: (token: string) => Claimed | null | Promise<Claimed | null>, stop: () => unknown): void {
  const answer = (res: http.ServerResponse, row: Claimed | null) => {
    if (!row) return void res.writeHead(204).end();
    const body = JSON.stringify({ id: row.id, token: row.token, status: 'running', commands: padding });
    res.writeHead(201, { 'Content-Type': 'application/json' }).end(body);
  };
  const failed = (res: http.ServerResponse, err: Error) => res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ message: err.message }));
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
      let row: Claimed | null | Promise<Claimed | null>;
      try {
        row = claim(token);
      } catch (err) {
        return failed(res, err as Error);
      }
      if (row instanceof Promise) row.then((r) => answer(res, r), (err: Error) => failed(res, err));
      else answer(res, row);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const a = server.address() as { port: number };
    process.stdout.write(`listening on http://127.0.0.1:${a.port}\n`);
  });
  process.on('SIGTERM', () => {
    server.close(() => void Promise.resolve(stop()).finally(() => process.exit(0)));
    server.closeAllConnections();
  });
}
