// Every HTTP exchange of every virtual runner and of the runner console, newest kept, oldest
// pushed out: a ring buffer bounded by entry count, with bodies cut to a preview size.
import type { BodyPreview, JournalEntry, JournalQuery } from '../contract/simulator.ts';
import { secretsOf, type SecretLookup } from './journal-redact.ts';

/** Most tokens remembered from entries for redaction; the oldest learned are forgotten first. */
const MAX_LEARNED_SECRETS = 50_000;

/** A body as the client kept it: its first bytes and its whole size. */
export interface KeptBody {
  bytes: Buffer | undefined;
  size: number;
}

/** An exchange as recorded: its bodies as bytes; the previews of JournalEntry are made when read. */
export type NewEntry = Omit<JournalEntry, 'id' | 'request_body' | 'response_body'> & { request_body: KeptBody; response_body: KeptBody };
type Stored = NewEntry & { id: number };

/** Previews up to this size share slabs of SLAB bytes; a larger one has its own copy. */
const SLAB = 256 * 1024;
const EMPTY = Buffer.alloc(0);

export interface JournalOptions {
  capacity: number;
  /** Bytes of each request/response body kept for display, HAR and curl. */
  bodyBytes: number;
}

/** A body as the journal keeps it: text when it is valid UTF-8 without NULs, else base64. */
export function preview(body: Buffer | undefined, size: number, limit: number): BodyPreview {
  if (!body || body.length === 0) return { size, truncated: size > 0 };
  const cut = body.subarray(0, limit);
  const truncated = size > cut.length || body.length > cut.length;
  const text = cut.toString('utf8');
  // A cut may split a multi-byte character; that still counts as text.
  const isText = !cut.includes(0) && (Buffer.byteLength(text) === cut.length || truncated) && !text.slice(0, -3).includes('\ufffd');
  return isText ? { size, text, truncated } : { size, base64: cut.toString('base64'), truncated };
}

// Entries keep their bodies' first bytes, copied into slabs of their own, and turn them into text or
// base64 only when read: the previews a request were ~5 µs of the fleet's CPU, and as strings
// (two bytes a character for a job log's ✓) every scavenge copied them until they were old. Bytes in
// a slab are outside the JS heap, and a slab goes once its entries have (the ring drops the oldest
// first, in the order they were copied in).
export class Journal {
  private readonly ring: (Stored | undefined)[];
  private slab = EMPTY;
  private slabUsed = 0;
  private nextId = 1;
  private head = 0;
  private count = 0;
  dropped = 0;
  private readonly learned = new Set<string>();
  private learnedUpTo = 0;

  constructor(readonly opts: JournalOptions) {
    this.ring = new Array(Math.max(1, opts.capacity));
  }

  add(e: NewEntry): number {
    const id = this.nextId++;
    if (this.count === this.ring.length) this.dropped++;
    else this.count++;
    this.ring[this.head] = { id, ...e, request_body: this.keep(e.request_body), response_body: this.keep(e.response_body) };
    this.head = (this.head + 1) % this.ring.length;
    return id;
  }

  private keep(b: KeptBody): KeptBody {
    const n = Math.min(b.bytes?.length ?? 0, this.opts.bodyBytes);
    if (n === 0 || !b.bytes) return { bytes: undefined, size: b.size };
    if (n > SLAB / 8) return { bytes: Buffer.from(b.bytes.subarray(0, n)), size: b.size };
    if (this.slabUsed + n > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(SLAB);
      this.slabUsed = 0;
    }
    b.bytes.copy(this.slab, this.slabUsed, 0, n);
    const bytes = this.slab.subarray(this.slabUsed, this.slabUsed + n);
    this.slabUsed += n;
    return { bytes, size: b.size };
  }

  private entry(r: Stored): JournalEntry {
    const limit = this.opts.bodyBytes;
    return { ...r, request_body: preview(r.request_body.bytes, r.request_body.size, limit), response_body: preview(r.response_body.bytes, r.response_body.size, limit) };
  }

  get size(): number {
    return this.count;
  }

  private *stored(): Generator<Stored> {
    const start = (this.head - this.count + this.ring.length) % this.ring.length;
    for (let i = 0; i < this.count; i++) yield this.ring[(start + i) % this.ring.length]!;
  }

  /** Oldest first. */
  *all(): Generator<JournalEntry> {
    for (const r of this.stored()) yield this.entry(r);
  }

  get(id: number): JournalEntry | undefined {
    for (const r of this.stored()) if (r.id === id) return this.entry(r);
    return undefined;
  }

  /** The last `limit` entries that match, oldest first. */
  query(q: JournalQuery): JournalEntry[] {
    const match = matcher(q);
    const out: Stored[] = [];
    for (const r of this.stored()) if (match(r)) out.push(r);
    const limit = q.limit ?? 500;
    return (out.length > limit ? out.slice(out.length - limit) : out).map((r) => this.entry(r));
  }

  /**
   * Tokens seen labelled anywhere in the entries held (a header, a "token" field, a register
   * answer), to hide them where they appear unlabelled. Learned when asked, not when recorded:
   * a fleet's requests pay nothing until someone reads the journal.
   */
  secrets(): SecretLookup {
    for (const r of this.stored()) {
      if (r.id <= this.learnedUpTo) continue;
      for (const s of secretsOf(this.entry(r))) {
        this.learned.delete(s);
        this.learned.add(s);
      }
      this.learnedUpTo = r.id;
    }
    for (const s of this.learned) {
      if (this.learned.size <= MAX_LEARNED_SECRETS) break;
      this.learned.delete(s);
    }
    return this.learned;
  }

  clear(): void {
    this.learned.clear();
    this.ring.fill(undefined);
    this.slab = EMPTY;
    this.slabUsed = 0;
    this.head = 0;
    this.count = 0;
    this.dropped = 0;
  }
}

function matcher(q: JournalQuery): (e: Stored) => boolean {
  const method = q.method?.toUpperCase();
  const status = q.status?.trim().toLowerCase();
  const cls = status && /^[1-5]xx$/.test(status) ? Number(status[0]) : undefined;
  return (e) => {
    if (q.since_id !== undefined && e.id <= q.since_id) return false;
    if (q.runner && e.runner !== q.runner) return false;
    if (method && e.method !== method) return false;
    if (q.path && !e.path.includes(q.path)) return false;
    if (q.build_id !== undefined && e.build_id !== q.build_id) return false;
    if (q.fault === 'any' ? e.fault === null : q.fault && e.fault !== q.fault) return false;
    if (status) {
      if (cls !== undefined ? Math.floor(e.status / 100) !== cls : String(e.status) !== status) return false;
    }
    return true;
  };
}
