// A multipart/form-data parser of our own, for the one shape an artifacts upload has (a file part
// and a few small fields), pushed the request's chunks and calling back synchronously: the
// "own-direct" lever of docs/benchmark-bounds.md, "Artifact upload and download, 1 GiB". Built to
// the route's standard (busboy's limits and 4xx answers, strict header blocks in form-part-head.ts,
// test/bench/form-parser-differential.test.ts holding it against busboy on random and hostile
// bodies) and measured in the route: fed from 'data' events and handing the file's bytes straight
// to the upload sink, it did not move the 1 GiB upload toward 0.9× the bare node:http upload beyond
// noise, and in the bare server it cost the same CPU per GiB as @fastify/busboy. So the route keeps
// busboy and this stays here, for bench/reference/upload-server.ts (`?parser=own`, `own-direct`)
// and bench/experiments/multipart-parsers.ts. The boundary search is Buffer.indexOf over each chunk,
// a tail that may begin the delimiter carried into the next. Where it is stricter than busboy it
// refuses with a 400; it never reads a body differently from busboy.
import { tooLarge } from '../../server/http/errors.ts';
import { malformed, parseParams, parsePartHead, type PartHead } from './form-part-head.ts';

export interface FormLimits {
  /** Bytes of all file parts' content: over it, 413. */
  fileSize: number;
  files: number;
  fields: number;
  /** Bytes of one field's value: over it, 413. */
  fieldSize: number;
  parts: number;
  headerPairs: number;
  /** Bytes of one part's header block: over it, 400. */
  headerSize: number;
}

/** What the parser tells its user, in the body's order. Any of them may throw: the parse stops with that error. */
export interface FormEvents {
  field(name: string, value: string, head: PartHead): void;
  /** A file part starts (a filename, or Content-Type application/octet-stream, as busboy decides). */
  file(head: PartHead): void;
  /** Some of the current file part's bytes: `buf` may be the pushed chunk itself or a view of it. */
  fileData(buf: Buffer): void;
  fileEnd(): void;
}

const CR = 13;
const DASH = 45;
const CRLF = Buffer.from('\r\n');
const CRLF2 = Buffer.from('\r\n\r\n');

/** The boundary of a `multipart/form-data` Content-Type (1-70 printable ASCII characters, as a token or quoted), or undefined. */
export function formBoundary(contentType: string | undefined): string | undefined {
  const m = /^multipart\/form-data[ \t]*(;.*)?$/i.exec(contentType ?? '');
  if (!m) return undefined;
  let boundary;
  try {
    boundary = parseParams(m[1] ?? '').get('boundary');
  } catch {
    return undefined;
  }
  return boundary !== undefined && /^[\x20-\x7e]{1,70}$/.test(boundary) ? boundary : undefined;
}

type State = 'preamble' | 'head' | 'body' | 'end';

export class FormParser {
  private readonly delim: Buffer;
  private state: State = 'preamble';
  /** Bytes at the end of the last chunk that may begin a delimiter: a copy, as the chunk may be given back once written. */
  private carry: Buffer | null = CRLF; // the first delimiter may start the body, without a CRLF before it
  /** Leading bytes of the carry that are not data: a header block's last CRLF, kept only to see a delimiter that overlaps it. */
  private carrySkip = 2;
  private head: Buffer | null = null;
  private kind: 'file' | 'field' = 'field';
  private part: PartHead | null = null;
  private field: Buffer[] = [];
  private fieldBytes = 0;
  private fileBytes = 0;
  private counts = { parts: 0, files: 0, fields: 0 };
  private paused = false;
  /** The rest of a chunk not parsed yet because a callback paused the parser. */
  private held: Buffer | null = null;

  constructor(
    boundary: string,
    private readonly limits: FormLimits,
    private readonly on: FormEvents,
  ) {
    this.delim = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /** True once the closing delimiter was read (what follows it, an epilogue, is ignored). */
  get complete(): boolean {
    return this.state === 'end';
  }

  /** From inside a callback: parse no further until resume(); write() then returns false and keeps the chunk's rest. */
  pause(): void {
    this.paused = true;
  }

  /** Parses what a pause held back; returns false if a callback paused again. Throws as write() does. */
  resume(): boolean {
    this.paused = false;
    const held = this.held;
    this.held = null;
    return held ? this.write(held) : true;
  }

  /** Parses a chunk; throws an ApiError (400 malformed, 413 over a limit). False when a callback paused the parser. */
  write(chunk: Buffer): boolean {
    if (this.held) throw new Error('FormParser.write while paused: call resume() first');
    let pos = 0;
    while (pos < chunk.length && this.state !== 'end') {
      if (this.state === 'head') pos = this.readHead(chunk, pos);
      else {
        const after = this.scan(chunk, pos);
        if (after < 0) return !this.paused;
        this.endPart();
        this.state = 'head';
        this.head = null;
        pos = after;
      }
      if (this.paused) {
        if (pos < chunk.length) this.held = chunk.subarray(pos);
        return false;
      }
    }
    return true;
  }

  /** The body ended: refused unless the closing delimiter was read. */
  end(): void {
    if (this.state !== 'end') throw malformed('the body ended before the closing boundary (--boundary--)');
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
      // A delimiter that starts in the carry ends within the chunk's next d-1 bytes.
      const joint = Buffer.concat([carry, chunk.subarray(pos, pos + d.length - 1)]);
      const at = joint.indexOf(d);
      if (at >= 0) {
        // busboy drops a part whose delimiter shares its header block's last CRLF: refused here.
        if (at < skip && this.state === 'body') throw malformed('a part ends right after its headers: send an empty line (CRLF) after them, then its content');
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

  /** Hands on buf[from..] but the longest tail that begins the delimiter, which is kept; buf's first `skip` bytes are no data. */
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
    if (this.state !== 'body') return; // the preamble
    if (this.kind === 'file') {
      this.fileBytes += buf.length;
      if (this.fileBytes > this.limits.fileSize) throw tooLarge();
      this.on.fileData(buf);
      return;
    }
    this.fieldBytes += buf.length;
    if (this.fieldBytes > this.limits.fieldSize) throw tooLarge();
    this.field.push(Buffer.from(buf));
  }

  private endPart(): void {
    if (this.state !== 'body') return;
    const part = this.part!;
    this.part = null;
    if (this.kind === 'file') return this.on.fileEnd();
    const value = Buffer.concat(this.field).toString('utf8');
    this.field = [];
    this.fieldBytes = 0;
    this.on.field(part.name, value, part);
  }

  /** Reads what follows a delimiter: `--` (the end), or CRLF and a header block up to an empty line. */
  private readHead(chunk: Buffer, pos: number): number {
    const had = this.head?.length ?? 0;
    const head = this.head ? Buffer.concat([this.head, chunk.subarray(pos)]) : chunk.subarray(pos);
    if (head.length < 2) {
      this.head = Buffer.from(head);
      return chunk.length;
    }
    if (head[0] === DASH && head[1] === DASH) {
      this.state = 'end';
      return chunk.length;
    }
    const end = head.indexOf(CRLF2, Math.max(0, had - 3));
    // busboy drops a part whose header block a delimiter cuts short: refused here.
    const cut = head.indexOf(this.delim, Math.max(0, had - this.delim.length + 1));
    if (cut >= 0 && (end < 0 || cut < end)) throw malformed("a part's header block runs into the next boundary: end it with an empty line");
    if (end < 0) {
      if (head.length > this.limits.headerSize) throw malformed(`a part's headers are over ${this.limits.headerSize} bytes`);
      this.head = Buffer.from(head);
      return chunk.length;
    }
    if (end > this.limits.headerSize) throw malformed(`a part's headers are over ${this.limits.headerSize} bytes`);
    this.startPart(parsePartHead(head.toString('utf8', 0, end), this.limits.headerPairs));
    this.head = null;
    this.state = 'body';
    this.carry = CRLF;
    this.carrySkip = 2;
    return pos + end + CRLF2.length - had;
  }

  private startPart(head: PartHead): void {
    if (++this.counts.parts > this.limits.parts) throw tooLarge();
    this.part = head;
    if (head.filename !== undefined || head.mediaType === 'application/octet-stream') {
      if (++this.counts.files > this.limits.files) throw tooLarge();
      this.kind = 'file';
      this.on.file(head);
      return;
    }
    if (++this.counts.fields > this.limits.fields) throw tooLarge();
    // busboy decodes a field in its charset; this parser reads UTF-8 only.
    if (head.charset !== undefined && head.charset !== 'utf-8' && head.charset !== 'utf8') throw malformed(`send field "${head.name}" in UTF-8, not ${head.charset}`);
    this.kind = 'field';
  }
}
