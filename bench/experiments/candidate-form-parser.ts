// The candidate measured by bench/experiments/multipart-parsers.ts: a multipart/form-data parser of
// our own for the one shape an artifacts upload has (a file part and a few small fields), to see
// whether it could take busboy's place in the route. It did not win: the same CPU per GiB as
// @fastify/busboy within noise (docs/benchmark-bounds.md, "Artifact upload and download"), since
// what both spend is the boundary search over every byte (Buffer.indexOf) and a stream hop per
// chunk. So the server keeps busboy and this stays here, only for the experiment to be run again.
// Differences from busboy seen in a differential test on random and hostile bodies: it refuses
// header blocks busboy reads leniently (bare LF, folded lines, over the size or pair limit, RFC 2231
// names), and it keeps a part whose body is absent (the delimiter sharing the header block's last
// CRLF), which busboy drops.
import { Readable, Writable } from 'node:stream';

export interface FormLimits {
  /** Bytes of one file part: over it the file stream fails with a 413. */
  fileSize: number;
  files: number;
  fields: number;
  /** Bytes of one field's value: over it the value is cut and `valueTruncated` set, as busboy does. */
  fieldSize: number;
  parts: number;
  headerPairs: number;
  headerSize: number;
}

export type FormPart =
  | { type: 'field'; fieldname: string; value: string; valueTruncated: boolean }
  | { type: 'file'; fieldname: string; filename: string | undefined; file: FormFile };

/** A file part's bytes. The form waits for it to be read (or resumed) before it reads on. */
export class FormFile extends Readable {
  bytesRead = 0;
  constructor(private readonly onRead: () => void) {
    super({ highWaterMark: 64 * 1024 });
    // A file nobody reads any more (skipped with resume()) may still fail with the form: not a crash.
    this.on('error', () => undefined);
  }
  override _read(): void {
    this.onRead();
  }
}

const limitError = (what: string) => new Error(`more ${what} than allowed`);
const malformed = (what: string) => new Error(what);
const CR = 13;
const DASH = 45;
const CRLF = Buffer.from('\r\n');
const CRLF2 = Buffer.from('\r\n\r\n');

/** The boundary of a multipart/form-data Content-Type, or undefined when there is none. */
export function formBoundary(contentType: string | undefined): string | undefined {
  const m = /^multipart\/form-data\s*;(?:.*;)?\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType ?? '');
  return m ? (m[1] ?? m[2]) : undefined;
}

type State = 'preamble' | 'head' | 'body' | 'end';

export class UploadForm extends Writable {
  private readonly delim: Buffer;
  private state: State = 'preamble';
  /** Bytes at the end of the last chunk that may begin a delimiter (a copy: the chunk may be released). */
  private carry: Buffer | null = CRLF; // the first delimiter has no CRLF before it
  /** Leading bytes of the carry that are not data: a CRLF that ended the line before, kept only
   *  because it may be the delimiter's own (a part with an empty body ends right after its headers). */
  private carrySkip = 2;
  private head: Buffer | null = null;
  private kind: 'file' | 'field' | 'skip' = 'skip';
  private file: FormFile | null = null;
  private field: { name: string; bufs: Buffer[]; size: number; truncated: boolean } | null = null;
  private counts = { parts: 0, files: 0, fields: 0 };
  /** The write callback held while the file's reader is full. */
  private held: (() => void) | null = null;
  private readonly queue: FormPart[] = [];
  private waiting: ((v: IteratorResult<FormPart>) => void) | null = null;
  private waitingFail: ((e: unknown) => void) | null = null;
  private failure: unknown = null;
  private done = false;

  constructor(
    boundary: string,
    private readonly limits: FormLimits,
    /** When given, the file part's bytes go here (null at its end) instead of through a FormFile:
     *  the "no stream between the socket and the writes" variant, fed with `parse` directly. */
    private readonly fileSink?: (buf: Buffer | null) => void,
  ) {
    super({ highWaterMark: 64 * 1024 });
    this.delim = Buffer.from(`\r\n--${boundary}`, 'latin1');
    // Errors reach the reader through parts(); the request piped in must not crash the process with them.
    this.on('error', (err) => this.fail(err));
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    try {
      this.parse(chunk);
    } catch (err) {
      return cb(err as Error);
    }
    if (this.file && this.file.readableLength >= this.file.readableHighWaterMark) this.held = () => cb();
    else cb();
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (this.state !== 'end') return cb(malformed('Unexpected end of multipart data'));
    this.finishParts();
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    const failure = err ?? malformed('the request ended early');
    if (this.file) this.file.destroy(failure);
    this.fail(failure);
    cb(err);
  }

  parse(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length && this.state !== 'end') {
      if (this.state === 'head') {
        pos = this.readHead(chunk, pos);
        continue;
      }
      const after = this.scan(chunk, pos);
      if (after < 0) return;
      this.endPart();
      this.state = 'head';
      this.head = null;
      pos = after;
    }
  }

  /**
   * Hands on the data before the next delimiter; returns the index just past the delimiter, or -1
   * when the chunk ended first (a tail that may begin the delimiter is kept for the next chunk).
   */
  private scan(chunk: Buffer, pos: number): number {
    const d = this.delim;
    if (this.carry) {
      const carry = this.carry;
      const skip = this.carrySkip;
      this.carry = null;
      this.carrySkip = 0;
      // A delimiter starting in the carry ends within its next d-1 bytes.
      const joint = Buffer.concat([carry, chunk.subarray(pos, pos + d.length - 1)]);
      const at = joint.indexOf(d);
      if (at >= 0) {
        if (at > skip) this.data(joint.subarray(skip, at));
        return pos + at + d.length - carry.length;
      }
      if (chunk.length - pos < d.length - 1) {
        this.keepTail(joint, 0, skip);
        return -1;
      }
      if (carry.length > skip) this.data(carry.subarray(skip));
    }
    const at = chunk.indexOf(d, pos);
    if (at >= 0) {
      if (at > pos) this.data(chunk.subarray(pos, at));
      return at + d.length;
    }
    this.keepTail(chunk, pos, 0);
    return -1;
  }

  /**
   * Hands on buf[from..] but the longest tail that is a start of the delimiter, which is kept; the
   * first `skip` bytes of buf are not data (the header block's last CRLF), only a possible delimiter start.
   */
  private keepTail(buf: Buffer, from: number, skip: number): void {
    const d = this.delim;
    let keep = 0;
    for (let i = buf.indexOf(CR, Math.max(from, buf.length - d.length + 1)); i >= 0; i = buf.indexOf(CR, i + 1)) {
      if (buf.compare(d, 0, buf.length - i, i) === 0) {
        keep = buf.length - i;
        break;
      }
    }
    const end = buf.length - keep;
    const start = Math.max(from, skip);
    if (end > start) this.data(start === 0 && end === buf.length ? buf : buf.subarray(start, end));
    if (keep) {
      this.carry = Buffer.from(buf.subarray(end));
      this.carrySkip = Math.max(0, skip - end);
    }
  }

  private data(buf: Buffer): void {
    if (this.state !== 'body') return;
    if (this.kind === 'file') {
      const file = this.file!;
      file.bytesRead += buf.length;
      if (file.bytesRead > this.limits.fileSize) throw limitError('file bytes');
      if (this.fileSink) this.fileSink(buf);
      else file.push(buf);
    } else if (this.kind === 'field') {
      const f = this.field!;
      if (f.truncated) return;
      const room = this.limits.fieldSize - f.size;
      if (buf.length > room) {
        f.truncated = true;
        buf = buf.subarray(0, room);
      }
      f.bufs.push(Buffer.from(buf));
      f.size += buf.length;
    }
  }

  private endPart(): void {
    if (this.state !== 'body') return;
    if (this.file) {
      if (this.fileSink) this.fileSink(null);
      else this.file.push(null);
      this.file = null;
    }
    if (this.field) {
      const f = this.field;
      this.field = null;
      this.emitPart({ type: 'field', fieldname: f.name, value: Buffer.concat(f.bufs).toString('utf8'), valueTruncated: f.truncated });
    }
  }

  /** Reads what follows a delimiter: `--` (the end) or padding, CRLF and a header block. */
  private readHead(chunk: Buffer, pos: number): number {
    const head = this.head ? Buffer.concat([this.head, chunk.subarray(pos)]) : chunk.subarray(pos);
    const had = this.head?.length ?? 0;
    if (head.length < 2) {
      this.head = Buffer.from(head);
      return chunk.length;
    }
    if (head[0] === DASH && head[1] === DASH) {
      this.state = 'end'; // what follows the last delimiter (an epilogue) is ignored, as RFC 2046 says
      this.finishParts();
      return chunk.length;
    }
    const end = head.indexOf(CRLF2, Math.max(0, had - 3));
    if (end < 0) {
      if (head.length > this.limits.headerSize) throw malformed(`a part's headers are over ${this.limits.headerSize} bytes`);
      this.head = Buffer.from(head);
      return chunk.length;
    }
    if (end > this.limits.headerSize) throw malformed(`a part's headers are over ${this.limits.headerSize} bytes`);
    this.startPart(head.toString('utf8', 0, end));
    this.head = null;
    this.state = 'body';
    this.carry = CRLF;
    this.carrySkip = 2;
    return pos + end + CRLF2.length - had;
  }

  private startPart(block: string): void {
    const lines = block.split('\r\n');
    // The delimiter line may end in spaces or tabs (RFC 2046's transport padding), nothing else.
    if (!/^[ \t]*$/.test(lines[0]!)) throw malformed('a boundary is followed by other text on its line');
    const headers = new Map<string, string>();
    if (lines.length - 1 > this.limits.headerPairs) throw malformed(`a part has more than ${this.limits.headerPairs} headers`);
    for (const line of lines.slice(1)) {
      const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\r\n]*?)[ \t]*$/.exec(line);
      if (!m) throw malformed('a part header is not a "Name: value" line');
      const name = m[1]!.toLowerCase();
      if (!headers.has(name)) headers.set(name, m[2]!);
    }
    if (++this.counts.parts > this.limits.parts) throw limitError('parts');
    const disposition = parseDisposition(headers.get('content-disposition'));
    const type = (headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (disposition.filename !== undefined || type === 'application/octet-stream') {
      if (++this.counts.files > this.limits.files) throw limitError('files');
      this.kind = 'file';
      this.file = new FormFile(() => this.resume());
      this.emitPart({ type: 'file', fieldname: disposition.name, filename: disposition.filename === undefined ? undefined : basename(disposition.filename), file: this.file });
    } else {
      if (++this.counts.fields > this.limits.fields) throw limitError('fields');
      this.kind = 'field';
      this.field = { name: disposition.name, bufs: [], size: 0, truncated: false };
    }
  }

  private resume(): void {
    const held = this.held;
    this.held = null;
    held?.();
  }

  private emitPart(part: FormPart): void {
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = this.waitingFail = null;
      w({ value: part, done: false });
    } else this.queue.push(part);
  }

  private finishParts(): void {
    this.done = true;
    if (this.waiting && this.queue.length === 0) {
      const w = this.waiting;
      this.waiting = this.waitingFail = null;
      w({ value: undefined, done: true });
    }
  }

  private fail(err: unknown): void {
    if (this.failure || this.done) return;
    this.failure = err;
    if (this.waitingFail) {
      const f = this.waitingFail;
      this.waiting = this.waitingFail = null;
      f(err);
    }
  }

  /** The parts in order; a field once its value is whole, a file as soon as its headers are read. */
  parts(): AsyncIterableIterator<FormPart> {
    const it: AsyncIterableIterator<FormPart> = {
      next: () => {
        const part = this.queue.shift();
        if (part) return Promise.resolve({ value: part, done: false });
        if (this.failure) return Promise.reject(this.failure);
        if (this.done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          this.waiting = resolve;
          this.waitingFail = reject;
        });
      },
      return: () => Promise.resolve({ value: undefined, done: true }),
      [Symbol.asyncIterator]: () => it,
    };
    return it;
  }
}

/** `form-data; name="…"; filename="…"`: a token or a quoted string (backslash escapes) per parameter. */
function parseDisposition(value: string | undefined): { name: string; filename?: string } {
  const m = value === undefined ? null : /^form-data[ \t]*(;.*)?$/i.exec(value);
  if (!m) throw malformed('a part has no "Content-Disposition: form-data" header');
  const out: { name?: string; filename?: string } = {};
  const param = /^;[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*=[ \t]*(?:"((?:[^"\\]|\\[\s\S])*)"|([!#$%&'*+.^_`|~0-9A-Za-z-]+))[ \t]*/;
  let rest = m[1] ?? '';
  while (rest !== '') {
    const p = param.exec(rest);
    if (!p) throw malformed('a Content-Disposition parameter is not name=value or name="value"');
    rest = rest.slice(p[0].length);
    const key = p[1]!.toLowerCase();
    const v = p[2] !== undefined ? p[2].replace(/\\([\s\S])/g, '$1') : p[3]!;
    if ((key === 'name' || key === 'filename') && out[key] === undefined) out[key] = v;
    else if (key.endsWith('*')) throw malformed('send the part names without RFC 2231 encoding');
  }
  if (out.name === undefined) throw malformed('a part has no name');
  return out as { name: string; filename?: string };
}

/** The last segment of a client's path, as busboy gives the file name. */
function basename(name: string): string {
  for (let i = name.length - 1; i >= 0; i--) {
    if (name[i] === '/' || name[i] === '\\') {
      const base = name.slice(i + 1);
      return base === '..' || base === '.' ? '' : base;
    }
  }
  return name === '..' || name === '.' ? '' : name;
}
