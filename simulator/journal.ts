// Every HTTP exchange of every virtual runner and of the runner console, newest kept, oldest
// pushed out: a ring buffer bounded by entry count, with bodies cut to a preview size.
import type { BodyPreview, JournalEntry, JournalQuery } from '../server/contract/simulator.ts';
import { secretsOf, type SecretLookup } from './journal-redact.ts';

/** Most tokens remembered from entries for redaction; the oldest learned are forgotten first. */
const MAX_LEARNED_SECRETS = 50_000;

export type NewEntry = Omit<JournalEntry, 'id'>;

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

export class Journal {
  private readonly ring: (JournalEntry | undefined)[];
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
    this.ring[this.head] = { id, ...e };
    this.head = (this.head + 1) % this.ring.length;
    return id;
  }

  get size(): number {
    return this.count;
  }

  /** Oldest first. */
  *all(): Generator<JournalEntry> {
    const start = (this.head - this.count + this.ring.length) % this.ring.length;
    for (let i = 0; i < this.count; i++) yield this.ring[(start + i) % this.ring.length]!;
  }

  get(id: number): JournalEntry | undefined {
    for (const e of this.all()) if (e.id === id) return e;
    return undefined;
  }

  /** The last `limit` entries that match, oldest first. */
  query(q: JournalQuery): JournalEntry[] {
    const match = matcher(q);
    const out: JournalEntry[] = [];
    for (const e of this.all()) if (match(e)) out.push(e);
    const limit = q.limit ?? 500;
    return out.length > limit ? out.slice(out.length - limit) : out;
  }

  /**
   * Tokens seen labelled anywhere in the entries held (a header, a "token" field, a register
   * answer), to hide them where they appear unlabelled. Learned when asked, not when recorded:
   * a fleet's requests pay nothing until someone reads the journal.
   */
  secrets(): SecretLookup {
    for (const e of this.all()) {
      if (e.id <= this.learnedUpTo) continue;
      for (const s of secretsOf(e)) {
        this.learned.delete(s);
        this.learned.add(s);
      }
      this.learnedUpTo = e.id;
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
    this.head = 0;
    this.count = 0;
    this.dropped = 0;
  }
}

function matcher(q: JournalQuery): (e: JournalEntry) => boolean {
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
