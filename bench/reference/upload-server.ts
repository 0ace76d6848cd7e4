// The bare reference for artifact uploads: a plain node:http server that writes a request's body to a
// new file with writev(2), one write in flight, and answers 201 once all of it is written. A write
// starts once 256 KiB are held and takes everything held: whatever arrived during the previous
// write, so on average ~0.8-1 MiB (strace -f: 274-327 writev per 256 MiB uploaded, against the
// server's 959 of ~270 KiB, WRITE_BATCH in server/store/files/artifacts.ts). The socket is paused with
// 1 MiB held behind a write and resumed after every write, as the server's upload sink does. No
// routing library, no multipart parsing (the body is the client's multipart body, boundaries and
// all, written as it is), no auth, no database, no fsync (the server fsyncs only with --fsync, off
// by default and in the bench): the floor of what "receive a body over HTTP into a file" costs in
// Node on this machine. Like the server, it unlinks a whole archive before it answers (its own;
// the server the one the upload replaced).
// `POST /upload?multipart` parses the body first with @fastify/busboy, the parser the server's
// route uses, and writes the file part the same way: the floor of a multipart upload, which is
// what a runner sends (a fairer reference for the server; the plain one is the goal).
// Usage: upload-server.ts <dir>
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Readable } from 'node:stream';

// The very busboy @fastify/multipart parses the server's uploads with (resolved from it, not from here).
const requireFromMultipart = createRequire(createRequire(import.meta.url).resolve('@fastify/multipart'));
const Busboy = requireFromMultipart('@fastify/busboy') as new (opts: { headers: http.IncomingHttpHeaders }) => NodeJS.WritableStream & {
  on(event: 'file', cb: (field: string, file: Readable) => void): void;
};

const BATCH = 256 * 1024;
const dir = process.argv[2]!;
fs.mkdirSync(dir, { recursive: true });
let seq = 0;

/** Writes `source` to a new file as described above, then answers 201 with its size. */
function receive(source: Readable, res: http.ServerResponse): void {
  const file = path.join(dir, `upload-${seq++}.bin`);
  const fd = fs.openSync(file, 'w');
  let batch: Buffer[] = [];
  let bytes = 0;
  let total = 0;
  let writing = false;
  let ended = false;
  const done = () => {
    fs.closeSync(fd);
    // Removed at once, as the benchmark removes every file it measures, so no round keeps pages of another.
    fs.rmSync(file);
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ size: total }));
  };
  const flush = () => {
    if (writing) return;
    if (bytes === 0) return void (ended && done());
    const bufs = batch;
    batch = [];
    bytes = 0;
    writing = true;
    fs.writev(fd, bufs, (err) => {
      writing = false;
      if (err) return void res.writeHead(507).end(String(err));
      source.resume();
      if (bytes >= BATCH || ended) flush();
    });
  };
  source.on('data', (c: Buffer) => {
    batch.push(c);
    bytes += c.length;
    total += c.length;
    // Backpressure like the real sink: about 1 MiB held while a batch is being written.
    if (writing && bytes >= 4 * BATCH) source.pause();
    if (bytes >= BATCH) flush();
  });
  source.on('end', () => {
    ended = true;
    flush();
  });
}

const server = http.createServer((req, res) => {
  if (!req.url?.includes('multipart')) return receive(req, res);
  const bb = new Busboy({ headers: req.headers });
  bb.on('file', (_field, file) => receive(file, res));
  req.pipe(bb);
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${a.port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
