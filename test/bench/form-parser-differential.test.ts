// The multipart parser of the own-direct lever (bench/experiments/form-parser.ts) against busboy
// (@fastify/busboy, which the server's routes use), on the same bodies cut into the same
// chunks. The rule: a body ours reads, busboy reads the same (same parts, names, file names, values,
// bytes, in the same order); a body busboy refuses, ours refuses; ours may refuse a body busboy reads
// only for one of the reasons in STRICTER below, each a place where busboy reads a doubtful body
// leniently (skips a part, renames it, keeps a truncated header). Well-formed bodies (random fields,
// files with boundary-like bytes in their data, quoted or bare boundaries, preambles and epilogues,
// cut at random points, and one body cut at every position) must be read alike by both, no refusal.
import { createRequire } from 'node:module';
import type { Readable, Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { Prng } from '../../common/prng.ts';
import { ApiError } from '../../server/http/errors.ts';
import { FormParser, formBoundary, type FormLimits } from '../../bench/experiments/form-parser.ts';

/** Where ours refuses what busboy reads, on purpose (message fragments of our 400s). */
const STRICTER: Record<string, string> = {
  'a boundary line is followed by other text': 'busboy skips such a part (its header block does not parse), whatever the text',
  'a part header is not one "Name: value" line': 'busboy stops reading headers at such a line (or folds it) and may skip the part',
  'a part has no Content-Disposition header': 'busboy skips the part',
  'Content-Disposition is not "form-data': 'busboy skips the part',
  'a part has no name': 'busboy gives a field named undefined',
  'Content-Type is not "type/subtype': 'busboy reads a media type out of any text, whitespace dropped',
  'a header parameter is not name=value': 'busboy reads unquoted junk after a quoted value, names with spaces in them',
  'RFC 2231': 'busboy decodes name*= in the named charset',
  'a header repeats its': 'busboy takes the last name=, and the first boundary=',
  'more than 100 header lines': 'busboy ignores the lines past its pair limit',
  "headers are over": 'busboy keeps the first 80 KiB of the block and drops the rest',
  'header block runs into the next boundary': 'busboy drops a part whose header block a delimiter cuts short',
  'a part ends right after its headers': 'busboy drops a part whose delimiter shares the header block\'s last CRLF',
  'in UTF-8, not': 'busboy decodes a field in its declared charset',
  'names no boundary': 'busboy takes a boundary over 70 characters, and one with separators ("(", "/", ":"…) unquoted',
};

const LIMITS: FormLimits = { fileSize: 64 * 1024, files: 1, fields: 8, fieldSize: 4096, parts: 12, headerPairs: 100, headerSize: 80 * 1024 };

type Part = { type: 'field'; name: string; value: string } | { type: 'file'; name: string; filename: string | undefined; data: string };
type Outcome = { ok: true; parts: Part[] } | { ok: false; status: number; message: string };

function ours(contentType: string, chunks: Buffer[]): Outcome {
  const boundary = formBoundary(contentType);
  if (boundary === undefined) return { ok: false, status: 400, message: 'the Content-Type names no boundary' };
  const parts: Part[] = [];
  let file: Buffer[] = [];
  const parser = new FormParser(boundary, LIMITS, {
    field: (name, value) => void parts.push({ type: 'field', name, value }),
    file: (head) => {
      file = [];
      parts.push({ type: 'file', name: head.name, filename: head.filename, data: '' });
    },
    // Copied: the parser hands on views of the chunk, which the test reuses.
    fileData: (buf) => void file.push(Buffer.from(buf)),
    fileEnd: () => void ((parts.at(-1) as { data: string }).data = Buffer.concat(file).toString('hex')),
  });
  try {
    for (const c of chunks) parser.write(c);
    parser.end();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { ok: false, status: err.status, message: err.message };
  }
  return { ok: true, parts };
}

const requireFromMultipart = createRequire(createRequire(import.meta.url).resolve('@fastify/multipart'));
type Busboy = Writable & {
  on(event: 'file', cb: (name: string, file: Readable & { truncated: boolean }, filename: string | undefined) => void): Busboy;
  on(event: 'field', cb: (name: string, value: string, nameTruncated: boolean, valueTruncated: boolean) => void): Busboy;
  on(event: string, cb: (...a: never[]) => void): Busboy;
};
const BusboyClass = requireFromMultipart('@fastify/busboy') as new (opts: object) => Busboy;

async function theirs(contentType: string, chunks: Buffer[]): Promise<Outcome> {
  let bb: Busboy;
  try {
    bb = new BusboyClass({ headers: { 'content-type': contentType }, limits: LIMITS });
  } catch (err) {
    return { ok: false, status: 400, message: (err as Error).message };
  }
  const parts: Part[] = [];
  const files: Promise<void>[] = [];
  let refused: Outcome | undefined;
  const refuse = (status: number, message: string) => void (refused ??= { ok: false, status, message });
  bb.on('field', (name, value, _nt, truncated) => {
    if (truncated) refuse(413, 'field over fieldSize');
    parts.push({ type: 'field', name, value });
  });
  bb.on('file', (name, stream, filename) => {
    const part: Part = { type: 'file', name, filename, data: '' };
    parts.push(part);
    const bufs: Buffer[] = [];
    stream.on('limit', () => refuse(413, 'file over fileSize'));
    files.push(
      new Promise<void>((resolve) => {
        stream.on('data', (b: Buffer) => bufs.push(b));
        stream.on('error', (e: Error) => (refuse(400, e.message), resolve()));
        stream.on('end', () => ((part.data = Buffer.concat(bufs).toString('hex')), resolve()));
      }),
    );
  });
  for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit']) bb.on(limit, () => refuse(413, limit));
  const done = new Promise<void>((resolve) => {
    bb.on('error', (e: Error) => (refuse(400, e.message), resolve()));
    bb.on('finish', () => resolve());
  });
  for (const c of chunks) bb.write(c);
  bb.end();
  await done;
  await Promise.all(files);
  return refused ?? { ok: true, parts };
}

/** Checks the rule above for one body; `wellFormed` bodies must also be read, by both. */
async function compare(contentType: string, chunks: Buffer[], wellFormed: boolean): Promise<void> {
  const a = ours(contentType, chunks);
  const b = await theirs(contentType, chunks);
  const where = `${contentType}\n${JSON.stringify(Buffer.concat(chunks).toString('latin1'))}\nchunks ${chunks.map((c) => c.length).join(',')}`;
  if (wellFormed) expect(a, where).toEqual(b);
  if (wellFormed) expect(a.ok, where).toBe(true);
  if (a.ok) return void expect(b, where).toEqual(a);
  if (!b.ok) return;
  // Ours refused what busboy read: only a 400 for a reason we chose.
  expect(a.status, `${where}\nours: ${a.message}`).toBe(400);
  expect(Object.keys(STRICTER).some((k) => a.message.includes(k)), `${where}\nours refused for a reason not listed: ${a.message}`).toBe(true);
}

// --- bodies ---

const BCHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=?";
const boundaryArb = fc.string({ unit: fc.constantFrom(...BCHARS), minLength: 1, maxLength: 70 });
const nameArb = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz_-0123456789é☃'), minLength: 1, maxLength: 12 });
const filenameArb = fc.oneof(fc.constant('artifacts.zip'), fc.string({ unit: fc.constantFrom(...'abc./\\ -_é'), maxLength: 16 }));

/** Data that looks like the delimiter in part: `\r\n--` and a prefix of the boundary, lone CRs, dashes, random bytes. */
function dataArb(boundary: string, maxLength: number) {
  const piece = fc.oneof(
    fc.uint8Array({ maxLength: 40 }).map((u) => Buffer.from(u)),
    fc.integer({ min: 0, max: boundary.length - 1 }).map((n) => Buffer.from(`\r\n--${boundary.slice(0, n)}`, 'latin1')),
    fc.constantFrom(...['\r', '\r\n', '\r\n-', '--', `--${boundary}`, `\r\n--${boundary.slice(0, -1)}x`, '\n--'].map((s) => Buffer.from(s, 'latin1'))),
  );
  return fc
    .array(piece, { maxLength: 12 })
    .map((p) => Buffer.concat(p).subarray(0, maxLength))
    // Not the delimiter, also not with the CRLF before the data (a header block's or a previous line's).
    .filter((d) => !Buffer.concat([Buffer.from('\r\n'), d]).includes(Buffer.from(`\r\n--${boundary}`, 'latin1')));
}

interface Body {
  contentType: string;
  body: Buffer;
}

/** A well-formed form: some fields, at most one file part, more fields, with a preamble and an epilogue. */
const formArb: fc.Arbitrary<Body> = boundaryArb.chain((boundary) => {
  const delim = Buffer.from(`\r\n--${boundary}`, 'latin1');
  const fieldArb = fc.record({
    name: nameArb,
    value: fc.oneof(fc.string({ maxLength: 30 }), dataArb(boundary, 200).map((d) => d.toString('latin1').replace(/[\x80-\xff]/g, '?'))).filter((v) => !`\r\n${v}`.includes(`\r\n--${boundary}`)),
    quoted: fc.boolean(),
    typed: fc.constantFrom(undefined, 'text/plain', 'text/plain; charset=utf-8'),
  });
  const fileArb = fc.record({ name: fc.constantFrom('file', 'archive'), filename: filenameArb, data: dataArb(boundary, 3000), typed: fc.boolean() });
  return fc
    .record({
      before: fc.array(fieldArb, { maxLength: 3 }),
      file: fc.option(fileArb),
      after: fc.array(fieldArb, { maxLength: 2 }),
      preamble: fc.oneof(fc.constant(''), fc.string({ maxLength: 20 }).map((s) => `${s}\r\n`)),
      epilogue: fc.constantFrom('', '\r\n', '\r\nepilogue text\r\n'),
      quotedBoundary: fc.boolean(),
      headerCase: fc.constantFrom('Content-Disposition', 'content-disposition', 'CONTENT-DISPOSITION'),
      filenameFirst: fc.boolean(),
    })
    .filter((f) => !Buffer.from(f.preamble, 'latin1').includes(delim) && !f.preamble.startsWith(`--${boundary}`))
    .map((f) => {
      const out: Buffer[] = [Buffer.from(f.preamble, 'latin1')];
      const head = (disposition: string, type?: string) =>
        Buffer.from(`--${boundary}\r\n${f.headerCase}: ${disposition}\r\n${type ? `Content-Type: ${type}\r\n` : ''}\r\n`, 'utf8');
      const field = (x: { name: string; value: string; quoted: boolean; typed?: string }) => {
        const name = x.quoted || !/^[a-z0-9_-]+$/.test(x.name) ? `"${x.name}"` : x.name;
        out.push(head(`form-data; name=${name}`, x.typed), Buffer.from(x.value, 'utf8'), Buffer.from('\r\n'));
      };
      f.before.forEach(field);
      if (f.file) {
        const name = `name="${f.file.name}"`;
        // Escaped as Go's mime/multipart does (the runner's): a backslash and a quote get a backslash.
        const filename = `filename="${f.file.filename.replace(/[\\"]/g, '\\$&')}"`;
        out.push(head(`form-data; ${f.filenameFirst ? `${filename}; ${name}` : `${name}; ${filename}`}`, f.file.typed ? 'application/octet-stream' : undefined), f.file.data, Buffer.from('\r\n'));
      }
      f.after.forEach(field);
      out.push(Buffer.from(`--${boundary}--${f.epilogue}`, 'latin1'));
      // A boundary with characters a token may not have ("(", "/", ":"…) must be quoted (RFC 2045).
      const b = f.quotedBoundary || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(boundary) ? `"${boundary}"` : boundary;
      return { contentType: `multipart/form-data; boundary=${b}`, body: Buffer.concat(out) };
    })
});

/** Cuts a body at random points (empty chunks included), as a socket may. */
function cutArb(body: Buffer): fc.Arbitrary<Buffer[]> {
  return fc.array(fc.integer({ min: 0, max: body.length }), { maxLength: 8 }).map((cuts) => {
    const at = [0, ...cuts.sort((x, y) => x - y), body.length];
    return at.slice(1).map((end, i) => body.subarray(at[i], end));
  });
}

/** Hostile changes to a well-formed body. */
const mutations: Record<string, (b: Body, rng: Prng) => Body> = {
  truncate: (b, r) => ({ ...b, body: b.body.subarray(0, r.int(0, b.body.length)) }),
  'drop a byte': (b, r) => {
    const i = r.int(0, Math.max(0, b.body.length - 1));
    return { ...b, body: Buffer.concat([b.body.subarray(0, i), b.body.subarray(i + 1)]) };
  },
  'insert bytes': (b, r) => {
    const i = r.int(0, b.body.length);
    const junk = Buffer.from(['\r\n', '\r\n\r\n', '--', ' ', '\t', ':', ';', '"', '\\', 'x'][r.int(0, 9)]!, 'latin1');
    return { ...b, body: Buffer.concat([b.body.subarray(0, i), junk, b.body.subarray(i)]) };
  },
  'LF line ends': (b) => ({ ...b, body: Buffer.from(b.body.toString('latin1').replaceAll('\r\n', '\n'), 'latin1') }),
  'huge header block': (b) => ({ ...b, body: Buffer.from(b.body.toString('latin1').replace(/(--[^\r\n]*\r\n)(Content-Disposition|content-disposition|CONTENT-DISPOSITION)/, `$1X-Pad: ${'p'.repeat(90 * 1024)}\r\n$2`), 'latin1') }),
  'many header lines': (b) => ({ ...b, body: Buffer.from(b.body.toString('latin1').replace(/(--[^\r\n]*\r\n)(Content-Disposition|content-disposition|CONTENT-DISPOSITION)/, `$1${'X-A: 1\r\n'.repeat(120)}$2`), 'latin1') }),
  'header block shares the delimiter CRLF': (b) => ({ ...b, body: Buffer.from(b.body.toString('latin1').replace(/\r\n\r\n[^\r]*\r\n--/, '\r\n\r\n--'), 'latin1') }),
  'padding after a boundary': (b) => ({ ...b, body: Buffer.from(b.body.toString('latin1').replace(/(--[^\r\n]+)\r\n(Content-D|content-d|CONTENT-D)/, '$1 \t\r\n$2'), 'latin1') }),
  'no final boundary': (b) => ({ ...b, body: Buffer.from(b.body.toString('latin1').replace(/--\s*(epilogue text\r\n)?$/, '\r\n').replace(/\r\n--[^\r\n]*--[\s\S]*$/, ''), 'latin1') }),
  'many parts': (b) => {
    const boundary = formBoundary(b.contentType)!;
    const more = Array.from({ length: 20 }, (_, i) => `--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv${i}\r\n`).join('');
    return { ...b, body: Buffer.concat([Buffer.from(more, 'latin1'), b.body]) };
  },
  'empty file part': (b) => {
    const boundary = formBoundary(b.contentType)!;
    return { ...b, body: Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="e.zip"\r\n\r\n\r\n--${boundary}--`, 'latin1') };
  },
  'odd disposition': (b, r) => {
    const forms = ['form-data;name="a";filename="b"', 'form-data; name="a"junk', 'form-data; name=a b', 'form-data; name="a"; name="b"', "form-data; name*=utf-8''a", 'form-data; name="a\\"b"; filename="c\\\\d\\e"', 'attachment; name="a"', 'form-data', 'FORM-DATA ; NAME = "x" ; FILENAME = "y"'];
    return { ...b, body: Buffer.from(b.body.toString('latin1').replace(/(Content-Disposition|content-disposition|CONTENT-DISPOSITION): [^\r\n]*/, `Content-Disposition: ${forms[r.int(0, forms.length - 1)]}`), 'latin1') };
  },
  'odd content type': (b, r) => {
    const boundary = formBoundary(b.contentType)!;
    const types = [`multipart/form-data;boundary=${boundary}`, `multipart/form-data; charset=utf-8; boundary="${boundary}"`, `multipart/form-data; boundary="${boundary}"; boundary=zz`, `Multipart/Form-Data; BOUNDARY=${boundary}`, 'multipart/form-data', `multipart/form-data; boundary="${boundary}`, `multipart/form-data; boundary=${'b'.repeat(71)}`];
    return { ...b, contentType: types[r.int(0, types.length - 1)]! };
  },
};

const hostileArb = fc.tuple(formArb, fc.constantFrom(...Object.keys(mutations)), fc.integer({ min: 1, max: 2 ** 31 - 1 })).chain(([form, how, seed]) => {
  const mutated = mutations[how]!(form, new Prng(seed));
  return cutArb(mutated.body).map((chunks) => ({ how, contentType: mutated.contentType, chunks }));
});

describe('our form parser against busboy', () => {
  test('well-formed forms, cut at random points: read alike, never refused', async () => {
    await fc.assert(
      fc.asyncProperty(formArb.chain((f) => cutArb(f.body).map((chunks) => ({ ...f, chunks }))), async ({ contentType, chunks }) => compare(contentType, chunks, true)),
      { numRuns: 400, seed: 20261128 },
    );
  });

  test('one form with boundary-like data, cut in two at every position and sent a byte at a time', async () => {
    const boundary = 'bf3a538cc72f76251a4b5f86ecdce3560ec521fc3b3eb6a6c05061630cf0';
    const data = Buffer.concat([Buffer.from(`\r\n--${boundary.slice(0, 30)}\r\r\n-\r\n--${boundary.slice(0, -1)}--`, 'latin1'), Buffer.alloc(50, 0x0d)]);
    const body = Buffer.concat([
      Buffer.from(`preamble\r\n--${boundary}\r\nContent-Disposition: form-data; name="token"\r\n\r\nabc\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="real-runner-artifacts.zip"\r\nContent-Type: application/octet-stream\r\n\r\n`, 'latin1'),
      data,
      Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="expire_in"\r\n\r\n\r\n--${boundary}--\r\n`, 'latin1'),
    ]);
    const contentType = `multipart/form-data; boundary=${boundary}`;
    const expected = ours(contentType, [body]);
    expect(expected).toEqual({
      ok: true,
      parts: [
        { type: 'field', name: 'token', value: 'abc' },
        { type: 'file', name: 'file', filename: 'real-runner-artifacts.zip', data: data.toString('hex') },
        { type: 'field', name: 'expire_in', value: '' },
      ],
    });
    for (let i = 0; i <= body.length; i++) await compare(contentType, [body.subarray(0, i), body.subarray(i)], true);
    await compare(contentType, Array.from(body, (byte) => Buffer.from([byte])), true);
  });

  test('hostile bodies: read alike, or refused by both, or refused by ours for a listed reason', async () => {
    await fc.assert(
      fc.asyncProperty(hostileArb, async ({ contentType, chunks }) => compare(contentType, chunks, false)),
      { numRuns: 600, seed: 20261128 },
    );
  });

  test('every mutation is drawn, and each listed stricter reason is met by some body', async () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(hostileArb, ({ how, contentType, chunks }) => {
        seen.add(how);
        const a = ours(contentType, chunks);
        if (!a.ok) for (const k of Object.keys(STRICTER)) if (a.message.includes(k)) seen.add(k);
      }),
      { numRuns: 1500, seed: 20261128 },
    );
    for (const how of Object.keys(mutations)) expect(seen, how).toContain(how);
    for (const reason of Object.keys(STRICTER)) expect(seen, reason).toContain(reason);
  });
});
