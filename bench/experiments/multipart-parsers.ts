// Streaming multipart parsers against the bare node:http upload: the same chunked multipart upload
// (bench/artifacts.ts's `upload`) into bench/reference/upload-server.ts, plain (the body written as
// it is, no parsing) and with each parser in front of the same writes (`?parser=`). Every round
// runs each side once, preceded by bench/artifacts.ts's `settle`, in an order that rotates; per
// upload: MiB/s, its ratio to the plain upload of the same round, and the reference's CPU seconds.
// With --parse-only, no HTTP and no disk: the same body in fresh 64 KiB chunks fed to each parser
// in this process, the file's bytes counted from 'data' events; per side the CPU seconds per GiB
// ("plain" a Writable that only counts), the parsers' own cost without the disk's noise.
// "own" is bench/experiments/form-parser.ts with the file in a Readable, "own-direct" the same
// handing the file's bytes on without a stream.
// Parsers that are not the project's dependencies (busboy, formidable) are loaded from
// <parsers-dir>/node_modules: `npm install --prefix <parsers-dir> busboy formidable` first.
//   node --import tsx bench/experiments/multipart-parsers.ts <rounds> <parsers-dir> [--mib N] [--only a,b] [--parse-only]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { log, MiB, round, startChild } from '../lib/harness.ts';
import { settle, upload } from '../artifacts.ts';
import { cpuSeconds } from '../lib/proc-cpu.ts';
import { FormParser } from './form-parser.ts';

const argv = process.argv.slice(2);
const opt = (name: string) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv.splice(at, 2)[1] : undefined;
};
const mib = Number(opt('--mib') ?? 1024);
const only = opt('--only')?.split(',');
const parseOnly = argv.includes('--parse-only');
if (parseOnly) argv.splice(argv.indexOf('--parse-only'), 1);
const [rounds, parsersDir] = [Number(argv[0]), argv[1]];
if (!(rounds > 0) || !parsersDir) {
  console.error('usage: multipart-parsers.ts <rounds> <parsers-dir> [--mib N] [--only a,b]');
  process.exit(2);
}
process.env.JOBSCOPE_BENCH_PARSERS = path.resolve(parsersDir);
const sides = ['plain', ...(only ?? ['fastify-busboy', 'busboy', 'formidable', 'own-direct'])];
const size = mib * MiB;
const block = crypto.randomBytes(MiB);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
if (parseOnly) {
  await parseOnlyRounds();
  process.exit(0);
}
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-parsers-'));
const ref = await startChild(['--import', 'tsx', path.join(import.meta.dirname, '..', 'reference', 'upload-server.ts'), path.join(scratch, 'up')], /listening on (http:\/\/\S+)/, 'reference-upload');

type Row = { round: number; side: string; mibs: number; ratio: number; cpu_s: number; load: number };
const rows: Row[] = [];
try {
  for (let r = 0; r < rounds; r++) {
    const order = sides.map((_, i) => sides[(i + r) % sides.length]!);
    const load = round(os.loadavg()[0]!, 1);
    const got = new Map<string, { mibs: number; cpu: number }>();
    for (const side of order) {
      settle(scratch, 2 * size, block);
      const c0 = cpuSeconds(ref.pid);
      const secs = await upload(`${ref.url}/upload${side === 'plain' ? '' : `?parser=${side}`}`, 'x', size, block);
      got.set(side, { mibs: mib / secs, cpu: cpuSeconds(ref.pid) - c0 });
    }
    const plain = got.get('plain')!.mibs;
    for (const side of sides) {
      const g = got.get(side)!;
      const row = { round: r + 1, side, mibs: round(g.mibs, 0), ratio: round(g.mibs / plain), cpu_s: round(g.cpu), load };
      rows.push(row);
      log(`multipart-parsers: ${JSON.stringify(row)}`);
    }
  }
} finally {
  await ref.stop();
  fs.rmSync(scratch, { recursive: true, force: true });
}
const summary = sides.map((side) => {
  const mine = rows.filter((x) => x.side === side);
  const ratios = mine.map((x) => x.ratio);
  return { side, ratio_median: median(ratios), ratio_min: Math.min(...ratios), ratio_max: Math.max(...ratios), cpu_s_median: median(mine.map((x) => x.cpu_s)) };
});
console.log(JSON.stringify({ mib, rounds, summary, rows }, null, 2));

/** The --parse-only mode described above. */
async function parseOnlyRounds(): Promise<void> {
  const boundary = 'benchartifactsboundary7d1f';
  const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` };
  const chunk = block.subarray(0, 64 * 1024);
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.zip"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const feed = (w: NodeJS.WritableStream) => {
    const it = (function* () {
      yield Buffer.from(head);
      // A fresh copy per chunk, as the HTTP parser hands each piece of a body in a buffer of its own.
      for (let left = size; left > 0; left -= chunk.length) yield Buffer.from(chunk);
      yield Buffer.from(tail);
    })();
    const pump = () => {
      for (let x = it.next(); !x.done; x = it.next()) if (!w.write(x.value)) return void w.once('drain', pump);
      w.end();
    };
    pump();
  };
  type Events = NodeJS.WritableStream & { on(e: string, cb: (...a: never[]) => void): Events };
  const requireFrom = (dir: string) => createRequire(path.join(dir, 'x.js'));
  const fromMultipart = createRequire(createRequire(import.meta.url).resolve('@fastify/multipart'));
  const extra = requireFrom(path.join(path.resolve(parsersDir!), 'node_modules'));
  const counted = (parser: Events, done: string) =>
    new Promise<number>((resolve) => {
      let n = 0;
      parser.on('file', (_f: string, s: NodeJS.ReadableStream) => s.on('data', (c: Buffer) => (n += c.length)));
      parser.on(done, () => resolve(n));
      feed(parser);
    });
  const run: Record<string, () => Promise<number>> = {
    plain: () =>
      new Promise((resolve) => {
        let n = 0;
        const w = new Writable({ write: (c: Buffer, _e, cb) => ((n += c.length), cb()) });
        w.on('finish', () => resolve(n - head.length - tail.length));
        feed(w);
      }),
    'fastify-busboy': () => counted(new (fromMultipart('@fastify/busboy') as new (o: object) => Events)({ headers }), 'finish'),
    'fastify-busboy-1m': () => counted(new (fromMultipart('@fastify/busboy') as new (o: object) => Events)({ headers, highWaterMark: MiB, fileHwm: MiB }), 'finish'),
    busboy: () => counted((extra('busboy') as (o: object) => Events)({ headers }), 'close'),
    formidable: () =>
      new Promise((resolve) => {
        const { MultipartParser } = extra('formidable') as { MultipartParser: new () => Events & { initWithBoundary(b: string): void; resume(): void } };
        const p = new MultipartParser();
        p.initWithBoundary(boundary);
        let n = 0;
        p.on('data', (e: { name: string; start: number; end: number }) => void (e.name === 'partData' && (n += e.end - e.start)));
        p.on('end', () => resolve(n));
        feed(p);
      }),
    'own-direct': () =>
      new Promise((resolve, reject) => {
        let n = 0;
        const parser = new FormParser(boundary, { fileSize: Infinity, files: 1, fields: 50, fieldSize: MiB, parts: 60, headerPairs: 100, headerSize: 80 * 1024 }, {
          field: () => undefined,
          file: () => undefined,
          fileData: (c) => void (n += c.length),
          fileEnd: () => resolve(n),
        });
        feed(new Writable({ write: (c: Buffer, _e, cb) => (parser.write(c), cb()) }).on('error', reject));
      }),
  };
  const cpu = new Map<string, number[]>();
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < sides.length; i++) {
      const side = sides[(i + r) % sides.length]!;
      const c0 = process.cpuUsage();
      const n = await run[side]!();
      const c = process.cpuUsage(c0);
      if (n !== size) throw new Error(`${side} counted ${n} file bytes of ${size}`);
      cpu.set(side, [...(cpu.get(side) ?? []), round(((c.user + c.system) / 1e6) * (1024 / mib))]);
    }
  }
  const load = round(os.loadavg()[0]!, 1);
  console.log(JSON.stringify({ mib, rounds, load, cpu_s_per_gib: sides.map((side) => ({ side, median: median(cpu.get(side)!), all: cpu.get(side) })) }, null, 2));
}
