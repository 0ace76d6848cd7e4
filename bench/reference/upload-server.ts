// The bare reference for artifact uploads: a plain node:http server that writes a request's body to a
// new file with writev(2), one write in flight, and answers 201 once all of it is written. A write
// starts once 256 KiB are held and takes everything held: whatever arrived during the previous
// write, so on average ~0.8-1 MiB (strace -f: 274-327 writev per 256 MiB uploaded, against the
// server's 959 of ~270 KiB, WRITE_BATCH in server/store/artifacts.ts). The socket is paused with
// 1 MiB held behind a write and resumed after every write, as the server's upload sink does. No
// routing library, no multipart parsing (the body is the client's multipart body, boundaries and
// all, written as it is), no auth, no database, no fsync (the server fsyncs only with --fsync, off
// by default and in the bench): the floor of what "receive a body over HTTP into a file" costs in
// Node on this machine. Like the server, it unlinks a whole archive before it answers (its own;
// the server the one the upload replaced). Usage: upload-server.ts <dir>
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const BATCH = 256 * 1024;
const dir = process.argv[2]!;
fs.mkdirSync(dir, { recursive: true });
let seq = 0;

const server = http.createServer((req, res) => {
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
      req.resume();
      if (bytes >= BATCH || ended) flush();
    });
  };
  req.on('data', (c: Buffer) => {
    batch.push(c);
    bytes += c.length;
    total += c.length;
    // Backpressure like the real sink: about 1 MiB held while a batch is being written.
    if (writing && bytes >= 4 * BATCH) req.pause();
    if (bytes >= BATCH) flush();
  });
  req.on('end', () => {
    ended = true;
    flush();
  });
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${a.port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
