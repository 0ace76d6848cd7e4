// Recording the end of jobs taken from Redis (ack, retry later, kill), so that an outage loses no
// end and a retried write never counts twice:
// - one script per batch: for each job, LREM from the working list; ONLY if that removed the entry
//   are its counters added and its retry or dead entry written. A reply lost with the connection
//   (the write done, the answer never read) is retried, finds no entry and does nothing.
// - an end that fails because Redis is away stays pending (pending-ends.ts) and is retried; its job
//   keeps its slot and stays in the heartbeat's workers meanwhile, as it is still in the working list.
import type { JobCounters } from '../../jobs/types.ts';

export interface JobEnd {
  raw: string;
  counters: JobCounters;
  /** The retry or dead entry written with the end, if any. */
  set?: { key: 'retry' | 'dead'; score: number; payload: string; keep: number };
}

/** The END script's arguments after the head: 7 per end (see scripts/end.lua). */
export function endArgs(head: string[], batch: JobEnd[]): string[] {
  const args = [...head];
  for (const e of batch) {
    args.push(e.raw, String(e.counters.processed), String(e.counters.failed), e.set?.key ?? '', String(e.set?.score ?? 0), e.set?.payload ?? '', String(e.set?.keep ?? 0));
  }
  return args;
}
