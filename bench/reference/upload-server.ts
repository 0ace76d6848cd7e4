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
// `POST /upload?parser=<name>` does the same with another parser in front (PARSERS below):
// bench/experiments/multipart-parsers.ts compares them; parsers that are not the project's
// dependencies are loaded from the node_modules under $JOBSCOPE_BENCH_PARSERS.
// Usage: upload-server.ts <dir>
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { FormParser, formBoundary, type FormEvents } from '../experiments/form-parser.ts';

// The very busboy @fastify/multipart parses the server's uploads with (resolved from it, not from here).
const requireFromMultipart = createRequire(createRequire(import.meta.url).resolve('@fastify/multipart'));
const Busboy = requireFromMultipart('@fastify/busboy') as new (opts: { headers: http.IncomingHttpHeaders; highWaterMark?: number; fileHwm?: number }) => NodeJS.WritableStream & {
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

const fastifyBusboy = (req: http.IncomingMessage, res: http.ServerResponse, hwm?: number) => {
  const bb = new Busboy({ headers: req.headers, ...(hwm ? { highWaterMark: hwm, fileHwm: hwm } : {}) });
  bb.on('file', (_field, file) => receive(file, res));
  req.pipe(bb);
};

/** Feeds the request to our form parser; the bench's body is one file part and nothing else. */
function feedOwn(req: http.IncomingMessage, on: Omit<FormEvents, 'field'>): void {
  const parser = new FormParser(formBoundary(req.headers['content-type'])!, LIMITS, { ...on, field: () => undefined });
  req.on('data', (c: Buffer) => parser.write(c));
}

const requireExtra = () => createRequire(path.join(process.env.JOBSCOPE_BENCH_PARSERS ?? '.', 'node_modules', 'x.js'));
const LIMITS = { fileSize: Infinity, files: 1, fields: 50, fieldSize: 1024 * 1024, parts: 60, headerPairs: 100, headerSize: 80 * 1024 };

/** Each takes the request and hands its file part to `receive`. */
const PARSERS: Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void> = {
  'fastify-busboy': (req, res) => fastifyBusboy(req, res),
  // Its write side and file stream holding 1 MiB (HOLD in server/store/files/artifacts.ts) instead of
  // Node's default 16 KiB, below one 64 KiB socket chunk: does busboy's flow control stall the socket?
  'fastify-busboy-1m': (req, res) => fastifyBusboy(req, res, 1024 * 1024),
  busboy: (req, res) => {
    const busboy = requireExtra()('busboy') as (o: { headers: http.IncomingHttpHeaders }) => NodeJS.WritableStream & { on(e: 'file', cb: (f: string, s: Readable) => void): void };
    const bb = busboy({ headers: req.headers });
    bb.on('file', (_field, file) => receive(file, res));
    req.pipe(bb);
  },
  // formidable's own low-level parser: an object-mode Transform of part events; the file's bytes go
  // through a PassThrough to reach the same writes (one stream hop, as busboy's file stream is).
  formidable: (req, res) => {
    const { MultipartParser } = requireExtra()('formidable') as { MultipartParser: new () => NodeJS.ReadWriteStream & { initWithBoundary(b: string): void } };
    const parser = new MultipartParser();
    parser.initWithBoundary(formBoundary(req.headers['content-type'])!);
    const file = new PassThrough({ highWaterMark: 64 * 1024 });
    let headers = '';
    let inFile = false;
    let started = false;
    parser.on('data', ({ name, buffer, start, end }: { name: string; buffer: Buffer; start: number; end: number }) => {
      if (name === 'partBegin') headers = '';
      else if (name === 'headerValue') headers += buffer.toString('latin1', start, end);
      else if (name === 'headersEnd' && !started && /filename=/.test(headers)) {
        started = inFile = true;
        receive(file, res);
      } else if (name === 'partData' && inFile && !file.push(buffer.subarray(start, end))) req.pause();
      else if (name === 'partEnd' && inFile) {
        inFile = false;
        file.push(null);
      }
    });
    file.on('resume', () => req.resume());
    req.pipe(parser);
  },
  // Our parser (bench/experiments/form-parser.ts) with the file's bytes pushed into a Readable
  // that `receive` reads, the request paused while that stream is full: a stream hop, as busboy's.
  own: (req, res) => {
    const file = new Readable({ highWaterMark: 64 * 1024, read: () => req.resume() });
    feedOwn(req, { file: () => receive(file, res), fileData: (buf) => void (file.push(buf) || req.pause()), fileEnd: () => void file.push(null) });
  },
  // The same parser fed from the request's 'data' events, handing the file's bytes to `receive`
  // through a bare emitter whose pause and resume are the request's: no stream in between.
  'own-direct': (req, res) => {
    const file = Object.assign(new EventEmitter(), { pause: () => req.pause(), resume: () => req.resume() });
    feedOwn(req, { file: () => receive(file as unknown as Readable, res), fileData: (buf) => void file.emit('data', buf), fileEnd: () => void file.emit('end') });
  },
};

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.searchParams.has('multipart')) return fastifyBusboy(req, res);
  const parser = url.searchParams.get('parser');
  if (parser) return PARSERS[parser]!(req, res);
  receive(req, res);
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${a.port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
