// Spare capacity is threads that may still take work. A quiet Sidekiq process (TSTP, or shutting
// down after TERM) fetches nothing more, so its threads are left out of capacity; its busy threads
// only finish what they hold, and are left out of utilization too, which would otherwise pass 100 %.
// One rule for the monitor's history and the dashboard's cards.

export interface ProcessLoad {
  busy: number;
  concurrency: number;
}

/** A sample as both sides hold it: processes, and (sidekiq connections) their details in the same order. */
export interface LoadSample {
  processes: readonly ProcessLoad[];
  sidekiq?: { process_details: readonly { quiet: boolean }[] };
}

export interface Capacity {
  /** Busy threads of the processes that take work. */
  busy: number;
  /** Threads of the processes that take work. */
  concurrency: number;
  /** Processes left out: quiet or stopping. */
  quiet: number;
}

export function capacityOf(s: LoadSample): Capacity {
  const details = s.sidekiq?.process_details;
  const out: Capacity = { busy: 0, concurrency: 0, quiet: 0 };
  s.processes.forEach((p, i) => {
    if (details?.[i]?.quiet) {
      out.quiet++;
      return;
    }
    out.busy += p.busy;
    out.concurrency += p.concurrency;
  });
  return out;
}
