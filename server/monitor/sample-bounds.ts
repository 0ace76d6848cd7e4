// What one sample of a connection may store, whatever its kind (embedded, sidekiq, remote GitLab):
// a remote answers what it likes, and a sample lives on in the history's names, the saved latest
// sample and every /current answer. Applied where samples come in (read-source.ts), before they
// are stored; only on the way in, so rows stored before a bound was lowered still read back.
//
// A queue whose name is over the bound is left out and counted, never cut: the name is the key of
// its history series and of a peek, so a cut name would be another queue (two long names sharing a
// prefix would merge into one series, and a peek by it would find nothing). Process fields are
// only shown, so they are cut instead (with "…"), and processes past the bounds are counted.
import type { CompoundMetrics, ProcessEntry } from '../../contract/metrics.ts';
import type { Config } from '../config.ts';

export interface SampleBounds {
  /** Longest queue name stored, UTF-8 bytes; also the most bytes of each process field kept. */
  maxNameBytes: number;
  /** Most queues, and most processes, stored. */
  maxEntries: number;
  /** Most bytes of names and process fields stored in all. */
  maxBytes: number;
}

export const sampleBoundsOf = (config: Pick<Config, 'sampleMaxNameBytes' | 'sampleMaxEntries' | 'sampleMaxKib'>): SampleBounds => ({
  maxNameBytes: config.sampleMaxNameBytes,
  maxEntries: config.sampleMaxEntries,
  maxBytes: config.sampleMaxKib * 1024,
});

export interface Bounded<M> {
  metrics: M;
  /** Queues and processes the sample had but does not store. */
  queuesLeftOut: number;
  processesLeftOut: number;
}

/** UTF-8 bytes, without encoding a string that is clearly short enough. */
const bytes = (s: string, bound: number) => (s.length * 3 <= bound ? s.length : Buffer.byteLength(s));

/** `s` cut to at most `max` UTF-8 bytes (never inside a character), with "…" when cut. */
export function cutBytes(s: string, max: number): string {
  if (bytes(s, max) <= max) return s;
  const b = Buffer.from(s);
  let end = max - 3; // "…" is 3 bytes
  while (end > 0 && (b[end]! & 0xc0) === 0x80) end--;
  return `${b.subarray(0, end).toString()}…`;
}

/** A few bytes of numbers and punctuation per entry, so many empty names still meet the byte bound. */
const ENTRY_OVERHEAD = 32;

export function boundSample<M extends CompoundMetrics>(m: M, b: SampleBounds): Bounded<M> {
  let budget = b.maxBytes;
  const queues: CompoundMetrics['queues'] = {};
  let kept = 0;
  let queuesLeftOut = 0;
  for (const [name, q] of Object.entries(m.queues)) {
    const size = bytes(name, b.maxNameBytes);
    if (size > b.maxNameBytes || kept >= b.maxEntries || size + ENTRY_OVERHEAD > budget) {
      queuesLeftOut++;
      continue;
    }
    budget -= size + ENTRY_OVERHEAD;
    queues[name] = q;
    kept++;
  }
  const processes: ProcessEntry[] = [];
  for (const p of m.processes) {
    if (processes.length >= b.maxEntries) break;
    const cut = (s: string) => cutBytes(s, b.maxNameBytes);
    const small: ProcessEntry = { ...p, hostname: cut(p.hostname), tag: cut(p.tag), queues: p.queues.map(cut), labels: p.labels.map(cut) };
    const size = ENTRY_OVERHEAD + [small.hostname, small.tag, ...small.queues, ...small.labels].reduce((n, s) => n + bytes(s, 0) + 3, 0);
    if (size > budget) break;
    budget -= size;
    processes.push(small);
  }
  const processesLeftOut = m.processes.length - processes.length;
  const out = { ...m, queues, processes } as M;
  // A sidekiq sample's per-process details run parallel to its processes: cut alike.
  const extras = (m as { sidekiq?: { process_details?: { identity: string }[] } }).sidekiq;
  if (extras?.process_details) {
    (out as { sidekiq?: unknown }).sidekiq = {
      ...extras,
      process_details: extras.process_details.slice(0, processes.length).map((d) => ({ ...d, identity: cutBytes(d.identity, b.maxNameBytes) })),
    };
  }
  return { metrics: out, queuesLeftOut, processesLeftOut };
}
