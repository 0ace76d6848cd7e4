// A bound on every Redis reply, checked on the socket's bytes BEFORE ioredis's decoder sees them:
// it allocates what a header announces (`new Array(length)` for 2^31 elements, a 600 MB bulk string
// buffered whole, as redis-parser did before it), so a hostile or broken server could take the
// process's memory and event loop with one line. This scanner reads RESP2 headers only (a bulk string's body is skipped by its
// length, never looked at), counts the bytes and the elements of the reply in progress, and says
// stop as soon as a header announces, or the bytes so far reach, more than the bounds allow.
// Hand-written because no library exposes RESP framing without parsing (and allocating) the values.

export interface ReplyBounds {
  /** Most bytes of one reply (a whole pipeline is many replies: each is bounded alone). */
  maxBytes: number;
  /** Most elements of one reply, nested arrays counted in. */
  maxElements: number;
}

/** Why a reply was refused: what was too large and the setting that raises the bound. */
export class ReplyTooLarge extends Error {
  override readonly name = 'ReplyTooLarge';
}

const CR = 13;
const LF = 10;
const DOLLAR = 0x24;
const STAR = 0x2a;
const MINUS = 0x2d;
const ZERO = 0x30;

const mib = (n: number) => `${Math.round((n / 2 ** 20) * 10) / 10} MiB`;

export class ReplyScanner {
  /** Bytes of the reply in progress seen so far. */
  private bytes = 0;
  private elements = 0;
  /** Elements still expected by each open array, innermost last. */
  private readonly open: number[] = [];
  /** Body bytes (with their CRLF) of a bulk string still to skip. */
  private skip = 0;
  /** A header line cut by chunk boundaries: its pieces so far. */
  private partial: Uint8Array[] = [];

  constructor(private readonly bounds: ReplyBounds) {}

  /** Scans one chunk; a ReplyTooLarge when the reply in progress passes a bound, else null. */
  feed(chunk: Uint8Array): ReplyTooLarge | null {
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.skip > 0) {
        const take = Math.min(this.skip, n - i);
        this.skip -= take;
        this.bytes += take;
        i += take;
        if (this.skip === 0) this.itemDone();
        if (this.bytes > this.bounds.maxBytes) return this.tooManyBytes(this.bytes);
        continue;
      }
      const lf = chunk.indexOf(LF, i);
      if (lf < 0) {
        // A line without its end yet: kept until it ends; a line that never ends meets maxBytes.
        this.partial.push(chunk.subarray(i));
        this.bytes += n - i;
        if (this.bytes > this.bounds.maxBytes) return this.tooManyBytes(this.bytes);
        return null;
      }
      const start = i;
      this.bytes += lf + 1 - i;
      i = lf + 1;
      let err: ReplyTooLarge | null;
      if (this.partial.length) {
        const line = Buffer.concat([...this.partial, chunk.subarray(start, lf)]);
        this.partial = [];
        err = this.header(line, 0, line.length);
      } else err = this.header(chunk, start, lf);
      if (err) return err;
      if (this.bytes > this.bounds.maxBytes) return this.tooManyBytes(this.bytes);
    }
    return null;
  }

  /** One header line, `buf[from..to)` (a CR before `to` ignored): +simple, -error, :integer, $bulk length, *array count. */
  private header(buf: Uint8Array, from: number, to: number): ReplyTooLarge | null {
    const type = buf[from];
    if (type === DOLLAR || type === STAR) {
      // Digits read in place: this runs once per element of every reply, so no string is made.
      let len = 0;
      let negative = false;
      for (let k = from + 1; k < to; k++) {
        const c = buf[k]!;
        if (c === MINUS) negative = true;
        else if (c !== CR) len = len * 10 + (c - ZERO);
      }
      if (negative) len = -len;
      if (type === DOLLAR) {
        if (len > this.bounds.maxBytes) return this.tooManyBytes(len);
        if (len >= 0) {
          this.skip = len + 2;
          return null;
        }
      } else if (len > 0) {
        this.elements += len;
        if (this.elements > this.bounds.maxElements) {
          return new ReplyTooLarge(`a Redis reply announced ${this.elements} elements, past the bound of ${this.bounds.maxElements} (--redis-max-reply-elements raises it)`);
        }
        this.open.push(len);
        return null;
      }
    }
    this.itemDone();
    return null;
  }

  /** An item ended: it fills a slot of the innermost open array; a reply ends with its last slot. */
  private itemDone(): void {
    while (this.open.length) {
      const last = this.open.length - 1;
      if (--this.open[last]! > 0) return;
      this.open.pop();
    }
    this.bytes = 0;
    this.elements = 0;
  }

  private tooManyBytes(n: number): ReplyTooLarge {
    return new ReplyTooLarge(`a Redis reply of more than ${mib(Math.min(n, Number.MAX_SAFE_INTEGER))} was refused: the bound is ${mib(this.bounds.maxBytes)} (--redis-max-reply-mb raises it)`);
  }
}
