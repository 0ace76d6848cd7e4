// The bare reference for artifact downloads: a plain node:http server that streams a file named by
// the query (`GET /download?file=<absolute path>`) with fs.createReadStream piped into the response,
// Content-Length set. No routing library, no auth, no database: the floor of what "send a file over
// HTTP" costs in Node on this machine. Reads of 1 MiB, as the server's (see STREAM_CHUNK in
// server/store/files/artifacts.ts): of 64 KiB, 256 KiB and 1 MiB reads, and 1 MiB reads into two reused
// buffers, 1 MiB read streams cost the least CPU here (256 MiB: 0.14-0.23 s against 0.39-0.89 s
// for 64 KiB), so the reference is the fastest plain way, not Node's default.
// Bench-only: it serves any path it is given. Usage: download-server.ts
import fs from 'node:fs';
import http from 'node:http';

const CHUNK = 1024 * 1024;

const server = http.createServer((req, res) => {
  const file = new URL(req.url ?? '/', 'http://x').searchParams.get('file');
  let size: number;
  try {
    size = fs.statSync(file ?? '').size;
  } catch {
    return void res.writeHead(404).end();
  }
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
  fs.createReadStream(file!, { highWaterMark: CHUNK }).pipe(res);
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${a.port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
